import { describe, expect, it } from "vitest";
import { defaultConfig, emptyState, foldHistory, serializeCheckpoint } from "../../rightsizing/index.ts";
import type { PrometheusClient } from "../../rightsizing/prometheus-client.ts";
import { deploymentPodName } from "../../rightsizing/testing.ts";
import { defaultUsageSourceConfig } from "../../rightsizing/usage-source.ts";
import type { CoveredWorkload } from "./coverage.ts";
import { RecommenderMemory, runRecommender, workloadKey } from "./run.ts";

const step = defaultUsageSourceConfig.stepMs;
const lag = defaultUsageSourceConfig.lagMs;
const audit = { mode: "audit", requested: "audit", source: "global-default" } as const;
const web: CoveredWorkload = {
  kind: "Deployment",
  namespace: "shop",
  name: "web",
  uid: "u1",
  replicas: 1,
  containers: [{ name: "app" }],
  modes: { cpu: audit, memory: audit, strategy: "in-place", matchedPolicies: [] },
};

/** A Prometheus that answers every query with nothing, recording each range query and where it starts. */
function emptyPrometheus() {
  const ranges: string[] = [];
  const starts: number[] = [];
  const client: PrometheusClient = {
    query: async () => ({ ok: true, value: [] }),
    queryRange: async (q, range) => {
      ranges.push(q);
      starts.push(range.start);
      return { ok: true, value: [] };
    },
  };
  return { client, ranges, starts };
}

/** A Prometheus where only the `app` container of `web` has usage, at every step asked; records each range read. */
function appOnlyPrometheus() {
  const starts: number[] = [];
  const client: PrometheusClient = {
    query: async () => ({ ok: true, value: [] }),
    queryRange: async (query, range) => {
      starts.push(range.start);
      if (!/cpu|memory/.test(query)) return { ok: true, value: [] };
      const points: [number, number][] = [];
      for (let t = range.start; t <= range.end; t += step)
        points.push([t, query.includes("memory") ? 2 ** 28 : 0.2]);
      return {
        ok: true,
        value: [{ metric: { namespace: "shop", pod: "web-7d9f8c6b5-wwwww", container: "app" }, points }],
      };
    },
  };
  return { client, starts };
}

const run = (client: PrometheusClient, memory: RecommenderMemory, covered: CoveredWorkload, nowMs: number) =>
  runRecommender({
    client,
    covered: [covered],
    memory,
    checkpointOf: () => undefined,
    settings: { usage: defaultUsageSourceConfig, recommender: defaultConfig },
    nowMs,
    log: { warn: () => undefined },
  });

