import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Recommendation, RecommenderState } from "../../rightsizing/index.ts";
import {
  defaultConfig,
  emptyState,
  foldHistory,
  parseCheckpoint,
  Reason,
  recommend,
  serializeCheckpoint,
} from "../../rightsizing/index.ts";
import { prometheusClient } from "../../rightsizing/prometheus-client.ts";
import type { UsageTarget } from "../../rightsizing/usage-source.ts";
import { containerKey, defaultUsageSourceConfig, fetchUsage } from "../../rightsizing/usage-source.ts";
import { loadPrometheusHistory } from "../cluster/harness-api.ts";
import { type ContainerSeries, containerUsageOpenMetrics } from "../cluster/history.ts";
import { type Clients, clusterClients, createTestNamespace, deleteTestNamespace } from "./cluster.ts";

const minute = 60_000;
const kindOf: Record<string, "Deployment" | "StatefulSet"> = {
  api: "Deployment",
  db: "StatefulSet",
  worker: "StatefulSet",
};
const hour = 60 * minute;
const day = 24 * hour;
const mib = 2 ** 20;
const step = 5 * minute;

// Busy 14:00-22:00 UTC at 500m, quiet at 50m the rest of the day.
const diurnalCpu = (t: number) => {
  const h = new Date(t).getUTCHours();
  return h >= 14 && h < 22 ? 0.5 : 0.05;
};

