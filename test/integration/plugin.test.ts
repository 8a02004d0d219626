import { execFile } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { RbacAuthorizationV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { managedWorkloadCrd } from "../../api/managedworkload.ts";
import type { ManagedWorkloadController } from "../../controllers/managedworkload/controller.ts";
import { serviceAccountKubeconfig } from "../cluster/napwake-install.ts";
import {
  type Clients,
  clusterClients,
  createTestNamespace,
  deleteTestNamespace,
  eventually,
} from "./cluster.ts";
import { repoRoot } from "./crds.ts";
import {
  installManagedWorkloadCrd,
  managedWorkload,
  managedWorkloadApi,
  readManagedWorkload,
  shiftedClock,
  startController,
} from "./operator-support.ts";
import { httpDeployment } from "./workloads.ts";

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

describe("the kubectl plugin on the real control plane", () => {
  let clients: Clients;
  let namespace: string;
  let controller: ManagedWorkloadController;
  const clock = shiftedClock();

  /** `node plugin/main.ts ...`, as the shim runs it, against the test cluster. */
  const plugin = (...args: string[]) =>
    run(process.execPath, [join(repoRoot, "plugin/main.ts"), ...args], {
      ...process.env,
      KUBECONFIG: clients.info.kubeconfig,
    });

  const replicas = async () =>
    (await clients.apps.readNamespacedDeployment({ namespace, name: "web" })).spec?.replicas;

  beforeAll(async () => {
    clients = clusterClients();
    await installManagedWorkloadCrd(clients);
    namespace = await createTestNamespace(clients, "plugin");
    controller = await startController(clients, clock);
    for (const name of ["web", "api"]) {
      await clients.apps.createNamespacedDeployment({
        namespace,
        body: httpDeployment({ namespace, name, replicas: 3, cpu: "5m" }),
      });
    }
    // A long idle window: only the plugin's requests pause or resume it during the test.
    await clients.custom.createNamespacedCustomObject({
      ...managedWorkloadApi,
      namespace,
      body: managedWorkload(namespace, "web.deployment", "web", { idle: { window: "24h" } }),
    });
    await eventually("the workload is seen awake", async () =>
      (await readManagedWorkload(clients, namespace, "web.deployment")).status?.phase === "Awake"
        ? true
        : undefined,
    );
  });
  afterAll(async () => {
    await controller?.stop();
    if (clients && namespace) await deleteTestNamespace(clients, namespace);
  });

  it("runs as `kubectl napwake` from PATH and shows the workload Awake", async () => {
    const status = await run("kubectl", ["napwake", "status", "-n", namespace], {
      PATH: `${join(repoRoot, "bin")}:${clients.info.binDir}`,
      KUBECONFIG: clients.info.kubeconfig,
      HOME: process.env.HOME,
    });
    expect(status).toMatchObject({ code: 0, stderr: "" });
    const [header, row] = status.stdout.trimEnd().split("\n");
    expect(header).toMatch(/^NAME\s+TARGET\s+PHASE\s+REASON\s+REPLICAS\s+IDLE FOR\s+PAUSED SINCE\s+FORECAST/);
    expect(row).toMatch(/^web\.deployment\s+deployment\/web\s+Awake\s+\S+\s+3\s/);
  });

  it("measures ages by the cluster's clock, not by a local clock two days ahead", async () => {
    const twoDaysAhead = "data:text/javascript,const now=Date.now;Date.now=()=>now()+172800000;";
    const status = await run(
      process.execPath,
      ["--import", twoDaysAhead, join(repoRoot, "plugin/main.ts"), "status", "-n", namespace, "-o", "json"],
      { ...process.env, KUBECONFIG: clients.info.kubeconfig },
    );
    expect(status).toMatchObject({ code: 0 });
    const rows = JSON.parse(status.stdout) as { name: string; idleForSeconds: number | null }[];
    const web = rows.find((r) => r.name === "web.deployment");
    expect(web?.idleForSeconds).toBeGreaterThanOrEqual(0);
    expect(web?.idleForSeconds).toBeLessThan(12 * 3600);
  });

  it("pauses and resumes through the controller, and status shows the held replicas", async () => {
    const pause = await plugin("pause", "deployment/web", "-n", namespace);
    expect(pause).toEqual({
      code: 0,
      stdout:
        "deployment/web will be paused at the next reconcile (replicas 3 → 0), whatever the forecast says; new activity (a napwake.dev/last-request or napwake.dev/activity stamp on it, an active activity query) or kubectl napwake resume wakes it, not the forecast\n",
      stderr: "",
    });
    await eventually("the controller pauses web to zero", async () =>
      (await replicas()) === 0 ? true : undefined,
    );
    const paused = await eventually("status shows it Paused with 3 held", async () => {
      const status = await plugin("status", "-n", namespace);
      return /\sPaused\s+Requested\s+0 \(3 held\)\s/.test(status.stdout) ? status : undefined;
    });
    expect(paused.code).toBe(0);

    const again = await plugin("pause", "web", "-n", namespace);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("web is already paused (0 replicas, 3 held)");

    const json = await plugin("status", "-n", namespace, "-o", "json");
    expect(JSON.parse(json.stdout)).toEqual([
      expect.objectContaining({
        namespace,
        name: "web.deployment",
        target: "deployment/web",
        phase: "Paused",
        replicas: 0,
        heldReplicas: 3,
      }),
    ]);

    // By the ManagedWorkload's own name this time.
    const resume = await plugin("resume", "web.deployment", "-n", namespace);
    expect(resume).toEqual({
      code: 0,
      stdout: "deployment/web will be resumed at the next reconcile (replicas 0 → 3)\n",
      stderr: "",
    });
    await eventually("the controller resumes web to exactly 3", async () =>
      (await replicas()) === 3 ? true : undefined,
    );
    await eventually("status shows it Awake with 3 replicas", async () => {
      const status = await plugin("status", "-n", namespace);
      return /\sAwake\s+Resumed\s+3\s/.test(status.stdout) ? true : undefined;
    });
  });

  it.each([
    [
      ["pause", "deployment/api"],
      "deployment/api is not managed by Napwake: label it napwake.dev/managed=true or create a ManagedWorkload",
    ],
    [["resume", "api"], "deployment/api is not managed by Napwake"],
    [["pause", "statefulset/db"], "statefulset/db not found in namespace"],
  ])("refuses %j with a message and exit code 1", async (args, message) => {
    const result = await plugin(...args, "-n", namespace);
    expect(result.code).toBe(1);
    expect(result.stdout).toBe("");
    expect(result.stderr).toContain(`error: ${message}`);
  });

  it("names the namespace a bare name is managed in, when it is not found in the one asked", async () => {
    const result = await plugin("pause", "web", "-n", "default");
    expect(result.code).toBe(1);
    expect(result.stderr).toMatch(
      /^error: no Deployment, ManagedWorkload or StatefulSet named web in namespace default; it is managed in namespace .*: add -n /,
    );
    expect(result.stderr).toContain(namespace);
  });

  it("reads KUBECONFIG as kubectl does: the first file's context, past a missing file, and says when none is set", async () => {
    const dir = await mkdtemp(join(tmpdir(), "napwake-plugin-"));
    try {
      // Another cluster, current in its own file, listed after the test cluster's kubeconfig.
      const elsewhere = join(dir, "elsewhere");
      await writeFile(
        elsewhere,
        [
          "apiVersion: v1",
          "kind: Config",
          'clusters: [{ name: elsewhere, cluster: { server: "https://127.0.0.1:1" } }]',
          "users: [{ name: elsewhere, user: { token: t } }]",
          "contexts: [{ name: elsewhere, context: { cluster: elsewhere, user: elsewhere } }]",
          "current-context: elsewhere",
        ].join("\n"),
      );
      const withEnv = (kubeconfig: string) =>
        run(process.execPath, [join(repoRoot, "plugin/main.ts"), "status", "-n", namespace], {
          ...process.env,
          KUBECONFIG: kubeconfig,
        });
      const both = await withEnv(`${join(dir, "absent")}:${clients.info.kubeconfig}:${elsewhere}`);
      expect(both.stderr).toBe("");
      expect(both.stdout).toMatch(/^NAME/);
      const noContext = join(dir, "no-context");
      await writeFile(
        noContext,
        (await readFile(elsewhere, "utf8")).replace("current-context: elsewhere", ""),
      );
      const none = await withEnv(noContext);
      expect(none.code).toBe(1);
      expect(none.stderr).toBe(
        "error: the kubeconfig sets no current context: pick one with --context, or kubectl config use-context <name>\n",
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("says which verb and resource it may not use", async () => {
    // A ServiceAccount that may read ManagedWorkloads and Deployments but not patch them.
    const rbac = clients.kc.makeApiClient(RbacAuthorizationV1Api);
    await clients.core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: "viewer" } } });
    await rbac.createNamespacedRole({
      namespace,
      body: {
        metadata: { name: "viewer" },
        rules: [
          { apiGroups: [managedWorkloadCrd.group], resources: ["managedworkloads"], verbs: ["get", "list"] },
          { apiGroups: ["apps"], resources: ["deployments"], verbs: ["get", "list"] },
        ],
      },
    });
    await rbac.createNamespacedRoleBinding({
      namespace,
      body: {
        metadata: { name: "viewer" },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "Role", name: "viewer" },
        subjects: [{ kind: "ServiceAccount", name: "viewer", namespace }],
      },
    });
    const dir = await mkdtemp(join(tmpdir(), "napwake-plugin-"));
    try {
      const kubeconfig = await serviceAccountKubeconfig({
        kc: clients.kc,
        namespace: namespace,
        serviceAccount: "viewer",
        server: clients.kc.getCurrentCluster()?.server ?? "",
        caFile: clients.info.caCert,
        file: join(dir, "kubeconfig"),
        expirationSeconds: 600,
      });
      // Until the authorizer's cache has the Role, even the list is refused; then only the patch is.
      const result = await eventually("the Role is in force", async () => {
        const attempt = await plugin("pause", "web", "--kubeconfig", kubeconfig);
        return attempt.stderr.includes("no permission to list") ? undefined : attempt;
      });
      expect(result.code).toBe(1);
      expect(result.stderr).toContain(
        `error: no permission to patch managedworkloads.napwake.dev web.deployment in namespace ${namespace}`,
      );
      expect(result.stderr).toContain(
        `kubectl auth can-i patch managedworkloads.napwake.dev -n ${namespace}`,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it.each([[["sleep", "web"]], [["status", "-o", "yaml"]], [[]]])(
    "answers %j with usage and exit code 2",
    async (args) => {
      const result = await plugin(...args);
      expect(result.code).toBe(2);
      expect(result.stderr).toContain("kubectl napwake");
    },
  );
});
