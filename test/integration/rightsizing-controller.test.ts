import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { EventsV1Api, type V1Container } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { annotations, fieldManager } from "../../api/keys.ts";
import { type Rightsizing, rightsizingCrd, rightsizingName } from "../../api/rightsizing.ts";
import { rightsizingPolicyPlural } from "../../api/rightsizingpolicy.ts";
import { type Caches, startCaches } from "../../controllers/caches.ts";
import {
  type RightsizingController,
  startRightsizingController,
} from "../../controllers/rightsizing/controller.ts";
import { rightsizingWrites } from "../../controllers/rightsizing/writes.ts";
import { EventRecorder } from "../../kube/events.ts";
import { defaultConfig } from "../../rightsizing/index.ts";
import { prometheusClient } from "../../rightsizing/prometheus-client.ts";
import { defaultUsageSourceConfig } from "../../rightsizing/usage-source.ts";
import { loadPrometheusHistory } from "../cluster/harness-api.ts";
import { containerUsageOpenMetrics } from "../cluster/history.ts";
import {
  type Clients,
  clusterClients,
  createTestNamespace,
  deleteTestNamespace,
  eventually,
} from "./cluster.ts";
import { installCrd, repoRoot } from "./crds.ts";
import { installManagedWorkloadCrd, quietLog, shiftedClock } from "./operator-support.ts";

const minute = 60_000;
const hour = 60 * minute;
const day = 24 * hour;
const mib = 2 ** 20;
const { group, version } = rightsizingCrd;
const execFileAsync = promisify(execFile);

/**
 * The rightsizing controller on the real control plane, reading 14 days of history from the harness's
 * Prometheus: recommendations in status, effective modes from policies and annotations, quiet Events, an
 * outage that keeps what was recommended, and a restart that resumes from the checkpoints.
 */
