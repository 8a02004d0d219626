/**
 * One run of the recommender over every covered workload: read only the usage newer than what each
 * container has learned (batched range queries, one batch folded and let go at a time), fold it in,
 * recommend. What was learned stays in memory between runs; on the first run after start or after winning
 * the lease it is restored from the checkpoints in the Rightsizing statuses, so only new samples are read.
 */

import {
  emptyState,
  foldHistory,
  parseCheckpoint,
  type RecommenderConfig,
  type RecommenderState,
  recommend,
  serializeCheckpoint,
} from "../../rightsizing/index.ts";
import { templateHashCutTo } from "../../rightsizing/pod-names.ts";
import type { PrometheusClient } from "../../rightsizing/prometheus-client.ts";
import { alignDown } from "../../rightsizing/promql.ts";
import {
  containerKey,
  describeFailure,
  fetchUsageBatches,
  probeSource,
  type UsageQueryRecord,
  type UsageSourceConfig,
  type UsageTarget,
  type WorkloadIdentity,
  workloadName,
} from "../../rightsizing/usage-source.ts";
import type { CoveredWorkload } from "./coverage.ts";
import type { RunOutcome } from "./decide.ts";

export type RunLogger = { warn(obj: object, msg: string): void };

export type RunSettings = {
  readonly usage: UsageSourceConfig;
  readonly recommender: RecommenderConfig;
};

export type RunSummary = {
  readonly ok: boolean;
  readonly workloads: number;
  readonly containers: number;
  readonly queries: readonly UsageQueryRecord[];
  readonly error?: string;
};

/** A workload, covered or not, by what names it. */
export type WorkloadRef = Pick<CoveredWorkload, "namespace" | "name" | "kind">;

/** The workload as the usage source names it. */
const usageIdentity = (w: WorkloadRef): WorkloadIdentity => ({
  namespace: w.namespace,
  kind: w.kind,
  workload: w.name,
});

/** workload key (`namespace/name.kind`, the Rightsizing object's key) of a covered workload. */
export function workloadKey(w: Pick<CoveredWorkload, "namespace" | "name" | "kind">): string {
  return `${w.namespace}/${w.name}.${w.kind.toLowerCase()}`;
}

export class RecommenderMemory {
  /** Learned state per container key. */
  readonly states = new Map<string, RecommenderState>();
  /** The last run's outcome per workload key. */
  readonly outcomes = new Map<string, RunOutcome>();
  /** Per workload key, the newest step a successful run read its usage through. */
  readonly readThrough = new Map<string, number>();
  /**
   * Per container key, the lowest memory limit its pod template had at the runs since its usage was last read
   * (that read's included): a kill read now happened at one of them, or at one changed between two runs.
   */
  readonly limitsSinceRead = new Map<string, number>();

  /** Forgets workloads no longer covered, so memory follows the cluster. */
  retain(covered: readonly CoveredWorkload[]): void {
    const workloads = new Set(covered.map(workloadKey));
    const containers = new Set(
      covered.flatMap((w) => w.containers.map((c) => containerKey(usageIdentity(w), c.name))),
    );
    for (const key of this.outcomes.keys()) if (!workloads.has(key)) this.outcomes.delete(key);
    for (const key of this.readThrough.keys()) if (!workloads.has(key)) this.readThrough.delete(key);
    for (const key of this.limitsSinceRead.keys()) if (!containers.has(key)) this.limitsSinceRead.delete(key);
    for (const key of this.states.keys()) if (!containers.has(key)) this.states.delete(key);
  }
}

export async function runRecommender(opts: {
  readonly client: PrometheusClient;
  readonly covered: readonly CoveredWorkload[];
  /**
   * Every workload in the caches, covered or not: a pod whose name one that is not covered could give it is
   * counted for no covered one, as between two covered ones. Default: the covered ones alone.
   */
  readonly workloads?: readonly WorkloadRef[];
  readonly memory: RecommenderMemory;
  /** The checkpoint a Rightsizing status holds for a container, if any. */
  readonly checkpointOf: (workload: CoveredWorkload, container: string) => string | undefined;
  readonly settings: RunSettings;
  readonly nowMs: number;
  readonly log: RunLogger;
}): Promise<RunSummary> {
  const { covered, memory, settings, nowMs } = opts;
  memory.retain(covered);
  const fail = (error: string, queries: readonly UsageQueryRecord[]): RunSummary => {
    for (const w of covered) memory.outcomes.set(workloadKey(w), { ok: false, atMs: nowMs, error });
    noteLimits(covered, memory, false);
    return { ok: false, workloads: covered.length, containers: 0, queries, error };
  };
  // Asked every run, even when no range query is due: "metrics source healthy" gates auto-patch.
  const probe = await probeSource(opts.client, settings.usage.promql);
  if (!probe.ok) return fail(describeFailure(probe.error), []);
  const targets = covered.map((w) => usageTarget(w, opts));
  let queries: readonly UsageQueryRecord[] = [];
  // The newest step a run may read; also what history is complete through when no query was due.
  let untilMs = alignDown(nowMs - settings.usage.lagMs, settings.usage.stepMs);
  const sharedPodNames = new Map<string, readonly string[]>();
  const others = (opts.workloads ?? []).map(usageIdentity);
  for await (const batch of fetchUsageBatches(opts.client, targets, nowMs, settings.usage, others)) {
    if (!batch.ok) return fail(batch.error.message, batch.error.queries);
    queries = batch.value.queries;
    untilMs = batch.value.until;
    for (const [workload, others] of batch.value.sharedPodNames) sharedPodNames.set(workload, others);
    for (const [key, history] of batch.value.histories) {
      const state = memory.states.get(key) ?? emptyState(settings.recommender);
      memory.states.set(key, foldHistory(state, history, settings.recommender));
    }
  }
  noteLimits(covered, memory, true);
  let containers = 0;
  for (const w of covered) {
    memory.readThrough.set(workloadKey(w), untilMs);
    const learned = new Map<string, { recommendation: ReturnType<typeof recommend>; checkpoint: string }>();
    for (const c of w.containers) {
      const state = memory.states.get(containerKey(usageIdentity(w), c.name));
      if (!state || state.presentSamples + state.absentSamples === 0) continue;
      learned.set(c.name, {
        recommendation: recommend(state, settings.recommender),
        checkpoint: serializeCheckpoint(state, settings.recommender),
      });
      containers++;
    }
    const shared = sharedPodNames.get(workloadName(usageIdentity(w)));
    const cut = templateHashCutTo(w.kind, w.name);
    memory.outcomes.set(workloadKey(w), {
      ok: true,
      atMs: nowMs,
      untilMs,
      containers: learned,
      ...(shared ? { podNamesSharedWith: shared } : {}),
      ...(cut === null ? {} : { podNamesCutTo: cut }),
    });
  }
  return { ok: true, workloads: covered.length, containers, queries };
}

