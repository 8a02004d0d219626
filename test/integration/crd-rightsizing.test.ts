import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fieldManager } from "../../api/keys.ts";
import {
  type Rightsizing,
  type RightsizingStatus,
  rightsizingCrd,
  rightsizingName,
} from "../../api/rightsizing.ts";
import { applyStatusIfUnchanged } from "../../kube/apply.ts";
import {
  type Clients,
  clusterClients,
  createTestNamespace,
  deleteTestNamespace,
  eventually,
} from "./cluster.ts";
import { installCrd, refusal, repoRoot } from "./crds.ts";

const run = promisify(execFile);
const crdPath = join(repoRoot, "manifests/crds/rightsizing.yaml");
const { group, version, plural } = rightsizingCrd;

/** Every field of the status, as the operator writes it. */
const fullStatus: RightsizingStatus = {
  observedGeneration: 1,
  modes: {
    cpu: {
      mode: "audit",
      requested: "auto-patch",
      source: "policy/web-tier",
      policy: "web-tier",
      degradedBy: ["insufficient-history", "in-place-resize-unavailable"],
    },
    memory: {
      mode: "auto-patch",
      requested: "auto-patch",
      source: "annotation",
      policy: "web-tier",
      overridden: {
        policy: "web-tier",
        reason: "in-place resize verified on these nodes (OPS-12)",
        checks: ["metrics-source-unhealthy"],
      },
    },
  },
  strategy: "in-place",
  matchedPolicies: ["web-tier", "everything"],
  containers: [
    {
      name: "app",
      current: { cpuRequest: "500m", memoryRequest: "512Mi", memoryLimit: "1Gi" },
      target: { cpuRequest: "300m", memoryRequest: "384Mi", memoryLimit: "768Mi" },
      lowerBound: { cpuRequest: "200m", memoryRequest: "256Mi", memoryLimit: "512Mi" },
      upperBound: { cpuRequest: "800m", memoryRequest: "640Mi", memoryLimit: "1Gi" },
      confidence: 0.85,
      state: "ok",
      historyHours: 192.5,
      reasons: ["cpu-percentile-of-decayed-usage", "memory-percentile-of-window-peaks"],
      checkpoint: '{"v":1,"at":1767225600000}',
    },
    {
      name: "sidecar",
      current: {},
      target: { cpuRequest: "10m", memoryRequest: "32Mi" },
      confidence: 0,
      state: "insufficient-history",
      historyHours: 3,
      reasons: ["insufficient-history"],
    },
  ],
  lastRun: "2026-11-02T10:00:00Z",
  historyThrough: "2026-11-02T09:59:30Z",
  conditions: [
    {
      type: "RecommendationReady",
      status: "False",
      lastTransitionTime: "2026-11-02T10:00:00Z",
      reason: "InsufficientHistory",
      message: "sidecar: 3h of history, 24h needed",
    },
    {
      type: "MetricsSourceHealthy",
      status: "True",
      lastTransitionTime: "2026-11-01T08:00:00Z",
      reason: "Answered",
      message: "Prometheus answered the last run",
    },
  ],
  notices: [{ reason: "RecommendationSkipped", value: "sidecar: insufficient history" }],
};