describe("the rightsizing controller", () => {
  let clients: Clients;
  let namespace: string;
  let caches: Caches;
  let controller: RightsizingController | undefined;
  const policies: string[] = [];
  const clock = shiftedClock();

  const container = (name: string, cpu: string, memory: string): V1Container => ({
    name,
    image: "registry.local/app:1.0",
    resources: { requests: { cpu, memory }, limits: { memory } },
  });
  const template = (app: string, c: V1Container) => ({
    metadata: { labels: { app } },
    spec: { containers: [c] },
  });

  const start = (url = clients.info.prometheusUrl) => {
    controller = startRightsizingController({
      caches,
      prometheus: prometheusClient({ url, retries: 1, initialBackoffMs: 10, timeoutMs: 20_000 }),
      writes: rightsizingWrites({ custom: clients.custom, objects: clients.objects, fieldManager }),
      events: new EventRecorder({
        client: clients.kc.makeApiClient(EventsV1Api),
        reportingInstance: "test",
      }),
      clock,
      settings: {
        operatorNamespace: "napwake-system",
        // Runs are started by the test; the timer's next run is far away.
        intervalMs: day,
        // Off unless a policy or annotation says otherwise: only this test's namespace is covered.
        clusterDefault: { cpu: "off", memory: "off" },
        inPlaceResize: true,
        recommender: defaultConfig,
        usage: { ...defaultUsageSourceConfig, concurrency: 2 },
      },
      log: quietLog,
    });
    return controller;
  };
  const stop = async () => {
    await controller?.stop();
    controller = undefined;
  };

  /** A policy for this test's namespace; with `tier`, only for its workloads of that tier. */
  const policy = async (name: string, { tier, ...spec }: Record<string, unknown> & { tier?: string }) => {
    policies.push(name);
    await clients.custom.createClusterCustomObject({
      group,
      version,
      plural: rightsizingPolicyPlural,
      body: {
        apiVersion: rightsizingCrd.apiVersion,
        kind: "RightsizingPolicy",
        metadata: { name },
        spec: {
          selector: {
            namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": namespace } },
            ...(tier ? { workloadSelector: { matchLabels: { tier } } } : {}),
          },
          ...spec,
        },
      },
    });
  };

  const read = async (name: string) =>
    (await clients.custom.getNamespacedCustomObject({
      group,
      version,
      plural: rightsizingCrd.plural,
      namespace,
      name,
    })) as Rightsizing;
  const eventReasons = async (name: string) =>
    (await clients.kc.makeApiClient(EventsV1Api).listNamespacedEvent({ namespace })).items
      .filter((e) => e.regarding?.name === name)
      .map((e) => e.reason);

  beforeAll(async () => {
    clients = clusterClients();
    // Every CRD the operator watches, as an install has them: its caches wait for each to list.
    await installManagedWorkloadCrd(clients);
    await installCrd(clients, join(repoRoot, "manifests/crds/rightsizingpolicy.yaml"));
    await installCrd(clients, join(repoRoot, "manifests/crds/rightsizing.yaml"));
    namespace = await createTestNamespace(clients, "rs-ctl");
    const end = Date.now() - 10 * minute;
    const series = (pod: string, name: string, cpu: number, memMiB: number) => ({
      namespace,
      pod,
      container: name,
      cpuCores: (t: number) => (new Date(t).getUTCHours() < 8 ? cpu / 5 : cpu),
      memoryBytes: () => memMiB * mib,
    });
    await loadPrometheusHistory(
      clients.info.harnessUrl,
      containerUsageOpenMetrics(
        [series("api-5f6d7c8b9-wwwww", "app", 0.3, 200), series("db-0", "postgres", 0.15, 700)],
        { end, durationMs: 14 * day, stepMs: 5 * minute },
      ),
    );
    // fresh: three hours of history, less than the day a recommendation needs.
    await loadPrometheusHistory(
      clients.info.harnessUrl,
      containerUsageOpenMetrics([series("fresh-6c7d8f9f5-bbbbb", "app", 0.1, 100)], {
        end,
        durationMs: 3 * hour,
        stepMs: 5 * minute,
      }),
    );
    // Replicas 0: the recommendation comes from history alone, with no live pod series beside it.
    const workload = async (
      kind: "Deployment" | "StatefulSet",
      name: string,
      tier: string,
      c: V1Container,
      annotationsOn: Record<string, string> = {},
    ) => {
      const spec = {
        replicas: 0,
        selector: { matchLabels: { app: name } },
        template: template(name, c),
      };
      const metadata = { name, labels: { app: name, tier }, annotations: annotationsOn };
      if (kind === "Deployment") {
        await clients.apps.createNamespacedDeployment({ namespace, body: { metadata, spec } });
      } else {
        await clients.apps.createNamespacedStatefulSet({
          namespace,
          body: { metadata, spec: { ...spec, serviceName: name } },
        });
      }
    };
    await workload("Deployment", "api", "web", container("app", "1", "1Gi"));
    await workload("StatefulSet", "db", "data", container("postgres", "500m", "2Gi"));
    await workload("Deployment", "fresh", "web", container("app", "200m", "256Mi"), {
      [annotations.memoryMode]: "off",
    });
    await workload("Deployment", "ignored", "batch", container("app", "100m", "64Mi"));
    const suffix = namespace.slice(-8);
    await policy(`rs-team-${suffix}`, {
      priority: 10,
      cpu: { mode: "audit" },
      memory: { mode: "audit" },
    });
    await policy(`rs-web-${suffix}`, {
      priority: 20,
      tier: "web",
      cpu: { mode: "auto-patch" },
    });
    for (const name of [`rs-tie-a-${suffix}`, `rs-tie-b-${suffix}`]) {
      await policy(name, {
        priority: 15,
        tier: "data",
        memory: { mode: "audit" },
      });
    }
    await policy(`rs-batch-off-${suffix}`, {
      priority: 30,
      tier: "batch",
      cpu: { mode: "off" },
      memory: { mode: "off" },
    });
    caches = await startCaches(clients.kc, { rightsizing: true });
  });
  afterAll(async () => {
    await stop();
    await caches?.stop();
    for (const name of policies) {
      await clients.custom
        .deleteClusterCustomObject({ group, version, plural: rightsizingPolicyPlural, name })
        .catch(() => undefined);
    }
    await deleteTestNamespace(clients, namespace);
  });

  it("writes recommendations from 14 days of history into each workload's Rightsizing", async () => {
    const summary = await start().runNow();
    expect(summary.ok).toBe(true);
    const api = await eventually("api recommended", async () => {
      const o = await read("api.deployment").catch(() => undefined);
      return o?.status?.containers?.[0]?.state === "ok" ? o : undefined;
    });
    const app = api.status?.containers?.[0];
    expect(app?.current).toEqual({ cpuRequest: "1000m", memoryRequest: "1024Mi", memoryLimit: "1024Mi" });
    // Busy two thirds of the day at 300m: the p90 is the busy level plus the margin, far below the 1-core request.
    const cpu = Number.parseInt(app?.target?.cpuRequest ?? "", 10);
    expect(cpu).toBeGreaterThanOrEqual(300);
    expect(cpu).toBeLessThan(400);
    const memory = Number.parseInt(app?.target?.memoryRequest ?? "", 10);
    expect(memory).toBeGreaterThanOrEqual(200);
    expect(memory).toBeLessThan(260);
    expect(app?.confidence).toBe(1);
    expect(app?.checkpoint).toMatch(/^\{"v":1,/);
    expect(api.status?.conditions?.find((c) => c.type === "RecommendationReady")?.status).toBe("True");
    // Owned by its workload, so it goes when the workload goes.
    expect(api.metadata).toBeDefined();

    const db = await eventually("db recommended", async () => {
      const o = await read("db.statefulset").catch(() => undefined);
      return o?.status?.containers?.[0]?.state === "ok" ? o : undefined;
    });
    expect(
      Number.parseInt(db.status?.containers?.[0]?.target?.memoryRequest ?? "", 10),
    ).toBeGreaterThanOrEqual(700);

    const fresh = await eventually("fresh seen", async () => {
      const o = await read("fresh.deployment").catch(() => undefined);
      return o?.status?.containers?.[0]?.state ? o : undefined;
    });
    expect(fresh.status?.containers?.[0]?.state).toBe("insufficient-history");
    expect(fresh.status?.conditions?.find((c) => c.type === "RecommendationReady")).toMatchObject({
      status: "False",
      reason: "InsufficientHistory",
    });
    await eventually("a skip Event for fresh", async () =>
      (await eventReasons("fresh.deployment")).includes("RecommendationSkipped") ? true : undefined,
    );
  });

  it("shows the recommendations in the kubectl napwake recommendations table", async () => {
    const { stdout } = await execFileAsync(
      process.execPath,
      [join(repoRoot, "plugin/main.ts"), "recommendations", "-n", namespace],
      { env: { ...process.env, KUBECONFIG: clients.info.kubeconfig } },
    );
    const rows = stdout.trim().split("\n");
    expect(rows[0]?.split(/\s{2,}/)).toEqual([
      "WORKLOAD",
      "CONTAINER",
      "CURRENT",
      "RECOMMENDED",
      "CHANGE",
      "MODE",
      "WHY",
    ]);
    const api = rows.find((r) => r.startsWith("deployment/api "));
    expect(api).toMatch(/app\s+1\/1Gi\/1Gi\s+\d+m\/\d+Mi\/\d+Mi\s+-\d+%\/-\d+%/);
    expect(api).toContain("auto-patch/audit");
    expect(rows.find((r) => r.startsWith("deployment/fresh "))).toContain("insufficient history");
    expect(rows.some((r) => r.startsWith("deployment/ignored "))).toBe(false);
  });

  it("resolves each resource's mode from the documented order and says which source decided", async () => {
    const suffix = namespace.slice(-8);
    const modes = async (name: string) => (await read(name)).status?.modes;
    expect(await modes("api.deployment")).toEqual({
      cpu: {
        mode: "auto-patch",
        requested: "auto-patch",
        source: `policy/rs-web-${suffix}`,
        policy: `rs-web-${suffix}`,
      },
      memory: {
        mode: "audit",
        requested: "audit",
        source: `policy/rs-team-${suffix}`,
        policy: `rs-team-${suffix}`,
      },
    });
    // Two policies at the same priority: the first by name wins, and the tie is reported.
    expect((await modes("db.statefulset"))?.memory).toMatchObject({
      source: `policy/rs-tie-a-${suffix}`,
      tie: [`rs-tie-a-${suffix}`, `rs-tie-b-${suffix}`],
    });
    // The annotation wins over every policy; auto-patch without enough history is held to audit.
    const fresh = await modes("fresh.deployment");
    expect(fresh?.memory).toMatchObject({ mode: "off", source: "annotation" });
    expect(fresh?.cpu).toMatchObject({
      mode: "audit",
      requested: "auto-patch",
      degradedBy: ["insufficient-history"],
    });
    expect(await eventReasons("fresh.deployment")).toContain("AutoPatchBlocked");
    // Off for both resources: no Rightsizing at all.
    await expect(read("ignored.deployment")).rejects.toMatchObject({ code: 404 });
    // Audit writes nothing to the workload: GitOps tools see no drift.
    const api = await clients.apps.readNamespacedDeployment({ namespace, name: "api" });
    expect(api.metadata?.managedFields?.some((f) => f.manager === fieldManager)).toBe(false);
  });

  it("says in each RightsizingPolicy's status how many workloads it governs, and when it is outranked", async () => {
    const suffix = namespace.slice(-8);
    type PolicyStatus = {
      observedGeneration?: number;
      matchedWorkloads?: number;
      conditions?: { type: string; status: string; reason: string; message: string }[];
    };
    const statusOf = async (name: string) =>
      (
        (await clients.custom.getClusterCustomObject({
          group,
          version,
          plural: rightsizingPolicyPlural,
          name,
        })) as {
          status?: PolicyStatus;
        }
      ).status;
    const summary = async (name: string) => {
      const status = await statusOf(name);
      const inEffect = status?.conditions?.find((c) => c.type === "InEffect");
      return {
        workloads: status?.matchedWorkloads,
        reason: inEffect?.reason,
        generation: status?.observedGeneration,
      };
    };
    const want = {
      // api (memory), db (CPU) and fresh (memory, though its annotation sets the mode); ignored is batch-off's.
      [`rs-team-${suffix}`]: { workloads: 3, reason: "Governing", generation: 1 },
      [`rs-web-${suffix}`]: { workloads: 2, reason: "Governing", generation: 1 },
      [`rs-tie-a-${suffix}`]: { workloads: 1, reason: "Governing", generation: 1 },
      // Loses the tie for memory, sets nothing else: governs nothing it selects.
      [`rs-tie-b-${suffix}`]: { workloads: 0, reason: "Outranked", generation: 1 },
      [`rs-batch-off-${suffix}`]: { workloads: 1, reason: "Governing", generation: 1 },
    };
    await eventually("every policy's status written", async () => {
      const got = Object.fromEntries(
        await Promise.all(Object.keys(want).map(async (name) => [name, await summary(name)] as const)),
      );
      return JSON.stringify(got) === JSON.stringify(want) ? got : undefined;
    });
    expect((await statusOf(`rs-tie-b-${suffix}`))?.conditions?.[0]?.message).toMatch(/raise spec.priority/);
    // A workload created and deleted moves the counts of the policies that select it, a few seconds behind.
    await clients.apps.createNamespacedDeployment({
      namespace,
      body: {
        metadata: { name: "extra", labels: { app: "extra", tier: "web" } },
        spec: {
          replicas: 0,
          selector: { matchLabels: { app: "extra" } },
          template: template("extra", container("app", "100m", "64Mi")),
        },
      },
    });
    await eventually("the web policy governs the new workload", async () =>
      (await summary(`rs-web-${suffix}`)).workloads === 3 ? true : undefined,
    );
    await clients.apps.deleteNamespacedDeployment({ namespace, name: "extra" });
    await eventually("and lets it go once deleted", async () =>
      (await summary(`rs-web-${suffix}`)).workloads === 2 ? true : undefined,
    );
  });

  it("sends one Event per new recommendation and none for a repeat run", async () => {
    await controller?.runNow();
    await new Promise((r) => setTimeout(r, 2_000));
    const reasons = await eventReasons("api.deployment");
    expect(reasons.filter((r) => r === "RecommendationChanged")).toHaveLength(1);
    expect(
      (await eventReasons("fresh.deployment")).filter((r) => r === "RecommendationSkipped"),
    ).toHaveLength(1);
  });

  it("keeps the recommendations through a Prometheus outage and reports it in a condition", async () => {
    const before = await read("api.deployment");
    await stop();
    const summary = await start("http://127.0.0.1:9").runNow();
    expect(summary.ok).toBe(false);
    const after = await eventually("outage reported", async () => {
      const o = await read("api.deployment");
      const c = o.status?.conditions?.find((x) => x.type === "MetricsSourceHealthy");
      return c?.status === "False" ? o : undefined;
    });
    expect(after.status?.conditions?.find((x) => x.type === "MetricsSourceHealthy")?.message).toMatch(
      /metrics source network/,
    );
    expect(after.status?.containers?.[0]?.target).toEqual(before.status?.containers?.[0]?.target);
    expect(after.status?.containers?.[0]?.checkpoint).toBe(before.status?.containers?.[0]?.checkpoint);
    // The source is unhealthy: auto-patch is held to audit until it answers again.
    expect(after.status?.modes?.cpu).toMatchObject({ mode: "audit", requested: "auto-patch" });
    await eventually("a warning Event", async () =>
      (await eventReasons("api.deployment")).includes("MetricsSourceFailed") ? true : undefined,
    );
  });

  it("resumes from the checkpoints after a restart, reading only the new samples", async () => {
    const before = await read("api.deployment");
    const through = Date.parse(before.status?.historyThrough ?? "");
    await stop();
    // Two hours later, as the new operator sees it.
    clock.advance(2 * hour);
    const summary = await start().runNow();
    expect(summary.ok).toBe(true);
    expect(summary.queries.length).toBeGreaterThan(0);
    for (const q of summary.queries) {
      // From the checkpoint on, not the 14-day lookback.
      expect(q.start).toBeGreaterThan(through);
      expect(q.end - q.start).toBeLessThanOrEqual(2 * hour + 5 * minute);
    }
    const after = await eventually("healthy again", async () => {
      const o = await read("api.deployment");
      const c = o.status?.conditions?.find((x) => x.type === "MetricsSourceHealthy");
      return c?.status === "True" ? o : undefined;
    });
    expect(after.status?.containers?.[0]?.target).toEqual(before.status?.containers?.[0]?.target);
    expect(after.status?.containers?.[0]?.confidence).toBe(1);
  });

  it("gives a workload whose name is too long for <name>.<kind> a Rightsizing of its own", async () => {
    const long = `api-${"x".repeat(246)}`;
    await clients.apps.createNamespacedDeployment({
      namespace,
      body: {
        metadata: { name: long, labels: { app: "long", tier: "web" } },
        spec: {
          replicas: 0,
          selector: { matchLabels: { app: "long" } },
          template: template("long", container("app", "100m", "64Mi")),
        },
      },
    });
    try {
      if (!controller) start();
      const name = rightsizingName("Deployment", long);
      expect(name.length).toBeLessThanOrEqual(253);
      const object = await eventually("its Rightsizing written", async () => {
        const o = await read(name).catch(() => undefined);
        return o?.status?.containers?.length ? o : undefined;
      });
      expect(object.spec.targetRef).toEqual({ kind: "Deployment", name: long });
      expect(object.status?.containers?.[0]?.current).toEqual({
        cpuRequest: "100m",
        memoryRequest: "64Mi",
        memoryLimit: "64Mi",
      });
    } finally {
      await clients.apps.deleteNamespacedDeployment({ namespace, name: long });
    }
  });
});
