import { describe, expect, it } from "vitest";
import type { PrometheusClient, PromResult, RangeSeries } from "./prometheus-client.ts";
import type { UsageMetric } from "./promql.ts";
import { deploymentPodName } from "./testing.ts";
import type { UsageSourceConfig, UsageTarget } from "./usage-source.ts";
import { assembleHistories, defaultUsageSourceConfig, fetchUsage } from "./usage-source.ts";

const STEP = 5 * 60_000;
const T0 = 1_736_121_600_000;
const at = (i: number) => T0 + i * STEP;
const MIB = 2 ** 20;

const series = (
  pod: string,
  container: string,
  points: [number, number][],
  namespace = "shop",
): RangeSeries => ({
  metric: { namespace, pod, container },
  points: points.map(([i, v]) => [at(i), v] as const),
});

const empty = (): Record<UsageMetric, RangeSeries[]> => ({ cpu: [], memory: [], oom: [], restarts: [] });

const api: UsageTarget = {
  namespace: "shop",
  workload: "api",
  kind: "Deployment",
  containers: ["app"],
  since: null,
};

describe("assembleHistories", () => {
  const range = { start: at(0), end: at(5) };
  const podA = "api-7d9f8c6b5-wwwww";
  const podB = "api-7d9f8c6b5-bbbbb";

  it("marks steps without samples absent, not zero", () => {
    const collected = empty();
    collected.cpu.push(
      series(podA, "app", [
        [0, 0.5],
        [1, 0.5],
        [4, 0.5],
      ]),
    );
    collected.memory.push(
      series(podA, "app", [
        [0, 100],
        [1, 100],
        [4, 100],
      ]),
    );
    const { histories } = assembleHistories([api], collected, range, STEP);
    expect(histories.get("shop/Deployment/api/app")?.samples.map((s) => s.present)).toEqual([
      true,
      true,
      false,
      false,
      true,
      false,
    ]);
  });

  it("starts a container unseen when its target was last read at its first sample, with no absent steps before it", () => {
    const resumed: UsageTarget = { ...api, containers: ["app", "sidecar", "idle"], since: at(-1) };
    const collected = empty();
    collected.cpu.push(series(podA, "app", [[4, 0.5]]), series(podA, "sidecar", [[4, 0.1]]));
    collected.memory.push(series(podA, "app", [[4, 100]]), series(podA, "sidecar", [[4, 10]]));
    const assembled = (unseen?: string[]) =>
      assembleHistories([{ ...resumed, ...(unseen ? { unseen } : {}) }], collected, range, STEP);
    const present = (h: ReturnType<typeof assembled>, container: string) =>
      h.histories.get(`shop/Deployment/api/${container}`)?.samples.map((s) => s.present);

    const withUnseen = assembled(["sidecar", "idle"]);
    expect(present(withUnseen, "app")).toEqual([false, false, false, false, true, false]);
    expect(present(withUnseen, "sidecar")).toEqual([true, false]);
    expect(present(withUnseen, "idle")).toBeUndefined();
    expect(withUnseen.missing).toEqual(["shop/Deployment/api/idle"]);
    // Without the list, the same containers would be learned as absent since the target's last read.
    expect(present(assembled(), "idle")).toEqual([false, false, false, false, false, false]);
  });

  it("keeps a Deployment and a StatefulSet of the same name apart", () => {
    const collected = empty();
    collected.cpu.push(series(podA, "app", [[0, 0.2]]), series("api-0", "app", [[0, 0.9]]));
    collected.memory.push(series(podA, "app", [[0, 100]]), series("api-0", "app", [[0, 900]]));
    const sts: UsageTarget = { ...api, kind: "StatefulSet" };
    const { histories } = assembleHistories([api, sts], collected, { start: at(0), end: at(0) }, STEP);
    const cpu = (key: string) => histories.get(key)?.samples.map((s) => (s.present ? s.cpuCores : null));
    expect(cpu("shop/Deployment/api/app")).toEqual([0.2]);
    expect(cpu("shop/StatefulSet/api/app")).toEqual([0.9]);
  });

  it("reads the pods of a Deployment whose long name the API server cut in its pods' names", () => {
    const name = `checkout-${"x".repeat(60)}`;
    const pod = deploymentPodName(name, "6b7c8d9f5d", "wwwww");
    const collected = empty();
    collected.cpu.push(series(pod, "app", [[0, 0.4]]));
    collected.memory.push(series(pod, "app", [[0, 100]]));
    const target = { ...api, workload: name };
    const { histories } = assembleHistories([target], collected, { start: at(0), end: at(0) }, STEP);
    expect(histories.get(`shop/Deployment/${name}/app`)?.samples.map((s) => s.present)).toEqual([true]);
  });

  it("counts a pod that two workloads' cut names both claim for neither", () => {
    // The API server cuts both to `<57 a>-` and five random characters: their pods cannot be told apart.
    const short = { ...api, workload: "a".repeat(57) };
    const long = { ...api, workload: `${"a".repeat(57)}-x` };
    const collected = empty();
    collected.cpu.push(series(deploymentPodName(long.workload), "app", [[0, 2]]));
    collected.memory.push(series(deploymentPodName(long.workload), "app", [[0, 9000]]));
    const { histories } = assembleHistories([short, long], collected, { start: at(0), end: at(0) }, STEP);
    expect([...histories.keys()]).toEqual([]);
  });

  it("learns no usage from an infinite sample", () => {
    const collected = empty();
    collected.cpu.push(series(podA, "app", [[0, Number.POSITIVE_INFINITY]]));
    collected.memory.push(series(podA, "app", [[0, Number.POSITIVE_INFINITY]]));
    const { histories } = assembleHistories([api], collected, { start: at(0), end: at(0) }, STEP);
    expect(histories.get("shop/Deployment/api/app")?.samples.filter((s) => s.present)).toEqual([]);
  });

  it("starts a new container at its first sample", () => {
    const collected = empty();
    collected.cpu.push(series(podA, "app", [[3, 0.5]]));
    collected.memory.push(series(podA, "app", [[3, 100]]));
    const samples = assembleHistories([api], collected, range, STEP).histories.get(
      "shop/Deployment/api/app",
    )?.samples;
    expect(samples?.map((s) => s.t)).toEqual([at(3), at(4), at(5)]);
  });

  it("gives a resumed container without samples absent steps (it was paused)", () => {
    const { histories, missing } = assembleHistories([{ ...api, since: at(-1) }], empty(), range, STEP);
    expect(histories.get("shop/Deployment/api/app")?.samples).toHaveLength(6);
    expect(histories.get("shop/Deployment/api/app")?.samples.every((s) => !s.present)).toBe(true);
    expect(missing).toEqual([]);
  });

  it("reports a new container without samples as missing, with no history", () => {
    const { histories, missing } = assembleHistories([api], empty(), range, STEP);
    expect(histories.size).toBe(0);
    expect(missing).toEqual(["shop/Deployment/api/app"]);
  });

  it("needs both CPU and memory for a present step", () => {
    const collected = empty();
    collected.cpu.push(
      series(podA, "app", [
        [0, 0.5],
        [1, 0.5],
      ]),
    );
    collected.memory.push(series(podA, "app", [[0, 100]]));
    const samples = assembleHistories([api], collected, { start: at(0), end: at(1) }, STEP).histories.get(
      "shop/Deployment/api/app",
    )?.samples;
    expect(samples?.map((s) => s.present)).toEqual([true, false]);
  });

  it("merges the pods of a workload step by step with the highest value", () => {
    const collected = empty();
    collected.cpu.push(
      series(podA, "app", [
        [0, 0.2],
        [1, 0.9],
      ]),
      series(podB, "app", [
        [0, 0.7],
        [1, 0.1],
      ]),
    );
    collected.memory.push(
      series(podA, "app", [
        [0, 100],
        [1, 300],
      ]),
      series(podB, "app", [
        [0, 200],
        [1, 50],
      ]),
    );
    const samples = assembleHistories([api], collected, { start: at(0), end: at(1) }, STEP).histories.get(
      "shop/Deployment/api/app",
    )?.samples;
    expect(samples).toEqual([
      { t: at(0), present: true, cpuCores: 0.7, memoryBytes: 200 },
      { t: at(1), present: true, cpuCores: 0.9, memoryBytes: 300 },
    ]);
  });

  it("ignores series of other workloads, namespaces and containers", () => {
    const collected = empty();
    collected.cpu.push(
      series("web-7d9f8c6b5-wwwww", "app", [[0, 1]]),
      series(podA, "app", [[0, 1]], "other"),
      series(podA, "sidecar", [[0, 1]]),
    );
    expect(assembleHistories([api], collected, range, STEP).histories.size).toBe(0);
  });

  it("turns OOM kills into events at the working set before the kill, and restarts into events", () => {
    const collected = empty();
    collected.cpu.push(
      series(podA, "app", [
        [0, 0.1],
        [1, 0.1],
        [2, 0.1],
      ]),
    );
    collected.memory.push(
      series(podA, "app", [
        [0, 500 * MIB],
        [1, 900 * MIB],
        [2, 50 * MIB],
      ]),
    );
    collected.oom.push(series(podA, "app", [[2, 1]]));
    collected.restarts.push(series(podA, "app", [[2, 2]]));
    const history = assembleHistories([api], collected, range, STEP).histories.get("shop/Deployment/api/app");
    expect(history?.ooms).toEqual([{ t: at(2), memoryBytes: 900 * MIB }]);
    expect(history?.restarts).toEqual([{ t: at(2) }, { t: at(2) }]);
  });

  it.each([
    { what: "read since a checkpoint, at its memory limit", since: 0, limit: { limitBytes: 1024 * MIB } },
    {
      what: "in a first read of weeks, at its reading alone: the limit may have been raised since",
      since: null,
      limit: {},
    },
  ])("gives an OOM kill $what", ({ since, limit }) => {
    const collected = empty();
    collected.cpu.push(series(podA, "app", [[0, 0.1]]));
    collected.memory.push(series(podA, "app", [[0, 300 * MIB]]));
    collected.oom.push(series(podA, "app", [[1, 1]]));
    const limited = { ...api, since, memoryLimitsBytes: { app: 1024 * MIB } };
    const history = assembleHistories([limited], collected, range, STEP).histories.get(
      "shop/Deployment/api/app",
    );
    expect(history?.ooms).toEqual([{ t: at(1), memoryBytes: 300 * MIB, ...limit }]);
  });
});