describe("the Rightsizing CRD", () => {
  let clients: Clients;
  let namespace: string;

  beforeAll(async () => {
    clients = clusterClients();
    await installCrd(clients, crdPath);
    namespace = await createTestNamespace(clients, "crd-rsz");
  });
  afterAll(async () => {
    if (clients && namespace) await deleteTestNamespace(clients, namespace);
  });

  const body = (name: string, spec: unknown) => ({
    apiVersion: rightsizingCrd.apiVersion,
    kind: rightsizingCrd.kind,
    metadata: { name },
    spec,
  });
  const create = (name: string, spec: unknown) =>
    clients.custom.createNamespacedCustomObject({
      group,
      version,
      plural,
      namespace,
      body: body(name, spec),
    }) as Promise<Rightsizing>;
  const read = (name: string) =>
    clients.custom.getNamespacedCustomObject({
      group,
      version,
      plural,
      namespace,
      name,
    }) as Promise<Rightsizing>;
  /** As the operator writes status: server-side apply to the status subresource. */
  const applyStatus = (name: string, status: RightsizingStatus) =>
    applyStatusIfUnchanged(
      clients.custom,
      rightsizingCrd,
      { apiVersion: rightsizingCrd.apiVersion, kind: rightsizingCrd.kind, metadata: { name, namespace } },
      status,
      fieldManager,
    );

  const kubectl = async (...args: string[]) => {
    const { binDir, kubeconfig } = clients.info;
    const { stdout } = await run(join(binDir, "kubectl"), [`--kubeconfig=${kubeconfig}`, ...args]);
    return stdout.trim();
  };

  it("accepts the cut name Napwake gives a workload too long for <name>.<kind>", async () => {
    const workload = `api-${"x".repeat(246)}`;
    const name = rightsizingName("Deployment", workload);
    const created = await create(name, { targetRef: { kind: "Deployment", name: workload } });
    expect(created.metadata.name).toBe(name);
  });

  it("accepts a Rightsizing named after its workload, with its whole status written through the subresource", async () => {
    const name = rightsizingName("Deployment", "web");
    expect(name).toBe("web.deployment");
    const created = await create(name, { targetRef: { kind: "Deployment", name: "web" } });
    expect(created.spec).toEqual({ targetRef: { kind: "Deployment", name: "web" } });

    // A status sent with the object is dropped; the status subresource keeps it, field for field.
    const replaced = (await clients.custom.replaceNamespacedCustomObject({
      group,
      version,
      plural,
      namespace,
      name,
      body: { ...created, status: fullStatus },
    })) as Rightsizing;
    expect(replaced.status).toBeUndefined();
    await applyStatus(name, fullStatus);
    expect((await read(name)).status).toEqual(fullStatus);
    expect((await read(name)).status).toEqual(fullStatus);
  });

  it("merges containers by name and conditions by type when status is applied again", async () => {
    const name = rightsizingName("StatefulSet", "db");
    await create(name, { targetRef: { kind: "StatefulSet", name: "db" } });
    await applyStatus(name, fullStatus);
    // Another field manager applies one container and one condition: the others stay, as map entries.
    const app = { name: "app", current: { cpuRequest: "1" }, state: "ok" as const };
    const ready = {
      type: "RecommendationReady",
      status: "True" as const,
      lastTransitionTime: "2026-11-03T10:00:00Z",
      reason: "Ready",
      message: "every container has a recommendation",
    };
    await applyStatusIfUnchanged(
      clients.custom,
      rightsizingCrd,
      { apiVersion: rightsizingCrd.apiVersion, kind: rightsizingCrd.kind, metadata: { name, namespace } },
      { containers: [app], conditions: [ready] },
      "napwake-test-second",
    );
    const merged = await read(name);
    expect(merged.status?.containers?.map((c) => c.name)).toEqual(["app", "sidecar"]);
    expect(merged.status?.containers?.[0]).toMatchObject({
      current: { cpuRequest: "1", memoryRequest: "512Mi" },
      target: { cpuRequest: "300m" },
    });
    expect(merged.status?.conditions?.map((c) => `${c.type}=${c.status}`)).toEqual([
      "RecommendationReady=True",
      "MetricsSourceHealthy=True",
    ]);
  });

  it.each([
    {
      case: "a target that is a Job",
      name: "backup.job",
      spec: { targetRef: { kind: "Job", name: "backup" } },
      message:
        /spec\.targetRef\.kind: Unsupported value: "Job": supported values: "Deployment", "StatefulSet"/,
    },
    {
      case: "a target without a name",
      name: "web.deployment",
      spec: { targetRef: { kind: "Deployment" } },
      message: /spec\.targetRef\.name is required: set it to the name of the Deployment or StatefulSet/,
    },
    {
      case: "a target without a kind",
      name: "web.deployment",
      spec: { targetRef: { name: "web" } },
      message: /spec\.targetRef\.kind is required: set it to Deployment or StatefulSet/,
    },
    {
      case: "no target",
      name: "web.deployment",
      spec: {},
      message: /spec\.targetRef is required: set it to the kind and name of the Deployment or StatefulSet/,
    },
    {
      case: "no spec",
      name: "web.deployment",
      spec: undefined,
      message: /spec is required: set spec\.targetRef to the Deployment or StatefulSet/,
    },
    {
      case: "a name that is not the target's",
      name: "frontend.deployment",
      spec: { targetRef: { kind: "Deployment", name: "web" } },
      message:
        /metadata\.name must be web\.deployment \(<spec\.targetRef\.name>\.<kind in lower case>\), not frontend\.deployment: name the Rightsizing after its workload/,
    },
    {
      case: "a name with the wrong kind",
      name: "db.deployment",
      spec: { targetRef: { kind: "StatefulSet", name: "db" } },
      message: /metadata\.name must be db\.statefulset .*not db\.deployment/,
    },
    {
      case: "a cut name without the kind, for a target too long for <name>.<kind>",
      name: `api-${"x".repeat(230)}-0123456789`,
      spec: { targetRef: { kind: "Deployment", name: `api-${"x".repeat(246)}` } },
      message: /a name too long for that is cut and ends in \.<kind>/,
    },
    {
      case: "a target name that is not a workload name",
      name: "Web.deployment",
      spec: { targetRef: { kind: "Deployment", name: "Web" } },
      message: /spec\.targetRef\.name must be the name of a Deployment or StatefulSet in this namespace/,
    },
  ])("refuses $case with a message naming the field and the fix", async ({ name, spec, message }) => {
    expect(await refusal(create(name, spec))).toMatch(message);
  });

  it("refuses a change of target and names the fix", async () => {
    const created = await create("cache.deployment", { targetRef: { kind: "Deployment", name: "cache" } });
    const change = clients.custom.replaceNamespacedCustomObject({
      group,
      version,
      plural,
      namespace,
      name: "cache.deployment",
      body: { ...created, spec: { targetRef: { kind: "StatefulSet", name: "cache" } } },
    });
    expect(await refusal(change)).toMatch(
      /spec\.targetRef is immutable: for another workload, delete this Rightsizing and create one named after that workload/,
    );
  });

  it("refuses a status out of range, as a guard on the operator's writes", async () => {
    await create("api.deployment", { targetRef: { kind: "Deployment", name: "api" } });
    const container = { name: "app", current: {}, confidence: 1.5 };
    expect(await refusal(applyStatus("api.deployment", { containers: [container] }))).toMatch(
      /status\.containers\[0\]\.confidence: Invalid value: 1\.5: .*less than or equal to 1/,
    );
  });

  it("shows kind, target, modes and readiness in kubectl get columns, and the mode sources with -o wide", async () => {
    await create("shown.deployment", { targetRef: { kind: "Deployment", name: "shown" } });
    await applyStatus("shown.deployment", fullStatus);
    const get = (...extra: string[]) =>
      kubectl(
        "get",
        "rsz",
        "--namespace",
        namespace,
        "--field-selector=metadata.name=shown.deployment",
        ...extra,
      );

    const [header, row] = (await get()).split("\n");
    expect(header?.split(/\s+/)).toEqual(["NAME", "KIND", "TARGET", "CPU", "MEMORY", "READY", "AGE"]);
    expect(row?.split(/\s+/).slice(0, 6)).toEqual([
      "shown.deployment",
      "Deployment",
      "shown",
      "audit",
      "auto-patch",
      "False",
    ]);

    const [wideHeader, wideRow] = (await get("--output=wide")).split("\n");
    expect(wideHeader?.split(/\s+/)).toEqual([
      "NAME",
      "KIND",
      "TARGET",
      "CPU",
      "MEMORY",
      "CPU-SOURCE",
      "MEMORY-SOURCE",
      "READY",
      "AGE",
    ]);
    expect(wideRow?.split(/\s+/).slice(5, 7)).toEqual(["policy/web-tier", "annotation"]);

    // `kubectl get napwake` lists every Napwake resource.
    expect(await kubectl("get", "napwake", "--namespace", namespace, "--output=name")).toContain(
      "rightsizing.napwake.dev/shown.deployment",
    );
  });

  it("explains its fields with kubectl explain", async () => {
    // The API server publishes a new CRD's OpenAPI a moment after it is Established.
    const explained = await eventually("kubectl explain rightsizing.status.containers.state", async () => {
      const text = await kubectl("explain", "rightsizing.status.containers.state").catch(() => "");
      return text.includes("insufficient-history") ? text : undefined;
    });
    expect(explained).toMatch(/GROUP:\s+napwake\.dev/);
    expect(explained).toMatch(/never\s+applied/);
    const modes = await kubectl("explain", "rsz.status.modes.cpu.source");
    expect(modes).toMatch(/policy\/<name>/);
    const top = await kubectl("explain", "rightsizing");
    expect(top).toMatch(/named\s+<workload>\.<kind\s+in\s+lower\s+case>/);
  });
});
