import { describe, expect, it } from "vitest";
import type { ManagedWorkload } from "../../api/managedworkload.ts";
import { type GridPoint, SLOT_MS, slotOf } from "../../forecast/index.ts";
import type { PrometheusClient } from "../../rightsizing/prometheus-client.ts";
import { defaultPromQLConfig } from "../../rightsizing/promql.ts";
import {
  type ActivityHistoryReader,
  activityHistoryReader,
  HistoryLoader,
  HistoryReadError,
  type HistoryResult,
} from "./history-reader.ts";

const workload: ManagedWorkload = {
  apiVersion: "napwake.dev/v1alpha1",
  kind: "ManagedWorkload",
  metadata: { name: "web.deployment", namespace: "shop" },
  spec: {
    targetRef: { kind: "Deployment", name: "web" },
    idle: { activityQueries: [{ name: "queue", query: "sum(queue_depth)", threshold: 10 }] },
  },
};
const from = slotOf(Date.parse("2026-11-23T00:00:00Z"));

function prometheus(answer: (query: string) => Awaited<ReturnType<PrometheusClient["queryRange"]>>) {
  const calls: { query: string; start: number; end: number; stepMs: number }[] = [];
  const client: PrometheusClient = {
    async queryRange(query, range) {
      calls.push({ query, ...range });
      return answer(query);
    },
    async query() {
      throw new Error("not used");
    },
  };
  return { client, calls };
}

