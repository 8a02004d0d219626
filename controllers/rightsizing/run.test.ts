import { describe, expect, it } from "vitest";
import { defaultConfig, emptyState, foldHistory, serializeCheckpoint } from "../../rightsizing/index.ts";
import type { PrometheusClient } from "../../rightsizing/prometheus-client.ts";
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

/** A Prometheus that answers every query with nothing, counting the range queries. */
function emptyPrometheus() {
  const ranges: string[] = [];
  const client: PrometheusClient = {
    query: async () => ({ ok: true, value: [] }),
    queryRange: async (q) => {
      ranges.push(q);
      return { ok: true, value: [] };
    },
  };
  return { client, ranges };
}

describe("a recommender run", () => {
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
});