describe("rightsizing usage from the local Prometheus", () => {
  let clients: Clients;
  let namespace: string;
  let end: number;
  let targets: UsageTarget[];
  const config = { ...defaultUsageSourceConfig, concurrency: 2 };

  beforeAll(async () => {
    clients = clusterClients();
    namespace = await createTestNamespace(clients, "rs-usage");
    end = Date.now() - 10 * minute;
    const series = (
      pod: string,
      container: string,
      cpu: (t: number) => number,
      memMiB: number,
    ): ContainerSeries => ({
      namespace,
      pod,
      container,
      cpuCores: cpu,
      memoryBytes: () => memMiB * mib,
    });
    // api: a Deployment with two replicas; db: a steady StatefulSet.
    await loadPrometheusHistory(
      clients.info.harnessUrl,
      containerUsageOpenMetrics(
        [
          series("api-7d9f8c6b5-wwwww", "app", diurnalCpu, 300),
          series("api-7d9f8c6b5-bbbbb", "app", diurnalCpu, 280),
          series("db-0", "postgres", () => 0.2, 1024),
        ],
        { end, durationMs: 14 * day, stepMs: step },
      ),
    );
    // worker: ran from 14 to 7 days ago at 800m, then was paused (no pods) for a week.
    await loadPrometheusHistory(
      clients.info.harnessUrl,
      containerUsageOpenMetrics([series("worker-0", "main", () => 0.8, 600)], {
        end: end - 7 * day,
        durationMs: 7 * day,
        stepMs: step,
      }),
    );
    targets = [
      { namespace, workload: "api", kind: "Deployment", containers: ["app"], replicas: 2, since: null },
      { namespace, workload: "db", kind: "StatefulSet", containers: ["postgres"], since: null },
      { namespace, workload: "worker", kind: "StatefulSet", containers: ["main"], since: null },
    ];
  });
  afterAll(async () => {
    await deleteTestNamespace(clients, namespace);
  });

  const client = () => prometheusClient({ url: clients.info.prometheusUrl, timeoutMs: 20_000 });

  function learnAll(
    histories: ReadonlyMap<string, Parameters<typeof foldHistory>[1]>,
    from = new Map<string, RecommenderState>(),
  ) {
    const states = new Map(from);
    for (const [key, history] of histories) {
      states.set(key, foldHistory(states.get(key) ?? emptyState(defaultConfig), history, defaultConfig));
    }
    return states;
  }

  const recommendationOf = (states: Map<string, RecommenderState>, workload: string, container: string) => {
    const state = states.get(
      containerKey({ namespace, kind: kindOf[workload] ?? "Deployment", workload }, container),
    );
    expect(state, `state of ${workload}/${container}`).toBeDefined();
    return recommend(state ?? emptyState(defaultConfig), defaultConfig);
  };

  it("recommends from 14 days of history with one query per metric for all workloads", async () => {
    const result = await fetchUsage(client(), targets, Date.now(), config);
    if (!result.ok) throw new Error(result.error.message);
    expect(result.value.queries).toHaveLength(4);
    expect(result.value.missing).toEqual([]);
    const states = learnAll(result.value.histories);

    const api = recommendationOf(states, "api", "app");
    expect(api.status).toBe("ok");
    // p90 of a day busy a third of the time is the busy level, plus the 15% margin.
    expect(api.cpuRequestCores.target).toBeGreaterThan(0.5);
    expect(api.cpuRequestCores.target).toBeLessThan(0.5 * 1.15 * 1.06);
    // The busier replica's memory (300 MiB) is covered.
    expect(api.memoryRequestBytes.target / mib).toBeGreaterThan(300);
    expect(api.memoryRequestBytes.target / mib).toBeLessThan(300 * 1.15 * 1.06);

    const db = recommendationOf(states, "db", "postgres");
    expect(db.cpuRequestCores.target).toBeCloseTo(0.2 * 1.15, 1);
    expect(db.memoryRequestBytes.target / mib).toBeGreaterThan(1024);
    expect(db.confidence).toBe(1);

    // A week without pods is absent time, not idle time: the request stays at the running level.
    const worker = recommendationOf(states, "worker", "main");
    expect(worker.reasons).toContain(Reason.pausedTimeExcluded);
    expect(worker.cpuRequestCores.target).toBeGreaterThan(0.8);
    expect(worker.historyMs).toBeLessThanOrEqual(7 * day + step);
  });

  it("resumes from a checkpoint and fetches only the newer samples", async () => {
    const yesterday = Date.now() - day;
    const first = await fetchUsage(client(), targets, yesterday, config);
    if (!first.ok) throw new Error(first.error.message);
    // Through the checkpoint text, as a restarted operator would read it back.
    const restored = new Map<string, RecommenderState>();
    for (const [key, state] of learnAll(first.value.histories)) {
      const parsed = parseCheckpoint(serializeCheckpoint(state, defaultConfig), defaultConfig);
      if (!parsed.ok) throw new Error(parsed.error);
      restored.set(key, parsed.value);
    }
    const since = (t: UsageTarget) =>
      restored.get(containerKey(t, t.containers[0] ?? ""))?.lastSampleAt ?? null;
    const resumedTargets = targets.map((t) => ({ ...t, since: since(t) }));
    const checkpointAt = Math.min(...resumedTargets.map((t) => t.since ?? Number.POSITIVE_INFINITY));

    const now = Date.now();
    const resumed = await fetchUsage(client(), resumedTargets, now, config);
    if (!resumed.ok) throw new Error(resumed.error.message);
    // Each query starts after the checkpoint and covers about a day, not fourteen.
    for (const q of resumed.value.queries) {
      expect(q.start).toBeGreaterThan(checkpointAt);
      expect(q.end - q.start).toBeLessThanOrEqual(day + 2 * step);
    }
    const resumedStates = learnAll(resumed.value.histories, restored);

    const whole = await fetchUsage(client(), targets, now, config);
    if (!whole.ok) throw new Error(whole.error.message);
    const wholeStates = learnAll(whole.value.histories);
    const pick = (r: Recommendation) => [r.cpuRequestCores.target, r.memoryRequestBytes.target];
    for (const [workload, container] of [
      ["api", "app"],
      ["db", "postgres"],
    ] as const) {
      const a = pick(recommendationOf(resumedStates, workload, container));
      const b = pick(recommendationOf(wholeStates, workload, container));
      a.forEach((value, i) => {
        expect(Math.abs(value - (b[i] ?? 0)) / value).toBeLessThan(0.02);
      });
    }
  });

  it("reads a native sidecar's OOM kill and restart, which kube-state-metrics reports as an init container's", async () => {
    // edge-0's sidecar `proxy` (an init container with restartPolicy: Always) is OOM-killed once, two hours ago.
    const from = end - 6 * hour;
    const killedAt = Math.floor((end - 2 * hour) / step) * step;
    const times: number[] = [];
    for (let t = Math.floor(from / step) * step; t <= end; t += step) times.push(t);
    const labels = `{namespace="${namespace}",pod="edge-0",container="proxy"}`;
    const openMetrics = [
      "# TYPE kube_pod_init_container_status_restarts_total counter",
      ...times.map(
        (t) => `kube_pod_init_container_status_restarts_total${labels} ${t >= killedAt ? 1 : 0} ${t / 1000}`,
      ),
      "# TYPE kube_pod_init_container_status_last_terminated_reason gauge",
      ...times
        .filter((t) => t >= killedAt)
        .map(
          (t) =>
            `kube_pod_init_container_status_last_terminated_reason${labels.slice(0, -1)},reason="OOMKilled"} 1 ${t / 1000}`,
        ),
      "# EOF",
      "",
    ].join("\n");
    await loadPrometheusHistory(clients.info.harnessUrl, openMetrics);
    await loadPrometheusHistory(
      clients.info.harnessUrl,
      containerUsageOpenMetrics(
        [
          {
            namespace,
            pod: "edge-0",
            container: "proxy",
            cpuCores: () => 0.05,
            memoryBytes: () => 128 * mib,
          },
        ],
        { end, durationMs: 6 * hour, stepMs: step },
      ),
    );
    const edge: UsageTarget = {
      namespace,
      workload: "edge",
      kind: "StatefulSet",
      containers: ["proxy"],
      since: null,
    };
    const result = await fetchUsage(client(), [edge], Date.now(), config);
    if (!result.ok) throw new Error(result.error.message);
    const history = result.value.histories.get(
      containerKey({ namespace, kind: "StatefulSet", workload: "edge" }, "proxy"),
    );
    expect(history?.ooms?.map((o) => o.t)).toEqual([killedAt]);
    expect(history?.restarts?.map((r) => r.t)).toEqual([killedAt]);
  });

  it("turns a Prometheus outage into an error value, not an empty or zero history", async () => {
    const down = prometheusClient({
      url: "http://127.0.0.1:9",
      retries: 2,
      initialBackoffMs: 10,
      timeoutMs: 2_000,
    });
    const result = await fetchUsage(down, targets, Date.now(), config);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.cause).toMatchObject({ kind: "network", attempts: 3 });
    expect(result.error.cause.query).toContain(namespace);
    expect(result.error.message).toMatch(/^metrics source network after 3 attempt\(s\)/);
  });
});