type Call = { query: string; start: number; end: number };

function fakeClient(answer: (call: Call) => PromResult<RangeSeries[]>): PrometheusClient & { calls: Call[] } {
  const calls: Call[] = [];
  return {
    calls,
    async queryRange(query, range) {
      const call = { query, start: range.start, end: range.end };
      calls.push(call);
      return answer(call);
    },
    async query() {
      return { ok: true, value: [] };
    },
  };
}

/** A steady container with one pod: every step of the asked range has CPU and memory. */
const steady = (call: Call): PromResult<RangeSeries[]> => {
  const points: [number, number][] = [];
  for (let t = call.start; t <= call.end; t += STEP)
    points.push([t, call.query.includes("memory") ? 300 * MIB : 0.25]);
  const usage = call.query.includes("cpu") || call.query.includes("memory");
  return {
    ok: true,
    value: usage
      ? [{ metric: { namespace: "shop", pod: "api-7d9f8c6b5-wwwww", container: "app" }, points }]
      : [],
  };
};

const config: UsageSourceConfig = {
  ...defaultUsageSourceConfig,
  lagMs: 0,
  lookbackMs: 12 * STEP,
  concurrency: 1,
};

describe("fetchUsage", () => {
  it("asks one query per metric for the whole batch, not one per container", async () => {
    const client = fakeClient(steady);
    const targets = ["api", "web", "db"].map((workload) => ({
      ...api,
      workload,
      containers: ["app", "sidecar"],
    }));
    const result = await fetchUsage(client, targets, at(12), config);
    expect(result.ok).toBe(true);
    expect(client.calls).toHaveLength(4);
    expect(client.calls[0]?.query).toContain('pod=~"(?:api-|db-|web-).+"');
  });

  it("reads only the steps after the checkpoint when resuming", async () => {
    const client = fakeClient(steady);
    const result = await fetchUsage(client, [{ ...api, since: at(9) }], at(12), config);
    expect(client.calls.every((c) => c.start === at(10) && c.end === at(12))).toBe(true);
    expect(
      result.ok && result.value.histories.get("shop/Deployment/api/app")?.samples.map((s) => s.t),
    ).toEqual([at(10), at(11), at(12)]);
  });

  it("reads no further back than the lookback when resuming from a checkpoint older than it", async () => {
    const client = fakeClient(steady);
    const result = await fetchUsage(client, [{ ...api, since: at(-100) }], at(12), config);
    expect(client.calls.every((c) => c.start === at(0) && c.end === at(12))).toBe(true);
    expect(result.ok && result.value.histories.get("shop/Deployment/api/app")?.samples[0]?.t).toBe(at(0));
  });

  it("asks nothing when the checkpoint is up to date", async () => {
    const client = fakeClient(steady);
    const result = await fetchUsage(client, [{ ...api, since: at(12) }], at(12), config);
    expect(client.calls).toHaveLength(0);
    expect(result.ok && result.value.histories.size).toBe(0);
  });

  it("returns an error value naming the query and status when the source fails, never an empty history", async () => {
    const client = fakeClient((call) => ({
      ok: false,
      error: { kind: "http", message: "service unavailable", query: call.query, status: 503, attempts: 4 },
    }));
    const result = await fetchUsage(client, [api], at(12), config);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error.message).toBe(
      "metrics source http (HTTP 503) after 4 attempt(s): service unavailable",
    );
    expect(result.error.cause.query).toContain("container_cpu_usage_seconds_total");
  });

  it("counts a pod two workloads' cut names both claim for neither, in separate batches too", async () => {
    // The API server cuts both to `<57 a>-` and five random characters: their pods cannot be told apart.
    const short: UsageTarget = { ...api, workload: "a".repeat(57), since: at(6) };
    const long: UsageTarget = { ...api, workload: `${"a".repeat(57)}-x` };
    const pod = deploymentPodName(long.workload);
    const client = fakeClient((call) => {
      const points: [number, number][] = [];
      for (let t = call.start; t <= call.end; t += STEP) points.push([t, 0.5]);
      const usage = call.query.includes("cpu") || call.query.includes("memory");
      const series = [{ metric: { namespace: "shop", pod, container: "app" }, points }];
      return { ok: true, value: usage ? series : [] };
    });
    const result = await fetchUsage(client, [short, long], at(12), config);
    if (!result.ok) throw new Error(result.error.message);
    const present = (workload: string) =>
      result.value.histories.get(`shop/Deployment/${workload}/app`)?.samples.filter((s) => s.present) ?? [];
    // Resumed from different steps, the two are read in separate batches.
    expect(new Set(client.calls.map((c) => c.start)).size).toBe(2);
    expect(present(short.workload)).toEqual([]);
    expect(present(long.workload)).toEqual([]);
    expect(result.value.sharedPodNames).toEqual(
      new Map([
        [`shop/Deployment/${short.workload}`, [`shop/Deployment/${long.workload}`]],
        [`shop/Deployment/${long.workload}`, [`shop/Deployment/${short.workload}`]],
      ]),
    );
  });

  it("counts a pod that a workload whose usage is not read could have as well for no target", async () => {
    // The one not read (rightsizing off for it) is named cut alike: its pods could be the target's.
    const covered: UsageTarget = { ...api, workload: "a".repeat(57) };
    const off = { namespace: "shop", kind: "Deployment", workload: `${"a".repeat(57)}-x` } as const;
    const client = fakeClient((call) => {
      const points: [number, number][] = [];
      for (let t = call.start; t <= call.end; t += STEP) points.push([t, 3]);
      const usage = call.query.includes("cpu") || call.query.includes("memory");
      const pod = deploymentPodName(off.workload);
      return {
        ok: true,
        value: usage ? [{ metric: { namespace: "shop", pod, container: "app" }, points }] : [],
      };
    });
    const result = await fetchUsage(client, [covered], at(12), config, [covered, off]);
    if (!result.ok) throw new Error(result.error.message);
    const history = result.value.histories.get(`shop/Deployment/${covered.workload}/app`);
    expect(history?.samples.filter((s) => s.present) ?? []).toEqual([]);
    expect(result.value.sharedPodNames).toEqual(
      new Map([[`shop/Deployment/${covered.workload}`, [`shop/Deployment/${off.workload}`]]]),
    );
  });

  it("halves a window the source says is too large, and covers every step", async () => {
    const client = fakeClient((call) =>
      call.end - call.start > 3 * STEP
        ? {
            ok: false,
            error: { kind: "too-large", message: "too many samples", query: call.query, attempts: 1 },
          }
        : steady(call),
    );
    const result = await fetchUsage(client, [api], at(12), config);
    expect(
      result.ok && result.value.histories.get("shop/Deployment/api/app")?.samples.filter((s) => s.present),
    ).toHaveLength(13);
  });

  it("splits the range so no query returns more points than the bound", async () => {
    const client = fakeClient(steady);
    const bounded = { ...config, range: { maxPoints: 8, maxSteps: 100 } };
    await fetchUsage(client, [{ ...api, containers: ["app", "sidecar"] }], at(12), bounded);
    const usage = client.calls.filter((c) => c.query.includes("cpu_usage"));
    expect(usage.map((c) => (c.end - c.start) / STEP + 1)).toEqual([4, 4, 4, 1]);
  });
});
