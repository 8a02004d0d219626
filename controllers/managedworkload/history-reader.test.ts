import { describe, expect, it } from "vitest";
import type { ManagedWorkload } from "../../api/managedworkload.ts";
import { type GridPoint, SLOT_MS, slotOf } from "../../forecast/index.ts";
import type { PrometheusClient } from "../../rightsizing/prometheus-client.ts";
import { defaultPromQLConfig } from "../../rightsizing/promql.ts";
import {
  type ActivityHistoryReader,
  activityHistoryReader,
  HistoryLoader,
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
  it("asks for the CPU and each activity query over the slots, in 5-minute steps within them", async () => {
    const { client, calls } = prometheus(() => ({ ok: true, value: [], warnings: [] }));
    const reader = activityHistoryReader({ prometheus: client, promql: defaultPromQLConfig });
    const points = await reader.read(workload, from, from + 4);
    expect(points).toHaveLength(4);
    expect(calls.map((c) => c.query)).toEqual([expect.stringMatching(/^sum\(/), "sum(queue_depth)"]);
    for (const call of calls) {
      expect(call).toMatchObject({
        start: from * SLOT_MS,
        end: (from + 4) * SLOT_MS - 300_000,
        stepMs: 300_000,
      });
    }
  });

  it("fails with Prometheus' reason and the query", async () => {
    const { client } = prometheus((query) => ({
      ok: false,
      error: { kind: "query", message: "parse error", query, attempts: 1 },
    }));
    const reader = activityHistoryReader({ prometheus: client, promql: defaultPromQLConfig });
    await expect(reader.read(workload, from, from + 4)).rejects.toThrow(/^parse error \(query: sum\(/);
  });
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
    waiting[1]?.fail(new Error("HTTP 503"));
    await settle();
    expect(results).toEqual([
      { key: "shop/a", mw: named("a"), points: [] },
      { key: "shop/b", mw: named("b"), error: "HTTP 503" },
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
});
