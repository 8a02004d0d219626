import { execFile } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fieldManager } from "../../api/keys.ts";
import { type RightsizingStatus, rightsizingCrd, rightsizingName } from "../../api/rightsizing.ts";
import type { WorkloadKind } from "../../api/rightsizingpolicy.ts";
import { applyStatusIfUnchanged } from "../../kube/apply.ts";
import { noRecommendationsMessage } from "../../plugin/recommendations.ts";
import { serviceAccountKubeconfig } from "../cluster/napwake-install.ts";
import { type Clients, clusterClients, createTestNamespace, deleteTestNamespace } from "./cluster.ts";
import { installCrd, repoRoot } from "./crds.ts";

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(file: string, args: string[], env: NodeJS.ProcessEnv): Promise<Run> {
  return new Promise((resolve, reject) => {
    execFile(file, args, { env, cwd: repoRoot, timeout: 60_000 }, (err, stdout, stderr) => {
      if (err && typeof err.code !== "number") return reject(err);
      resolve({ code: typeof err?.code === "number" ? err.code : 0, stdout, stderr });
    });
  });
}

const { group, version, plural } = rightsizingCrd;

const blockedCpu: RightsizingStatus["modes"] = {
  cpu: {
    mode: "audit",
    requested: "auto-patch",
    source: "policy/web-tier",
    policy: "web-tier",
    degradedBy: ["in-place-resize-unavailable"],
  },
  memory: { mode: "auto-patch", requested: "auto-patch", source: "policy/web-tier", policy: "web-tier" },
};
const audit: RightsizingStatus["modes"] = {
  cpu: { mode: "audit", requested: "audit", source: "global-default" },
  memory: { mode: "audit", requested: "audit", source: "global-default" },
};

