import { EventsV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ManagedWorkload } from "../../api/managedworkload.ts";
import type { ManagedWorkloadController } from "../../controllers/managedworkload/controller.ts";
import type { PredictionStatus } from "../../controllers/managedworkload/forecasting.ts";
import { activityHistoryReader } from "../../controllers/managedworkload/history-reader.ts";
import { SLOT_MS, slotOf } from "../../forecast/index.ts";
import { prometheusClient } from "../../rightsizing/prometheus-client.ts";
import { defaultPromQLConfig } from "../../rightsizing/promql.ts";
import { loadPrometheusHistory } from "../cluster/harness-api.ts";
import { containerUsageOpenMetrics } from "../cluster/history.ts";
import {
  type Clients,
  clusterClients,
  createTestNamespace,
  deleteTestNamespace,
  eventually,
} from "./cluster.ts";
import {
  awakeSince,
  createManagedWorkloadWithStatus,
  installManagedWorkloadCrd,
  managedWorkload,
  managedWorkloadApi,
  readManagedWorkload,
  shiftedClock,
  startController,
} from "./operator-support.ts";
import { httpDeployment } from "./workloads.ts";

const minute = 60_000;
const hour = 60 * minute;
const day = 24 * hour;

/**
 * A new forecast engine starts from the activity history in Prometheus, on the real control plane: two weeks
 * of a daily busy time that starts within the hour make the forecast trusted at once, so an idle workload is
 * not paused just before it; the same workload with spec.forecast.history None learns from now and pauses.
 */