describe("reading a workload's activity history", () => {
  it("asks for the CPU, the replicas and each activity query over the slots, in 5-minute steps within them", async () => {
    const { client, calls } = prometheus(() => ({ ok: true, value: [] }));
    const reader = activityHistoryReader({ prometheus: client, promql: defaultPromQLConfig });
    const points = await reader.read(workload, from, from + 4);
    expect(points).toHaveLength(4);
    expect(calls).toEqual([
      // A rate covers the step up to its time: at the ends of the steps, the last one at the start of `toSlot`.
      {
        query: expect.stringMatching(/^sum\(/),
        start: from * SLOT_MS + 300_000,
        end: (from + 4) * SLOT_MS,
        stepMs: 300_000,
      },
      // Gauges are read at instants within the slots: the replicas asked for, then each activity query.
      {
        query: 'max(kube_deployment_spec_replicas{namespace="shop",deployment="web"})',
        start: from * SLOT_MS,
        end: (from + 4) * SLOT_MS - 300_000,
        stepMs: 300_000,
      },
      {
        query: "sum(queue_depth)",
        start: from * SLOT_MS,
        end: (from + 4) * SLOT_MS - 300_000,
        stepMs: 300_000,
      },
    ]);
  });

  it("learns a busy last five minutes of a slot in that slot, not the next", async () => {
    const busyUntil = (from + 1) * SLOT_MS;
    const { client } = prometheus((query) => ({
      ok: true,
      value: query.startsWith("sum(max")
        ? [
            {
              metric: {},
              points: [1, 2, 3, 4, 5, 6].map((step) => {
                const t = from * SLOT_MS + step * 300_000;
                return [t, t === busyUntil ? 0.5 : 0] as const;
              }),
            },
          ]
        : [],
    }));
    const reader = activityHistoryReader({ prometheus: client, promql: defaultPromQLConfig });
    expect((await reader.read(workload, from, from + 2)).map((p) => p.value)).toEqual([1, 0]);
  });

  it.each([
    { kind: "query" as const, status: 400, retryable: false },
    { kind: "too-large" as const, status: 422, retryable: false },
    { kind: "http" as const, status: 403, retryable: false },
    { kind: "http" as const, status: 503, retryable: true },
    { kind: "http" as const, status: 429, retryable: true },
    { kind: "timeout" as const, status: undefined, retryable: true },
    { kind: "network" as const, status: undefined, retryable: true },
    { kind: "partial" as const, status: 200, retryable: true },
  ])(
    "fails with Prometheus' reason and the query; a $kind $status may be retried: $retryable",
    async ({ kind, status, retryable }) => {
      const { client } = prometheus((query) => ({
        ok: false,
        error: { kind, message: "parse error", query, attempts: 1, ...(status ? { status } : {}) },
      }));
      const reader = activityHistoryReader({ prometheus: client, promql: defaultPromQLConfig });
      const failure = await reader.read(workload, from, from + 4).catch((err: unknown) => err);
      expect(failure).toBeInstanceOf(HistoryReadError);
      expect((failure as HistoryReadError).message).toMatch(/^parse error \(query: sum\(/);
      expect((failure as HistoryReadError).retryable).toBe(retryable);
    },
  );
});

describe("the history loader", () => {
  /** A reader whose reads wait until released, one by one. */
  function heldReader() {
    const waiting: { key: string; release: (points: GridPoint[]) => void; fail: (e: Error) => void }[] = [];
    const reader: ActivityHistoryReader = {
      read: (mw) => new Promise((release, fail) => waiting.push({ key: mw.metadata.name, release, fail })),
    };
    return { reader, waiting };
  }
  const named = (name: string): ManagedWorkload => ({
    ...workload,
    metadata: { ...workload.metadata, name },
  });
  const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

  it("reads at most as many at once as it may, once per key, and hands over each result", async () => {
    const { reader, waiting } = heldReader();
    const results: HistoryResult[] = [];
    const loader = new HistoryLoader(reader, 2, (r) => results.push(r));
    for (const name of ["a", "b", "c", "a"]) loader.request(`shop/${name}`, named(name), from, from + 4);
    expect(waiting.map((w) => w.key)).toEqual(["a", "b"]);
    loader.request("shop/a", named("a"), from, from + 4);
    waiting[0]?.release([]);
    waiting[1]?.fail(new HistoryReadError("HTTP 503", true));
    await settle();
    expect(results).toEqual([
      { key: "shop/a", mw: named("a"), points: [] },
      { key: "shop/b", mw: named("b"), error: "HTTP 503", retryable: true },
    ]);
    expect(waiting.map((w) => w.key)).toEqual(["a", "b", "c"]);
  });

  it("starts nothing more and drops results once stopped", async () => {
    const { reader, waiting } = heldReader();
    const results: HistoryResult[] = [];
    const loader = new HistoryLoader(reader, 1, (r) => results.push(r));
    loader.request("shop/a", named("a"), from, from + 4);
    loader.request("shop/b", named("b"), from, from + 4);
    loader.stop();
    waiting[0]?.release([]);
    await settle();
    expect(results).toEqual([]);
    expect(waiting).toHaveLength(1);
  });

  it("says a failure that is not a read error may not be retried", async () => {
    const { reader, waiting } = heldReader();
    const results: HistoryResult[] = [];
    const loader = new HistoryLoader(reader, 1, (r) => results.push(r));
    loader.request("shop/a", named("a"), from, from + 4);
    waiting[0]?.fail(new TypeError("a bug"));
    await settle();
    expect(results).toEqual([{ key: "shop/a", mw: named("a"), error: "a bug", retryable: false }]);
  });

  it("goes on with the next key when handing over a result throws, and says so", async () => {
    const { reader, waiting } = heldReader();
    const failed: string[] = [];
    const loader = new HistoryLoader(
      reader,
      1,
      () => {
        throw new Error("learning failed");
      },
      { failed: (key, err) => failed.push(`${key}: ${(err as Error).message}`) },
    );
    loader.request("shop/a", named("a"), from, from + 4);
    loader.request("shop/b", named("b"), from, from + 4);
    waiting[0]?.release([]);
    await settle();
    expect(failed).toEqual(["shop/a: learning failed"]);
    expect(waiting.map((w) => w.key)).toEqual(["a", "b"]);
  });

  it("goes on with the next key when saying so throws too", async () => {
    const { reader, waiting } = heldReader();
    const loader = new HistoryLoader(
      reader,
      1,
      () => {
        throw new Error("learning failed");
      },
      {
        failed: () => {
          throw new Error("logger down");
        },
      },
    );
    loader.request("shop/a", named("a"), from, from + 4);
    loader.request("shop/b", named("b"), from, from + 4);
    waiting[0]?.release([]);
    await settle().catch(() => {});
    expect(waiting.map((w) => w.key)).toEqual(["a", "b"]);
  });

  it("fails a read whose reader throws rather than rejects, and goes on with the next key", async () => {
    const { reader, waiting } = heldReader();
    const results: HistoryResult[] = [];
    const throwing: ActivityHistoryReader = {
      read: (mw, fromSlot, toSlot) => {
        if (mw.metadata.name === "bad") throw new Error("boom");
        return reader.read(mw, fromSlot, toSlot);
      },
    };
    const loader = new HistoryLoader(throwing, 1, (result) => results.push(result));
    expect(() => loader.request("shop/bad", named("bad"), from, from + 4)).not.toThrow();
    loader.request("shop/good", named("good"), from, from + 4);
    await settle();
    expect(results).toMatchObject([{ key: "shop/bad", error: "boom", retryable: false }]);
    expect(waiting.map((w) => w.key)).toEqual(["good"]);
  });

  it("does not read a queued key that is no longer wanted when its turn comes", async () => {
    const { reader, waiting } = heldReader();
    const wanted = new Set(["shop/a", "shop/b", "shop/c"]);
    const loader = new HistoryLoader(reader, 1, () => {}, { wanted: (key) => wanted.has(key) });
    for (const name of ["a", "b", "c"]) loader.request(`shop/${name}`, named(name), from, from + 4);
    wanted.delete("shop/b");
    waiting[0]?.release([]);
    await settle();
    expect(waiting.map((w) => w.key)).toEqual(["a", "c"]);
  });
});
