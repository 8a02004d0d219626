import type { ConfigurationOptions, CustomObjectsApi, RequestContext } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { activityMeter } from "./measure.ts";

const pod = (app: string, cpu: string) => ({
  metadata: { labels: { app } },
  containers: [{ usage: { cpu } }],
});

/** A metrics.k8s.io client that answers from a fixed list and counts the LISTs. */
function podMetrics(items: ReturnType<typeof pod>[]) {
  const calls: { namespace: string; labelSelector?: string }[] = [];
  const custom = {
    listNamespacedCustomObject: async (req: { namespace: string; labelSelector?: string }) => {
      calls.push(req);
      return { items };
    },
  } as unknown as CustomObjectsApi;
  return { custom, calls };
}

const measure = (meter: ReturnType<typeof activityMeter>, app: string, nowMs: number, replicas = 2) =>
  meter.measure({ namespace: "shop", selector: { matchLabels: { app } }, replicas, queries: [], nowMs });

describe("pod CPU from metrics.k8s.io", () => {
  it("reads a namespace's pod metrics once per interval for all of its workloads", async () => {
    const { custom, calls } = podMetrics([pod("web", "30m"), pod("web", "20m"), pod("api", "400m")]);
    const meter = activityMeter({ custom, podMetricsMaxAgeMs: 10_000 });
    const [web, api] = await Promise.all([measure(meter, "web", 1_000), measure(meter, "api", 1_000)]);
    expect(web.cpuCores).toBeCloseTo(0.05);
    expect(api.cpuCores).toBeCloseTo(0.4);
    expect(await measure(meter, "web", 9_000)).toMatchObject({ cpuCores: expect.closeTo(0.05) });
    expect(calls).toHaveLength(1);
    await measure(meter, "web", 12_000);
    expect(calls).toHaveLength(2);
  });

  it.each([
    {
      what: "no figure, not zero, for a running workload whose pods have no metrics yet",
      replicas: 2,
      cpu: null,
    },
    { what: "zero for a workload scaled to zero", replicas: 0, cpu: 0 },
  ])("gives $what", async ({ replicas, cpu }) => {
    const { custom } = podMetrics([pod("api", "400m")]);
    const sample = await measure(activityMeter({ custom }), "web", 1_000, replicas);
    expect(sample.cpuCores).toBe(cpu);
    if (cpu === null) expect(sample.errors).toEqual(["pod CPU: no pod metrics yet"]);
  });

  it("gives up on a namespace's pod metrics that do not come within the timeout, aborts the request and asks again next time", async () => {
    const signals: (AbortSignal | undefined)[] = [];
    const custom = {
      listNamespacedCustomObject: async (_req: unknown, options?: ConfigurationOptions) => {
        const context = { setSignal: (s: AbortSignal) => signals.push(s) } as unknown as RequestContext;
        await options?.middleware?.[0]?.pre(context).toPromise();
        return new Promise(() => {});
      },
    } as unknown as CustomObjectsApi;
    const meter = activityMeter({ custom, timeoutMs: 20 });
    const sample = await measure(meter, "web", 1_000);
    expect(sample.cpuCores).toBeNull();
    expect(sample.errors).toEqual(["pod CPU: metrics.k8s.io gave no pod metrics within 20 ms"]);
    expect(signals[0]?.aborted).toBe(true);
    await measure(meter, "web", 2_000);
    expect(signals).toHaveLength(2);
  });

  it("lets an aborted reconcile stop waiting for the shared list, which the other workloads still get", async () => {
    let answer: (value: { items: ReturnType<typeof pod>[] }) => void = () => {};
    const custom = {
      listNamespacedCustomObject: () => new Promise((resolve) => (answer = resolve)),
    } as unknown as CustomObjectsApi;
    const meter = activityMeter({ custom });
    const superseded = new AbortController();
    const waiting = meter.measure({
      namespace: "shop",
      selector: { matchLabels: { app: "web" } },
      replicas: 1,
      queries: [],
      nowMs: 1_000,
      signal: superseded.signal,
    });
    const other = measure(meter, "web", 1_000, 1);
    superseded.abort(new Error("superseded by a wake"));
    expect((await waiting).errors).toEqual(["pod CPU: superseded by a wake"]);
    answer({ items: [pod("web", "30m")] });
    expect((await other).cpuCores).toBeCloseTo(0.03);
  });
});

describe("activity queries", () => {
  /** A meter whose Prometheus answers every instant query with `data`. */
  const answering = (data: unknown) =>
    activityMeter({
      custom: podMetrics([]).custom,
      prometheusUrl: "http://prom:9090",
      fetch: async () => new Response(JSON.stringify({ status: "success", data })),
    });
  const backlog = { name: "backlog", query: "q", threshold: 5 };
  const vector = (...values: string[]) => ({
    resultType: "vector",
    result: values.map((v) => ({ value: [1, v] })),
  });

  it.each([
    { what: "a scalar (scalar(...))", data: { resultType: "scalar", result: [1, "20"] }, active: true },
    { what: "+Inf (a backlog over zero replicas), above any threshold", data: vector("+Inf"), active: true },
    { what: "-Inf, below any threshold", data: vector("-Inf"), active: false },
    { what: "the first series with a number, past a NaN (0/0)", data: vector("NaN", "50"), active: true },
    { what: "nothing from NaN alone", data: vector("NaN"), active: null },
    { what: "nothing from no series", data: vector(), active: null },
  ])("reads $what", async ({ data, active }) => {
    const sample = await answering(data).measure({
      namespace: "shop",
      selector: undefined,
      replicas: 0,
      queries: [backlog],
      nowMs: 1_000,
    });
    expect(sample.queries[0]?.active).toBe(active);
  });

  describe("with a partial answer (Prometheus warned that a store or shard did not answer)", () => {
    const warned = (data: unknown, warnings: unknown) =>
      activityMeter({
        custom: podMetrics([]).custom,
        prometheusUrl: "http://prom:9090",
        fetch: async () => new Response(JSON.stringify({ status: "success", warnings, data })),
      }).measure({ namespace: "shop", selector: undefined, replicas: 0, queries: [backlog], nowMs: 1_000 });

    it("keeps the activity it shows", async () => {
      const sample = await warned(vector("20"), ["No StoreAPIs matched for this query"]);
      expect(sample.queries[0]).toEqual({ name: "backlog", active: true });
    });

    it("does not read idle from it, and says what Prometheus warned", async () => {
      const sample = await warned(vector("0"), ["store 10.0.0.7:10901 did not answer", "shard 3 timed out"]);
      expect(sample.queries[0]).toEqual({
        name: "backlog",
        active: null,
        error:
          "Prometheus warned its answer may be incomplete: store 10.0.0.7:10901 did not answer (and 1 more); " +
          "an idle reading from it is not trusted",
      });
    });

    it.each([
      { what: "no warnings", warnings: [] },
      { what: "a warnings field that is not a list", warnings: "odd" },
    ])("reads idle from an answer with $what", async ({ warnings }) => {
      const sample = await warned(vector("0"), warnings);
      expect(sample.queries[0]).toEqual({ name: "backlog", active: false });
    });
  });
});