describe("kubectl napwake recommendations on the real control plane", () => {
  let clients: Clients;
  /** Two namespaces with Rightsizings, and one without. */
  let shop: string;
  let billing: string;
  let empty: string;

  /** `node plugin/main.ts ...`, as the shim runs it, against the test cluster. */
  const plugin = (...args: string[]) =>
    run(process.execPath, [join(repoRoot, "plugin/main.ts"), ...args], {
      ...process.env,
      KUBECONFIG: clients.info.kubeconfig,
    });

  /** A Rightsizing as the operator makes it: created, then its status applied to the status subresource. */
  async function rightsizing(
    namespace: string,
    kind: WorkloadKind,
    workload: string,
    status?: RightsizingStatus,
  ) {
    const name = rightsizingName(kind, workload);
    await clients.custom.createNamespacedCustomObject({
      group,
      version,
      plural,
      namespace,
      body: {
        apiVersion: rightsizingCrd.apiVersion,
        kind: rightsizingCrd.kind,
        metadata: { name },
        spec: { targetRef: { kind, name: workload } },
      },
    });
    if (!status) return;
    await applyStatusIfUnchanged(
      clients.custom,
      rightsizingCrd,
      { apiVersion: rightsizingCrd.apiVersion, kind: rightsizingCrd.kind, metadata: { name, namespace } },
      status,
      fieldManager,
    );
  }

  beforeAll(async () => {
    clients = clusterClients();
    await installCrd(clients, join(repoRoot, "manifests/crds/rightsizing.yaml"));
    shop = await createTestNamespace(clients, "plugin-rsz");
    billing = await createTestNamespace(clients, "plugin-rsz");
    empty = await createTestNamespace(clients, "plugin-rsz");
    await rightsizing(shop, "Deployment", "web", {
      modes: blockedCpu,
      strategy: "in-place",
      matchedPolicies: ["web-tier"],
      containers: [
        {
          name: "sidecar",
          current: {},
          target: { cpuRequest: "10m", memoryRequest: "32Mi" },
          confidence: 0,
          state: "insufficient-history",
          historyHours: 3,
          reasons: ["insufficient-history"],
        },
        {
          name: "app",
          current: { cpuRequest: "500m", memoryRequest: "512Mi", memoryLimit: "1Gi" },
          target: { cpuRequest: "300m", memoryRequest: "384Mi", memoryLimit: "1126Mi" },
          lowerBound: { cpuRequest: "200m", memoryRequest: "256Mi", memoryLimit: "768Mi" },
          upperBound: { cpuRequest: "800m", memoryRequest: "640Mi", memoryLimit: "2Gi" },
          confidence: 0.9,
          state: "ok",
          historyHours: 240,
          reasons: ["cpu-percentile-of-decayed-usage", "memory-percentile-of-window-peaks"],
          checkpoint: '{"v":1}',
        },
      ],
      lastRun: "2026-11-02T10:00:00Z",
    });
    await rightsizing(shop, "StatefulSet", "db", { modes: audit });
    await rightsizing(billing, "Deployment", "invoices", {
      modes: audit,
      containers: [
        {
          name: "app",
          current: { cpuRequest: "1", memoryRequest: "1Gi" },
          target: { cpuRequest: "1500m", memoryRequest: "1Gi", memoryLimit: "1536Mi" },
          state: "ok",
          historyHours: 100,
          reasons: ["cpu-percentile-of-decayed-usage"],
        },
      ],
    });
  });
  afterAll(async () => {
    if (!clients) return;
    for (const namespace of [shop, billing, empty])
      if (namespace) await deleteTestNamespace(clients, namespace);
  });

  const shopTable = [
    "WORKLOAD         CONTAINER   CURRENT          RECOMMENDED        CHANGE           MODE                WHY",
    "deployment/web   app         500m/512Mi/1Gi   300m/384Mi/1.1Gi   -40%/-25%/+10%   audit*/auto-patch   cpu auto-patch blocked: in-place-resize-unavailable",
    "deployment/web   sidecar     -/-/-            10m/32Mi/-         new/new/-        audit*/auto-patch   insufficient history (3h)",
    "statefulset/db   -           -                -                  -                audit/audit         the recommender has not run yet",
    "",
  ].join("\n");

  it("shows one row per container of the namespace's Rightsizings, sorted", async () => {
    expect(await plugin("recommendations", "-n", shop)).toEqual({ code: 0, stdout: shopTable, stderr: "" });
  });

  it("runs as `kubectl napwake recommendations` from PATH", async () => {
    const result = await run("kubectl", ["napwake", "recommendations", "--namespace", shop], {
      PATH: `${join(repoRoot, "bin")}:${clients.info.binDir}`,
      KUBECONFIG: clients.info.kubeconfig,
      HOME: process.env.HOME,
    });
    expect(result).toEqual({ code: 0, stdout: shopTable, stderr: "" });
  });

  it.each([
    [["statefulset/db"], ["statefulset/db"]],
    [["deployment/web"], ["deployment/web", "deployment/web"]],
    [["db"], ["statefulset/db"]],
    [["web.deployment"], ["deployment/web", "deployment/web"]],
  ])("shows only the workload %j names", async (args, workloads) => {
    const result = await plugin("recommendations", ...args, "-n", shop);
    expect(result.code).toBe(0);
    const [header, ...rows] = result.stdout.trimEnd().split("\n");
    expect(header).toMatch(/^WORKLOAD\s+CONTAINER\s+CURRENT\s+RECOMMENDED\s+CHANGE\s+MODE\s+WHY$/);
    expect(rows.map((r) => r.split(/\s+/)[0])).toEqual(workloads);
  });

  it("adds a NAMESPACE column across all namespaces", async () => {
    const result = await plugin("recommendations", "-A");
    expect(result.code).toBe(0);
    const [header, ...rows] = result.stdout.trimEnd().split("\n");
    expect(header).toMatch(
      /^NAMESPACE\s+WORKLOAD\s+CONTAINER\s+CURRENT\s+RECOMMENDED\s+CHANGE\s+MODE\s+WHY$/,
    );
    // Other tests' namespaces may have Rightsizings too: only ours are asserted on.
    const ours = rows.map((r) => r.split(/\s+/)).filter(([ns]) => ns === shop || ns === billing);
    const expected = [
      [shop, "deployment/web", "app"],
      [shop, "deployment/web", "sidecar"],
      [shop, "statefulset/db", "-"],
      [billing, "deployment/invoices", "app"],
    ].sort((a, b) => (a[0] ?? "").localeCompare(b[0] ?? ""));
    expect(ours.map((cells) => cells.slice(0, 3))).toEqual(expected);
    const invoices = ours.find(([ns]) => ns === billing);
    expect(invoices?.slice(3)).toEqual([
      "1/1Gi/-",
      "1500m/1Gi/1.5Gi",
      "+50%/0%/new",
      "audit/audit",
      "cpu-percentile-of-decayed-usage",
    ]);
  });

  it("says why there is nothing to show for an empty namespace, with exit code 0", async () => {
    expect(await plugin("recommendations", "-n", empty)).toEqual({
      code: 0,
      stdout: "",
      stderr: noRecommendationsMessage(empty, null),
    });
  });

  it("says why a workload asked for by name has no Rightsizing, with exit code 1", async () => {
    expect(await plugin("recommendations", "deployment/nope", "-n", shop)).toEqual({
      code: 1,
      stdout: "",
      stderr: `error: ${noRecommendationsMessage(shop, { kind: "Deployment", name: "nope" })}`,
    });
  });

  it("refuses a workload of another kind with a message and exit code 1", async () => {
    const result = await plugin("recommendations", "job/backup", "-n", shop);
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('error: Napwake manages Deployments and StatefulSets, not "job"');
  });

  it("answers a usage error with usage and exit code 2", async () => {
    const result = await plugin("recommendations", "web", "db");
    expect(result.code).toBe(2);
    expect(result.stderr).toContain("error: recommendations takes at most one workload, got web db");
    expect(result.stderr).toContain("kubectl napwake recommendations [-n namespace | -A] [<workload>]");
  });

  it("says which verb and resource it may not use", async () => {
    // A ServiceAccount with no permission at all: the list of Rightsizings is refused.
    await clients.core.createNamespacedServiceAccount({
      namespace: empty,
      body: { metadata: { name: "nobody" } },
    });
    const dir = await mkdtemp(join(tmpdir(), "napwake-plugin-"));
    try {
      const kubeconfig = await serviceAccountKubeconfig({
        kc: clients.kc,
        namespace: empty,
        serviceAccount: "nobody",
        server: clients.kc.getCurrentCluster()?.server ?? "",
        caFile: clients.info.caCert,
        file: join(dir, "kubeconfig"),
        contextNamespace: shop,
        expirationSeconds: 600,
      });
      const result = await plugin("recommendations", "--kubeconfig", kubeconfig);
      expect(result.code).toBe(1);
      expect(result.stdout).toBe("");
      expect(result.stderr).toContain(
        `error: no permission to list rightsizings.napwake.dev in namespace ${shop}`,
      );
      expect(result.stderr).toContain(`kubectl auth can-i list rightsizings.napwake.dev -n ${shop}`);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});
