import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { PatchStrategy, setHeaderOptions } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ManagedWorkload, managedWorkloadCrd } from "../../api/managedworkload.ts";
import {
  type Clients,
  clusterClients,
  createTestNamespace,
  deleteTestNamespace,
  eventually,
} from "./cluster.ts";
import { installCrd, refusal, repoRoot } from "./crds.ts";
import { realWrites } from "./operator-support.ts";

const run = promisify(execFile);
const crdPath = join(repoRoot, "manifests/crds/managedworkload.yaml");
const { group, version, plural } = managedWorkloadCrd;

type Spec = Record<string, unknown>;

describe("the ManagedWorkload CRD", () => {
  let clients: Clients;
  let namespace: string;
  let counter = 0;

  beforeAll(async () => {
    clients = clusterClients();
    await installCrd(clients, crdPath);
    namespace = await createTestNamespace(clients, "crd-mw");
  });
  afterAll(async () => {
    await deleteTestNamespace(clients, namespace);
  });

  const create = (spec: Spec, name = `mw-${++counter}`) =>
    clients.custom.createNamespacedCustomObject({
      group,
      version,
      plural,
      namespace,
      body: {
        apiVersion: managedWorkloadCrd.apiVersion,
        kind: managedWorkloadCrd.kind,
        metadata: { name },
        spec,
      },
    }) as Promise<ManagedWorkload>;

  const kubectl = async (...args: string[]) => {
    const { binDir, kubeconfig } = clients.info;
    const { stdout } = await run(join(binDir, "kubectl"), [`--kubeconfig=${kubeconfig}`, ...args]);
    return stdout.trim();
  };

  const target = { kind: "Deployment", name: "web" };
  const newerActivity = { time: "2026-11-02T10:05:00Z", source: "scale-up" as const };
  const olderActivity = { time: "2026-11-02T09:00:00Z", source: "cpu" as const };

  it("accepts a minimal ManagedWorkload and fills in the defaults", async () => {
    const created = await create({
      targetRef: target,
      idle: { activityQueries: [{ name: "rps", query: "vector(1)", threshold: 0.5 }] },
    });
    expect(created.spec).toEqual({
      targetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "web" },
      idle: {
        window: "30m",
        cpuThreshold: "50m",
        activityQueries: [{ name: "rps", query: "vector(1)", threshold: 0.5, activeWhen: "Above" }],
      },
      forecast: { enabled: true, prewake: "10m", awakeBudget: "IdleWindow", history: "Prometheus" },
      dryRun: false,
      protected: false,
    });
  });

  it("accepts a full ManagedWorkload as written", async () => {
    const spec = {
      targetRef: { apiVersion: "apps/v1", kind: "StatefulSet", name: "db-0.primary" },
      idle: {
        window: "1h30m",
        cpuThreshold: "0.2",
        activityQueries: [
          { name: "rps", query: "sum(rate(http_requests_total[5m]))", threshold: 1, activeWhen: "Above" },
          { name: "queue-age", query: "time() - last_job_seconds", threshold: 600, activeWhen: "Below" },
        ],
      },
      forecast: {
        enabled: false,
        prewake: "0s",
        idleWindow: "15m",
        awakeBudget: "None",
        history: "None",
        timeZone: "America/Argentina/Buenos_Aires",
      },
      dryRun: true,
      protected: true,
      dependencies: [
        { kind: "Deployment", name: "cache" },
        { kind: "StatefulSet", name: "cache" },
      ],
    };
    expect((await create(spec)).spec).toEqual(spec);
  });

  it.each([
    {
      name: "a window that is not a duration",
      spec: { targetRef: target, idle: { window: "5x" } },
      message: /spec\.idle\.window must be a duration such as 30m, 2h or 1h30m/,
    },
    {
      name: "a window given in days",
      spec: { targetRef: target, idle: { window: "2d" } },
      message: /spec\.idle\.window must be a duration .*for days write hours, e\.g\. 48h/,
    },
    {
      name: "a window shorter than a minute",
      spec: { targetRef: target, idle: { window: "10s" } },
      message: /spec\.idle\.window must be at least 1m.*use e\.g\. 5m or more/,
    },
    {
      name: "a window longer than seven days",
      spec: { targetRef: target, idle: { window: "169h" } },
      message: /spec\.idle\.window must be at most 168h \(7 days\)/,
    },
    {
      name: "a ManagedWorkload without a spec",
      spec: undefined as unknown as Spec,
      message: /spec is required: set spec\.targetRef to the Deployment or StatefulSet to manage/,
    },
    {
      name: "a ManagedWorkload whose spec is null (an empty `spec:` in YAML)",
      spec: null as unknown as Spec,
      message: /spec is required: set spec\.targetRef to the Deployment or StatefulSet to manage/,
    },
    {
      name: "a target without a name",
      spec: { targetRef: { kind: "Deployment" } },
      message: /spec\.targetRef\.name is required: set it to the name of the Deployment or StatefulSet/,
    },
    {
      name: "a target that is a Job",
      spec: { targetRef: { kind: "Job", name: "backup" } },
      message: /spec\.targetRef\.kind must be Deployment or StatefulSet/,
    },
    {
      name: "a target kind in lower case",
      spec: { targetRef: { kind: "deployment", name: "web" } },
      message:
        /spec\.targetRef\.kind must be written Deployment \(kinds are case-sensitive\), not deployment/,
    },
    {
      name: "a dependency kind in lower case",
      spec: { targetRef: target, dependencies: [{ kind: "statefulset", name: "db" }] },
      message:
        /spec\.dependencies\[\]\.kind must be written StatefulSet \(kinds are case-sensitive\), not statefulset/,
    },
    {
      name: "a target in another API group",
      spec: { targetRef: { apiVersion: "extensions/v1beta1", kind: "Deployment", name: "web" } },
      message: /spec\.targetRef\.apiVersion must be apps\/v1: set it to apps\/v1 or leave it out/,
    },
    {
      name: "two activity queries with the same name",
      spec: {
        targetRef: target,
        idle: {
          activityQueries: [
            { name: "rps", query: "vector(1)", threshold: 1 },
            { name: "rps", query: "vector(2)", threshold: 1 },
          ],
        },
      },
      message:
        /spec\.idle\.activityQueries must have unique names: rename or remove the query whose name repeats/,
    },
    {
      name: "an empty activity query",
      spec: { targetRef: target, idle: { activityQueries: [{ name: "rps", query: "  ", threshold: 1 }] } },
      message: /spec\.idle\.activityQueries\[\]\.query must be a PromQL query: it is empty/,
    },
    {
      name: "a CPU threshold that is not a quantity",
      spec: { targetRef: target, idle: { cpuThreshold: "lots" } },
      message: /spec\.idle\.cpuThreshold must be a CPU quantity such as 50m, 0\.2 or 1/,
    },
    {
      name: "a negative CPU threshold",
      spec: { targetRef: target, idle: { cpuThreshold: "-100m" } },
      message: /spec\.idle\.cpuThreshold must not be negative/,
    },
    {
      name: "a pre-wake longer than two hours",
      spec: { targetRef: target, forecast: { prewake: "2h1m" } },
      message: /spec\.forecast\.prewake must be at most 2h: it is the time the workload needs to start/,
    },
    {
      name: "a UTC offset given as a time zone",
      spec: { targetRef: target, forecast: { timeZone: "+01" } },
      message: /spec\.forecast\.timeZone must be an IANA time zone name such as Europe\/Berlin or UTC/,
    },
    {
      name: "a time zone that is not an IANA name",
      spec: { targetRef: target, forecast: { timeZone: "UTC+01:00" } },
      message: /spec\.forecast\.timeZone must be an IANA time zone name such as Europe\/Berlin or UTC/,
    },
    {
      name: "a trusted-forecast idle window longer than spec.idle.window",
      spec: { targetRef: target, idle: { window: "30m" }, forecast: { idleWindow: "45m" } },
      message: /spec\.forecast\.idleWindow \(45m\) must not be longer than spec\.idle\.window \(30m\)/,
    },
    {
      name: "a trusted-forecast idle window longer than the default spec.idle.window (30m)",
      spec: { targetRef: target, forecast: { idleWindow: "2h" } },
      message: /spec\.forecast\.idleWindow \(2h\) must not be longer than spec\.idle\.window \(30m\)/,
    },
    {
      name: "a trusted-forecast idle window that is not a duration",
      spec: { targetRef: target, forecast: { idleWindow: "quarter hour" } },
      message: /spec\.forecast\.idleWindow must be a duration such as 15m/,
    },
    {
      name: "a trusted-forecast idle window under a minute",
      spec: { targetRef: target, forecast: { idleWindow: "30s" } },
      message: /spec\.forecast\.idleWindow must be at least 1m/,
    },
    {
      name: "an unknown awake budget",
      spec: { targetRef: target, forecast: { awakeBudget: "Unlimited" } },
      message:
        /spec\.forecast\.awakeBudget: Unsupported value: "Unlimited": supported values: "IdleWindow", "None"/,
    },
    {
      name: "an unknown source of forecast history",
      spec: { targetRef: target, forecast: { history: "Thanos" } },
      message: /spec\.forecast\.history: Unsupported value: "Thanos": supported values: "Prometheus", "None"/,
    },
  ])("refuses $name with a message naming the field and the fix", async ({ spec, message }) => {
    expect(await refusal(create(spec))).toMatch(message);
  });

  it("refuses a change of target and names the fix", async () => {
    const created = await create({ targetRef: target });
    const name = created.metadata.name;
    const change = clients.custom.replaceNamespacedCustomObject({
      group,
      version,
      plural,
      namespace,
      name,
      body: {
        ...created,
        spec: { ...created.spec, targetRef: { ...created.spec.targetRef, name: "other" } },
      },
    });
    expect(await refusal(change)).toMatch(
      /spec\.targetRef is immutable: to manage another workload, delete this ManagedWorkload and create a new one/,
    );
  });

  it("keeps status in its subresource and shows it in kubectl get columns", async () => {
    const created = await create({ targetRef: { kind: "StatefulSet", name: "db" } }, "shown");
    const status = {
      observedGeneration: 1,
      phase: "Paused",
      pausedFrom: 3,
      pausedAt: "2026-11-02T10:00:00Z",
      lastActivity: { time: "2026-11-02T09:30:00Z", source: "request" },
      conditions: [
        {
          type: "Paused",
          status: "True",
          lastTransitionTime: "2026-11-02T10:00:00Z",
          reason: "IdleWindowPassed",
          message: "idle for 30m",
        },
      ],
      prediction: { phase: "active-daily", state: '{"v":1}', nextActivity: "2026-11-03T08:00:00Z" },
    };
    // A status written with the object is dropped; the status subresource keeps it.
    const replaced = (await clients.custom.replaceNamespacedCustomObject({
      group,
      version,
      plural,
      namespace,
      name: "shown",
      body: { ...created, status },
    })) as ManagedWorkload;
    expect(replaced.status).toBeUndefined();
    const withStatus = (await clients.custom.replaceNamespacedCustomObjectStatus({
      group,
      version,
      plural,
      namespace,
      name: "shown",
      body: { ...replaced, status },
    })) as ManagedWorkload;
    expect(withStatus.status).toEqual(status);

    const table = await kubectl(
      "get",
      "mw",
      "--namespace",
      namespace,
      "--field-selector=metadata.name=shown",
    );
    const [header, row] = table.split("\n");
    expect(header?.split(/\s+/)).toEqual([
      "NAME",
      "KIND",
      "TARGET",
      "PHASE",
      "PAUSED-FROM",
      "LAST-ACTIVITY",
      "AGE",
    ]);
    expect(row?.split(/\s+/).slice(0, 5)).toEqual(["shown", "StatefulSet", "db", "Paused", "3"]);
    // `kubectl get napwake` lists every Napwake resource.
    expect(await kubectl("get", "napwake", "--namespace", namespace, "--output=name")).toContain(
      "managedworkload.napwake.dev/shown",
    );
  });

  it("refuses a status decided from an older version, so a lagging cache never overwrites a newer status", async () => {
    const writes = realWrites(clients);
    const decidedFrom = await create({ targetRef: target }, "conditional");
    const newer = await writes.writeStatus(decidedFrom, { phase: "Awake", lastActivity: newerActivity });
    expect(newer).not.toBe(decidedFrom.metadata.resourceVersion);

    const stale = writes.writeStatus(decidedFrom, { phase: "Awake", lastActivity: olderActivity });
    await expect(stale).rejects.toMatchObject({ code: 409 });
    const kept = (await clients.custom.getNamespacedCustomObject({
      group,
      version,
      plural,
      namespace,
      name: "conditional",
    })) as ManagedWorkload;
    expect(kept.status?.lastActivity).toEqual(newerActivity);
  });

  it("leaves a condition another tool set to that tool: removed by it, it is gone, though Napwake wrote status since", async () => {
    const writes = realWrites(clients);
    await create({ targetRef: target }, "shared-conditions");
    const read = () =>
      clients.custom.getNamespacedCustomObject({
        group,
        version,
        plural,
        namespace,
        name: "shared-conditions",
      }) as Promise<ManagedWorkload>;
    const checked = {
      type: "PolicyChecked",
      status: "True" as const,
      lastTransitionTime: "2026-11-02T10:00:00Z",
      reason: "Checked",
      message: "set by another tool",
    };
    const otherTool = (conditions: (typeof checked)[]) =>
      clients.custom.patchNamespacedCustomObjectStatus(
        {
          group,
          version,
          plural,
          namespace,
          name: "shared-conditions",
          body: {
            apiVersion: managedWorkloadCrd.apiVersion,
            kind: managedWorkloadCrd.kind,
            status: { conditions },
          },
          fieldManager: "policy-checker",
          force: true,
        },
        setHeaderOptions("Content-Type", PatchStrategy.ServerSideApply),
      );
    await otherTool([checked]);
    // Napwake decides from the object as read, the other tool's condition in it, and writes its own beside it.
    const seen = await read();
    const paused = {
      ...checked,
      type: "Paused",
      status: "False" as const,
      reason: "Active",
      message: "awake",
    };
    await writes.writeStatus(seen, {
      phase: "Awake",
      conditions: [...(seen.status?.conditions ?? []), paused],
    });
    expect((await read()).status?.conditions?.map((c) => c.type)).toEqual(["PolicyChecked", "Paused"]);

    await otherTool([]);
    expect((await read()).status?.conditions?.map((c) => c.type)).toEqual(["Paused"]);
  });

  it("explains its fields with kubectl explain", async () => {
    // The API server publishes a new CRD's OpenAPI a moment after it is Established.
    const explained = await eventually("kubectl explain managedworkload.spec.idle.window", async () => {
      const text = await kubectl("explain", "managedworkload.spec.idle.window").catch(() => "");
      return text.includes("How long the workload must stay idle") ? text : undefined;
    });
    expect(explained).toMatch(/GROUP:\s+napwake\.dev/);
    expect(explained).toMatch(/at most 168h/);
    // The forecast's status too, field by field.
    const prediction = await kubectl("explain", "managedworkload.status.prediction");
    for (const field of ["phase", "confidence", "nextActivity", "nextPrewake", "adviceSuspended", "state"]) {
      expect(prediction).toMatch(new RegExp(`^\\s+${field}\\s+<`, "m"));
    }
  });
});