describe("a recommender run", () => {
  const firstRunAt = Date.parse("2026-11-20T10:00:00Z");
  const hourLater = firstRunAt + 3_600_000;
  const lookbackStart = (nowMs: number) => nowMs - lag - defaultUsageSourceConfig.lookbackMs;

  it("reads a workload whose sidecar never had samples from where it last read it, not the whole lookback again", async () => {
    const withSidecar = { ...web, containers: [{ name: "app" }, { name: "sidecar" }] };
    const { client, starts } = appOnlyPrometheus();
    const memory = new RecommenderMemory();
    expect((await run(client, memory, withSidecar, firstRunAt)).ok).toBe(true);
    const firstStart = Math.min(...starts);
    expect(firstStart).toBeLessThanOrEqual(lookbackStart(firstRunAt) + step);
    starts.length = 0;

    expect((await run(client, memory, withSidecar, hourLater)).ok).toBe(true);
    expect(Math.min(...starts)).toBeGreaterThan(firstRunAt - lag - step);
    const outcome = memory.outcomes.get(workloadKey(withSidecar));
    expect(outcome?.ok && [...outcome.containers.keys()]).toEqual(["app"]);
  });

  it("reads a workload from the lookback when one container's checkpoint cannot be read, though a sibling's can", async () => {
    const withSidecar = { ...web, containers: [{ name: "app" }, { name: "sidecar" }] };
    const until = Math.floor((firstRunAt - lag) / step) * step;
    const samples = [{ t: until - 12 * step, present: true, cpuCores: 0.2, memoryBytes: 2 ** 28 }];
    const good = serializeCheckpoint(
      foldHistory(emptyState(defaultConfig), { stepMs: step, samples }, defaultConfig),
      defaultConfig,
    );
    const { client, starts } = appOnlyPrometheus();
    const warnings: object[] = [];
    await runRecommender({
      client,
      covered: [withSidecar],
      memory: new RecommenderMemory(),
      checkpointOf: (_w, container) => (container === "app" ? good : '{"v":1,"broken":true}'),
      settings: { usage: defaultUsageSourceConfig, recommender: defaultConfig },
      nowMs: firstRunAt,
      log: { warn: (o) => warnings.push(o) },
    });
    expect(warnings).toHaveLength(1);
    expect(Math.min(...starts)).toBeLessThanOrEqual(lookbackStart(firstRunAt) + step);
  });

  it("relearns a workload whose checkpoint cannot be read from the lookback once, not at every run", async () => {
    const { client, starts } = emptyPrometheus();
    const memory = new RecommenderMemory();
    const warnings: object[] = [];
    const runAt = (nowMs: number) =>
      runRecommender({
        client,
        covered: [web],
        memory,
        checkpointOf: () => '{"v":1,"broken":true}',
        settings: { usage: defaultUsageSourceConfig, recommender: defaultConfig },
        nowMs,
        log: { warn: (o) => warnings.push(o) },
      });
    expect((await runAt(firstRunAt)).ok).toBe(true);
    expect(Math.min(...starts)).toBeLessThanOrEqual(lookbackStart(firstRunAt) + step);
    starts.length = 0;
    expect((await runAt(hourLater)).ok).toBe(true);
    expect(Math.min(...starts)).toBeGreaterThan(firstRunAt - lag - step);
    expect(warnings).toHaveLength(1);
  });

  it("reads a workload with no samples at all from the lookback once, then from where that run read through", async () => {
    const { client, starts } = emptyPrometheus();
    const memory = new RecommenderMemory();
    expect((await run(client, memory, web, firstRunAt)).ok).toBe(true);
    expect(starts.length).toBeGreaterThan(0);
    starts.length = 0;
    expect((await run(client, memory, web, hourLater)).ok).toBe(true);
    expect(Math.min(...starts)).toBeGreaterThan(firstRunAt - lag - step);
    // Forgotten with the workload: covered again later, it is read from the lookback.
    memory.retain([]);
    expect(memory.readThrough.size).toBe(0);
  });

  it("learns nothing from a partial answer, and says the run failed for it", async () => {
    const memory = new RecommenderMemory();
    const client: PrometheusClient = {
      query: async () => ({ ok: true, value: [] }),
      queryRange: async (query) => ({
        ok: false,
        error: { kind: "partial", message: "store eu-2 did not reply", query, attempts: 3 },
      }),
    };
    const summary = await runRecommender({
      client,
      covered: [web],
      memory,
      checkpointOf: () => undefined,
      settings: { usage: defaultUsageSourceConfig, recommender: defaultConfig },
      nowMs: Date.parse("2026-11-20T10:00:00Z"),
      log: { warn: () => {} },
    });
    expect(summary).toMatchObject({
      ok: false,
      error: "metrics source partial after 3 attempt(s): store eu-2 did not reply",
    });
    expect(memory.states.size).toBe(0);
  });

  it("reads nothing when every container has learned up to the newest step, and says history is complete to it", async () => {
    const until = Date.parse("2026-11-20T10:00:00Z");
    const state = foldHistory(
      emptyState(defaultConfig),
      { stepMs: step, samples: [{ t: until, present: true, cpuCores: 0.2, memoryBytes: 2 ** 28 }] },
      defaultConfig,
    );
    const { client, ranges } = emptyPrometheus();
    const memory = new RecommenderMemory();
    const nowMs = until + lag + step - 1_000;
    const summary = await runRecommender({
      client,
      covered: [web],
      memory,
      checkpointOf: () => serializeCheckpoint(state, defaultConfig),
      settings: { usage: defaultUsageSourceConfig, recommender: defaultConfig },
      nowMs,
      log: { warn: () => undefined },
    });
    expect(summary.ok).toBe(true);
    expect(ranges).toEqual([]);
    const outcome = memory.outcomes.get(workloadKey(web));
    expect(outcome?.ok && outcome.untilMs).toBe(until);
    expect(outcome?.ok && outcome.containers.get("app")?.checkpoint).toBe(
      serializeCheckpoint(state, defaultConfig),
    );
  });

  it("turns a source that does not answer into an error for every workload, keeping what was learned", async () => {
    const memory = new RecommenderMemory();
    const down: PrometheusClient = {
      query: async () => ({
        ok: false,
        error: { kind: "network", message: "connect ECONNREFUSED", attempts: 4, query: "count(x)" },
      }),
      queryRange: async () => {
        throw new Error("not reached");
      },
    };
    const summary = await runRecommender({
      client: down,
      covered: [web],
      memory,
      checkpointOf: () => undefined,
      settings: { usage: defaultUsageSourceConfig, recommender: defaultConfig },
      nowMs: Date.parse("2026-11-20T10:00:00Z"),
      log: { warn: () => undefined },
    });
    expect(summary).toMatchObject({
      ok: false,
      error: expect.stringMatching(/^metrics source network after 4 attempt/),
    });
    expect(memory.outcomes.get(workloadKey(web))).toMatchObject({ ok: false });
  });

  it("learns nothing for a covered workload from a pod an uncovered one's cut name could give, and says whose", async () => {
    // Both cut by the API server to `<57 a>-` and five random characters; the second has rightsizing off.
    const covered = { ...web, name: "a".repeat(57) };
    const off = { namespace: "shop", name: `${"a".repeat(57)}-x`, kind: "Deployment" } as const;
    const client: PrometheusClient = {
      query: async () => ({ ok: true, value: [] }),
      queryRange: async (query, range) => {
        if (!/cpu|memory/.test(query)) return { ok: true, value: [] };
        const points: [number, number][] = [];
        for (let t = range.start; t <= range.end; t += step) points.push([t, 3]);
        const pod = deploymentPodName(off.name);
        return { ok: true, value: [{ metric: { namespace: "shop", pod, container: "app" }, points }] };
      },
    };
    const memory = new RecommenderMemory();
    const summary = await runRecommender({
      client,
      covered: [covered],
      workloads: [covered, off],
      memory,
      checkpointOf: () => undefined,
      settings: { usage: defaultUsageSourceConfig, recommender: defaultConfig },
      nowMs: Date.parse("2026-11-20T10:00:00Z"),
      log: { warn: () => undefined },
    });
    expect(summary).toMatchObject({ ok: true, containers: 0 });
    expect(memory.outcomes.get(workloadKey(covered))).toMatchObject({
      ok: true,
      containers: new Map(),
      podNamesSharedWith: [`shop/Deployment/${off.name}`],
    });
  });

  describe("an OOM kill, booked at the memory limit it proves the container needed", () => {
    const GIB = 2 ** 30;
    const killAt = Math.floor((hourLater - lag) / step) * step - 6 * step;
    /** 0.9 GiB of working set at every step asked, and one OOM kill at `killAt`. */
    const killed: PrometheusClient = {
      query: async () => ({ ok: true, value: [] }),
      queryRange: async (query, range) => {
        const pod = { namespace: "shop", pod: "web-7d9f8c6b5-wwwww", container: "app" };
        const points: [number, number][] = [];
        if (query.includes("OOMKilled") || query.includes("restarts")) {
          if (killAt >= range.start && killAt <= range.end) points.push([killAt, 1]);
        } else {
          for (let t = range.start; t <= range.end; t += step)
            points.push([t, query.includes("memory") ? 0.9 * GIB : 0.2]);
        }
        return { ok: true, value: points.length > 0 ? [{ metric: pod, points }] : [] };
      },
    };
    const limited = (limitGiB: number): CoveredWorkload => ({
      ...web,
      containers: [{ name: "app", memoryRequestBytes: GIB, memoryLimitBytes: limitGiB * GIB }],
    });
    const requestAfter = async (runs: { atMs: number; limitGiB: number }[]) => {
      const memory = new RecommenderMemory();
      for (const { atMs, limitGiB } of runs)
        expect((await run(killed, memory, limited(limitGiB), atMs)).ok).toBe(true);
      const outcome = memory.outcomes.get(workloadKey(web));
      const rec = outcome?.ok ? outcome.containers.get("app")?.recommendation : undefined;
      expect(rec?.reasons).toContain("memory-oom-bump");
      return (rec?.memoryRequestBytes.target ?? 0) / GIB;
    };

    it.each([
      {
        what: "the limit the pods had, unchanged since the last run",
        limits: [1, 1],
        atLeast: 1.2,
        below: 2,
      },
      { what: "the old limit, raised to 8 GiB after the kill", limits: [1, 8], atLeast: 1.2, below: 2 },
      { what: "the limit lowered to before the kill", limits: [2, 1], atLeast: 1.2, below: 2 },
    ])("takes $what", async ({ limits, atLeast, below }) => {
      const request = await requestAfter([
        { atMs: firstRunAt, limitGiB: limits[0] ?? 1 },
        { atMs: hourLater, limitGiB: limits[1] ?? 1 },
      ]);
      expect(request).toBeGreaterThanOrEqual(atLeast);
      expect(request).toBeLessThan(below);
    });

    it("takes only the working set before the kill in a process's first read, when the limit may have changed since", async () => {
      const request = await requestAfter([{ atMs: hourLater, limitGiB: 8 }]);
      expect(request).toBeLessThan(2);
    });
  });
});