describe("a new forecast started from the activity history in Prometheus", () => {
  let clients: Clients;
  let namespace: string;
  let controller: ManagedWorkloadController | undefined;
  const clock = shiftedClock();
  const busyFromMs = (slotOf(Date.now()) + 2) * SLOT_MS;

  const mw = (name: string) => readManagedWorkload(clients, namespace, `${name}.deployment`);
  const events = async (name: string) =>
    (await clients.kc.makeApiClient(EventsV1Api).listNamespacedEvent({ namespace })).items.filter(
      (e) => e.regarding?.name === `${name}.deployment`,
    );

  /**
   * Waits until `name`'s ManagedWorkload says Unmanaged and the others' histories have been read, and a little
   * more: by then its own would have been read too, had it been asked for.
   */
  const unmanagedWhileOthersAreRead = async (name: string) => {
    await eventually(`${name} reported unmanaged`, async () =>
      (await mw(name)).status?.phase === "Unmanaged" ? true : undefined,
    );
    await eventually("the others' histories read", async () =>
      (await events("learns")).find((e) => e.reason === "ForecastHistoryLearned"),
    );
    await new Promise((resolve) => setTimeout(resolve, 3_000));
  };

  beforeAll(async () => {
    clients = clusterClients();
    await installManagedWorkloadCrd(clients);
    namespace = await createTestNamespace(clients, "fc-history");
    // Busy two hours a day from the slot after next (30 minutes from now at most), idle otherwise. A sample at t
    // holds the CPU of the five minutes before it (the counter grew by that much since the one before).
    const busy = (t: number) => {
      const sinceStart = (((t - 5 * minute - busyFromMs) % day) + day) % day;
      return sinceStart < 2 * hour ? 0.2 : 0.002;
    };
    await loadPrometheusHistory(
      clients.info.harnessUrl,
      containerUsageOpenMetrics(
        ["learns", "ignores", "later", "shielded"].map((name) => ({
          namespace,
          pod: `${name}-6b7c8d9f5d-wwwww`,
          container: "web",
          cpuCores: busy,
          memoryBytes: () => 50 * 2 ** 20,
        })),
        { end: Date.now() - 2 * minute, durationMs: 14 * day, stepMs: 5 * minute },
      ),
    );
    for (const name of ["learns", "ignores"]) {
      await clients.apps.createNamespacedDeployment({
        namespace,
        body: httpDeployment({ namespace, name, replicas: 2, cpu: "5m" }),
      });
      // Awake and idle for two hours: a pause is due as soon as the operator looks.
      await createManagedWorkloadWithStatus(
        clients,
        managedWorkload(namespace, `${name}.deployment`, name, {
          idle: { window: "30m" },
          forecast: { idleWindow: "30m", ...(name === "ignores" ? { history: "None" as const } : {}) },
        }),
        awakeSince(clock.now() - 2 * hour),
      );
    }
    /** A Deployment of one replica, managed with `spec`. */
    const managed = async (name: string, spec: Parameters<typeof managedWorkload>[3]) => {
      await clients.apps.createNamespacedDeployment({
        namespace,
        body: httpDeployment({ namespace, name, replicas: 1, cpu: "5m" }),
      });
      await clients.custom.createNamespacedCustomObject({
        ...managedWorkloadApi,
        namespace,
        body: managedWorkload(namespace, `${name}.deployment`, name, spec),
      });
    };
    // refused: an activity query Prometheus cannot parse, so its history cannot be read.
    await managed("refused", {
      idle: { window: "30m", activityQueries: [{ name: "backlog", query: "sum(queue_depth", threshold: 1 }] },
    });
    // shielded: protected, so not managed until the protection is lifted.
    await managed("shielded", { protected: true, idle: { window: "30m" } });
    // later: its ManagedWorkload comes before the Deployment.
    await clients.custom.createNamespacedCustomObject({
      ...managedWorkloadApi,
      namespace,
      body: managedWorkload(namespace, "later.deployment", "later", { idle: { window: "30m" } }),
    });
    controller = await startController(
      clients,
      clock,
      undefined,
      undefined,
      activityHistoryReader({
        prometheus: prometheusClient({ url: clients.info.prometheusUrl }),
        promql: defaultPromQLConfig,
      }),
    );
  });
  afterAll(async () => {
    await controller?.stop();
    await deleteTestNamespace(clients, namespace);
  });

  it("learns two weeks of activity from Prometheus and says so", async () => {
    const learned = await eventually("the history learned", async () =>
      (await events("learns")).find((e) => e.reason === "ForecastHistoryLearned"),
    );
    expect(learned.note).toMatch(
      /^learned 1[34]\.\d days of activity history \(active in \d+ of \d+ 15-minute slots\): forecast active/,
    );
    // The Event goes out in the reconcile that writes the status, just before it.
    const prediction = await eventually("the forecast trusted in status", async () => {
      const p = (await mw("learns")).status?.prediction as PredictionStatus | undefined;
      return p?.phase.startsWith("active") ? p : undefined;
    });
    expect(prediction.nextActivity).toBe(new Date(busyFromMs).toISOString());
  });

  it("does not pause the idle workload before its daily busy time", async () => {
    const vetoed = await eventually("the pause vetoed", async () => {
      const c = (await mw("learns")).status?.conditions?.find((x) => x.type === "Paused");
      return c?.reason === "ForecastVeto" ? c : undefined;
    });
    expect(vetoed.message).toContain(new Date(busyFromMs).toISOString());
    expect((await clients.apps.readNamespacedDeployment({ namespace, name: "learns" })).spec?.replicas).toBe(
      2,
    );
  });

  it("reads a workload's history once the workload exists, not while its ManagedWorkload waits for it", async () => {
    await unmanagedWhileOthersAreRead("later");
    const created = await clients.apps.createNamespacedDeployment({
      namespace,
      body: httpDeployment({ namespace, name: "later", replicas: 1, cpu: "5m" }),
    });
    const learned = await eventually("the history learned", async () =>
      (await events("later")).find((e) => e.reason === "ForecastHistoryLearned"),
    );
    expect(learned.note).toMatch(/^learned 1[34]\.\d days of activity history/);
    const eventAt = new Date(learned.metadata?.creationTimestamp ?? 0).getTime();
    expect(eventAt).toBeGreaterThanOrEqual(
      new Date(created.metadata?.creationTimestamp ?? Date.now()).getTime(),
    );
  });

  it("reads a protected workload's history once the protection is lifted, not while it is left alone", async () => {
    await unmanagedWhileOthersAreRead("shielded");
    const historyEvents = async () =>
      (await events("shielded")).filter((e) => e.reason?.startsWith("ForecastHistory"));
    expect(await historyEvents()).toEqual([]);
    await clients.custom.patchNamespacedCustomObject({
      ...managedWorkloadApi,
      namespace,
      name: "shielded.deployment",
      body: [{ op: "replace", path: "/spec/protected", value: false }],
    });
    const [learned] = await eventually("the history learned", async () => {
      const found = await historyEvents();
      return found.length > 0 ? found : undefined;
    });
    expect(learned?.reason).toBe("ForecastHistoryLearned");
  });

  it("says why when Prometheus refuses a query of the history, and learns from now", async () => {
    const refused = await eventually("the history refused", async () =>
      (await events("refused")).find((e) => e.reason === "ForecastHistoryUnavailable"),
    );
    expect(refused.type).toBe("Warning");
    expect(refused.note).toMatch(
      /^could not read the activity history \(.*parse error.*sum\(queue_depth.*\); learning from now$/,
    );
    expect(((await mw("refused")).status?.prediction as PredictionStatus | undefined)?.phase).toBe(
      "learning",
    );
  });

  it("reads the replicas kube-state-metrics gives: 0 is idle, replicas without CPU a gap, before them CPU alone", async () => {
    // Hours before the current slot: busy with 2 replicas, then scaled to zero, then 2 replicas but no CPU
    // scraped (the kubelet's scrape failing), then quiet with 2 replicas. A CPU sample at t holds the five
    // minutes before it.
    const base = slotOf(Date.now()) * SLOT_MS;
    const stretch = (t: number) => {
      const h = (t - base) / hour;
      return h < -6 ? "busy" : h < -4 ? "scaled to zero" : h < -3 ? "not scraped" : "quiet";
    };
    const cpu = (t: number) => {
      const s = stretch(t);
      return s === "busy" ? 0.2 : s === "quiet" ? 0.002 : undefined;
    };
    const step = 5 * minute;
    const lines = ["# TYPE container_cpu_usage_seconds_total counter"];
    let total = 0;
    for (let t = base - 10 * hour; t <= base; t += step) {
      const [before, now] = [cpu(t - step), cpu(t)];
      if (before !== undefined) total += before * (step / 1000);
      // A sample where the step before or the one after has CPU, so each step with CPU has one at both ends.
      if (before !== undefined || now !== undefined) {
        lines.push(
          `container_cpu_usage_seconds_total{namespace="${namespace}",pod="scaled-6b7c8d9f5d-wwwww",container="web"} ${total.toFixed(3)} ${t / 1000}`,
        );
      }
    }
    lines.push("# TYPE kube_deployment_spec_replicas gauge");
    // kube-state-metrics installed 5 hours ago, an hour into the stretch at zero: before it, no CPU between two
    // samples is idle as without it.
    for (let t = base - 5 * hour; t <= base; t += step) {
      const replicas = stretch(t) === "scaled to zero" ? 0 : 2;
      lines.push(
        `kube_deployment_spec_replicas{namespace="${namespace}",deployment="scaled"} ${replicas} ${t / 1000}`,
      );
    }
    lines.push("# EOF", "");
    await loadPrometheusHistory(clients.info.harnessUrl, lines.join("\n"));
    const reader = activityHistoryReader({
      prometheus: prometheusClient({ url: clients.info.prometheusUrl }),
      promql: defaultPromQLConfig,
    });
    const fromSlot = slotOf(base - 8 * hour);
    const points = await reader.read(
      managedWorkload(namespace, "scaled.deployment", "scaled") as ManagedWorkload,
      fromSlot,
      slotOf(base - hour),
    );
    const slotsOf = (value: number | null, count: number) => Array.from({ length: count }, () => value);
    expect(points.map((p) => p.value)).toEqual([
      ...slotsOf(1, 8),
      ...slotsOf(0, 8),
      ...slotsOf(null, 4),
      ...slotsOf(0, 8),
    ]);
  });

  it("pauses the same workload that asked for no history: it learns from now", async () => {
    await eventually("paused", async () => {
      const d = await clients.apps.readNamespacedDeployment({ namespace, name: "ignores" });
      return d.spec?.replicas === 0 ? d : undefined;
    });
    expect(((await mw("ignores")).status?.prediction as PredictionStatus | undefined)?.phase).toBe(
      "learning",
    );
    expect((await events("ignores")).map((e) => e.reason)).not.toEqual(
      expect.arrayContaining([expect.stringMatching(/^ForecastHistory/)]),
    );
  });
});