/**
 * The workload's usage query, resuming from the oldest point any of its containers has learned up to. Containers
 * nothing was learned of (no samples yet) do not send it back to the lookback at every run: they were read with
 * it, so they start at their first sample from there. A workload none of whose containers had samples resumes
 * from where this process last read it.
 */
function usageTarget(w: CoveredWorkload, opts: Parameters<typeof runRecommender>[0]): UsageTarget {
  let learnedUntil = Number.POSITIVE_INFINITY;
  let relearn = false;
  const unseen: string[] = [];
  // Checkpoints are restored before this process first reads the workload. After that read, a container with no
  // state had nothing to learn, and an unreadable checkpoint was relearned by it: read again, it would send the
  // workload back to the whole lookback at every run.
  const readBefore = opts.memory.readThrough.has(workloadKey(w));
  for (const c of w.containers) {
    const key = containerKey(usageIdentity(w), c.name);
    let state = opts.memory.states.get(key);
    if (!state && !readBefore) {
      const restored = restore(w, c.name, opts);
      if (restored === "unreadable") relearn = true;
      else if (restored) {
        state = restored;
        opts.memory.states.set(key, state);
      }
    }
    const at = state?.lastSampleAt ?? null;
    if (at === null) unseen.push(c.name);
    else learnedUntil = Math.min(learnedUntil, at);
  }
  // A checkpoint that could not be read is relearned from the lookback; the others skip what they know already.
  const since = relearn
    ? null
    : Number.isFinite(learnedUntil)
      ? learnedUntil
      : (opts.memory.readThrough.get(workloadKey(w)) ?? null);
  return {
    namespace: w.namespace,
    workload: w.name,
    kind: w.kind,
    containers: w.containers.map((c) => c.name),
    replicas: Math.max(1, w.replicas),
    since,
    ...(since !== null && unseen.length > 0 ? { unseen } : {}),
    memoryLimitsBytes: Object.fromEntries(
      w.containers.flatMap((c) => {
        const limit = limitAtKills(
          c.memoryLimitBytes,
          opts.memory.limitsSinceRead.get(containerKey(usageIdentity(w), c.name)),
        );
        return limit === undefined ? [] : [[c.name, limit]];
      }),
    ),
  };
}

/**
 * The memory limit a kill read this run proves the container needed: the lowest its template had since the last
 * read. Unknown in a process's first run (the template may have changed since the kill: a limit raised after it
 * would be taken for what the container needed), and for a container without a limit.
 */
function limitAtKills(now: number | undefined, sinceRead: number | undefined): number | undefined {
  return now === undefined || sinceRead === undefined ? undefined : Math.min(now, sinceRead);
}

/** Keeps the limits this run saw for the next: the current one after a read, else the lowest since the last read. */
function noteLimits(covered: readonly CoveredWorkload[], memory: RecommenderMemory, read: boolean): void {
  for (const w of covered) {
    for (const c of w.containers) {
      const key = containerKey(usageIdentity(w), c.name);
      const before = memory.limitsSinceRead.get(key);
      if (c.memoryLimitBytes === undefined) memory.limitsSinceRead.delete(key);
      else if (read) memory.limitsSinceRead.set(key, c.memoryLimitBytes);
      // Not read yet in this process: what the limit was before it started is not known.
      else if (before !== undefined) memory.limitsSinceRead.set(key, Math.min(before, c.memoryLimitBytes));
    }
  }
}

function restore(
  w: CoveredWorkload,
  container: string,
  opts: Parameters<typeof runRecommender>[0],
): RecommenderState | "unreadable" | undefined {
  const text = opts.checkpointOf(w, container);
  if (text === undefined) return undefined;
  const parsed = parseCheckpoint(text, opts.settings.recommender);
  if (parsed.ok) return parsed.value;
  // A checkpoint we cannot read is relearned from the lookback rather than trusted or fatal.
  opts.log.warn(
    { workload: workloadKey(w), container, error: parsed.error },
    "discarding an unreadable rightsizing checkpoint",
  );
  return "unreadable";
}
