import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import { ApiextensionsV1Api, type KubernetesObject, loadYaml } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fieldManager } from "../../api/keys.ts";
import type { RightsizingPolicy } from "../../api/rightsizingpolicy.ts";
import { serverSideApply } from "../../kube/apply.ts";
import { type Clients, clusterClients, eventually } from "./cluster.ts";

const crdFile = new URL("../../manifests/crds/rightsizingpolicy.yaml", import.meta.url);
const group = "napwake.dev";
const version = "v1alpha1";
const plural = "rightsizingpolicies";

/** The API server's message for a refused object, or "accepted". */
async function create(clients: Clients, name: string, spec: unknown): Promise<string> {
  try {
    await clients.custom.createClusterCustomObject({
      group,
      version,
      plural,
      body: { apiVersion: `${group}/${version}`, kind: "RightsizingPolicy", metadata: { name }, spec },
    });
    return "accepted";
  } catch (err) {
    const body = (err as { body?: unknown }).body;
    const parsed = typeof body === "string" ? (JSON.parse(body) as { message?: string }) : undefined;
    return parsed?.message ?? String(err);
  }
}

describe("RightsizingPolicy CRD", () => {
  let clients: Clients;
  const suffix = randomBytes(3).toString("hex");
  const created: string[] = [];
  const name = (n: string) => {
    const full = `${n}-${suffix}`;
    created.push(full);
    return full;
  };

  beforeAll(async () => {
    clients = clusterClients();
    // loadYaml, not a plain YAML parse: the client's serializer drops keys it does not map
    // (x-kubernetes-validations, default) from plain objects.
    const crd = loadYaml<KubernetesObject>(await readFile(crdFile, "utf8"));
    await serverSideApply(clients.objects, [crd], fieldManager, { force: true });
    const extensions = clients.kc.makeApiClient(ApiextensionsV1Api);
    await eventually("the RightsizingPolicy CRD Established", async () => {
      const current = await extensions.readCustomResourceDefinition({
        name: "rightsizingpolicies.napwake.dev",
      });
      return current.status?.conditions?.some((c) => c.type === "Established" && c.status === "True")
        ? true
        : undefined;
    });
  });
  afterAll(async () => {
    for (const n of created) {
      await clients.custom
        .deleteClusterCustomObject({ group, version, plural, name: n })
        .catch(() => undefined);
    }
  });

  it("accepts a full policy and fills in the defaults", async () => {
    const policyName = name("full");
    expect(
      await create(clients, policyName, {
        selector: {
          namespaceSelector: { matchExpressions: [{ key: "team", operator: "In", values: ["payments"] }] },
          workloadSelector: { matchLabels: { tier: "web" } },
          kinds: ["Deployment"],
        },
        cpu: { mode: "audit", min: "50m", max: "4", maxChangePercent: 25 },
        memory: { mode: "auto-patch", min: "64Mi", max: "8Gi" },
        autoPatchOverride: { reason: "in-place resize verified on these nodes (OPS-12)" },
      }),
    ).toBe("accepted");
    const policy = (await clients.custom.getClusterCustomObject({
      group,
      version,
      plural,
      name: policyName,
    })) as RightsizingPolicy;
    expect(policy.spec.priority).toBe(0);
    expect(policy.spec.strategy).toEqual({ type: "in-place" });
  });

  it("accepts bounds written as bare numbers, as YAML reads `max: 4`", async () => {
    expect(
      await create(clients, name("numbers"), {
        selector: {},
        cpu: { mode: "audit", min: 1, max: 4 },
        memory: { mode: "audit", max: 8589934592 },
      }),
    ).toBe("accepted");
  });

  it("accepts a deferred strategy with a maintenance window, defaulting its time zone to UTC", async () => {
    const policyName = name("deferred");
    expect(
      await create(clients, policyName, {
        selector: {},
        memory: { mode: "auto-patch" },
        strategy: { type: "deferred", maintenanceWindow: { schedule: "0 2 * * 6", duration: "2h" } },
      }),
    ).toBe("accepted");
    const policy = (await clients.custom.getClusterCustomObject({
      group,
      version,
      plural,
      name: policyName,
    })) as RightsizingPolicy;
    expect(policy.spec.strategy?.maintenanceWindow?.timeZone).toBe("UTC");
  });

  const window = { schedule: "0 2 * * 6", duration: "2h" };
  it.each<[string, unknown, string]>([
    ["neither cpu nor memory", { selector: {} }, "set spec.cpu or spec.memory (or both)"],
    [
      "cpu.min above cpu.max, compared as quantities",
      { selector: {}, cpu: { mode: "audit", min: "1500m", max: "1" } },
      "cpu.min must not be larger than cpu.max: lower cpu.min or raise cpu.max",
    ],
    [
      "memory.min above memory.max across units",
      { selector: {}, memory: { mode: "audit", min: "2Gi", max: "1000Mi" } },
      "memory.min must not be larger than memory.max",
    ],
    [
      "a quantity that is not one",
      { selector: {}, memory: { mode: "audit", max: "lots" } },
      "memory.max must be a Kubernetes quantity such as 8Gi or 512Mi",
    ],
    [
      "a zero bound",
      { selector: {}, cpu: { mode: "audit", min: "0" } },
      "cpu.min must be greater than zero: omit it for no lower bound",
    ],
    [
      "a zero bound written as a number",
      { selector: {}, memory: { mode: "audit", max: 0 } },
      "memory.max must be greater than zero: omit it for no upper bound",
    ],
    [
      "cpu.min above cpu.max, one written as a number",
      { selector: {}, cpu: { mode: "audit", min: 2, max: "1500m" } },
      "cpu.min must not be larger than cpu.max: lower cpu.min or raise cpu.max",
    ],
    [
      "maxChangePercent out of range",
      { selector: {}, cpu: { mode: "audit", maxChangePercent: 0 } },
      "cpu.maxChangePercent must be between 1 and 100",
    ],
    ["an unknown mode", { selector: {}, cpu: { mode: "on" } }, 'spec.cpu.mode: Unsupported value: "on"'],
    [
      "deferred without a maintenance window",
      { selector: {}, cpu: { mode: "audit" }, strategy: { type: "deferred" } },
      "strategy.maintenanceWindow is required when strategy.type is deferred",
    ],
    [
      "a maintenance window without deferred",
      { selector: {}, cpu: { mode: "audit" }, strategy: { type: "rollout", maintenanceWindow: window } },
      "strategy.maintenanceWindow is only used with strategy.type deferred",
    ],
    [
      "a schedule that is not five cron fields",
      {
        selector: {},
        cpu: { mode: "audit" },
        strategy: { type: "deferred", maintenanceWindow: { ...window, schedule: "@daily" } },
      },
      "strategy.maintenanceWindow.schedule must be a five-field cron expression",
    ],
    [
      "a duration that is not one",
      {
        selector: {},
        cpu: { mode: "audit" },
        strategy: { type: "deferred", maintenanceWindow: { ...window, duration: "2 hours" } },
      },
      "strategy.maintenanceWindow.duration must be a duration such as 2h, 90m or 1h30m",
    ],
    [
      "a window longer than a week",
      {
        selector: {},
        cpu: { mode: "audit" },
        strategy: { type: "deferred", maintenanceWindow: { ...window, duration: "200h" } },
      },
      "strategy.maintenanceWindow.duration must be between 1m and 168h",
    ],
    [
      "an override without a reason",
      { selector: {}, cpu: { mode: "auto-patch" }, autoPatchOverride: { reason: "   " } },
      "autoPatchOverride.reason must say why the readiness checks are overridden",
    ],
    [
      "In without values",
      {
        selector: { workloadSelector: { matchExpressions: [{ key: "app", operator: "In" }] } },
        cpu: { mode: "audit" },
      },
      "operator In and NotIn need at least one entry in values",
    ],
    [
      "Exists with values",
      {
        selector: {
          namespaceSelector: { matchExpressions: [{ key: "app", operator: "Exists", values: ["x"] }] },
        },
        cpu: { mode: "audit" },
      },
      "operator Exists and DoesNotExist take no values: remove values",
    ],
    [
      "an unknown kind",
      { selector: { kinds: ["CronJob"] }, cpu: { mode: "audit" } },
      'Unsupported value: "CronJob"',
    ],
  ])("refuses %s, saying which field and how to fix it", async (_, spec, message) => {
    expect(await create(clients, name(`bad-${created.length}`), spec)).toContain(message);
  });
});
