// Usage history for the recommender from PromQL. For each workload container it fetches CPU, memory, OOM
// kills and restarts with batched range queries, only for the steps after what was already folded (the
// checkpoint's last sample), and turns them into one ContainerHistory: the pods of a workload are merged
// step by step (the highest value, so the busiest replica is covered), and a step without CPU and memory
// samples is marked absent (no pods, paused), never read as zero usage. A failing source is an error value,
// never an empty history.

import type { WorkloadKind } from "../api/rightsizingpolicy.ts";
import { podNameMatcher } from "./pod-names.ts";
import type {
  InstantSample,
  PrometheusClient,
  PrometheusError,
  PromResult,
  RangeSeries,
} from "./prometheus-client.ts";
import type {
  BatchLimits,
  PromQLConfig,
  QueryBatch,
  RangeLimits,
  TimeWindow,
  UsageMetric,
} from "./promql.ts";
import {
  alignDown,
  alignUp,
  defaultBatchLimits,
  defaultPromQLConfig,
  defaultRangeLimits,
  planBatches,
  splitRange,
  usageMetrics,
  usageQuery,
} from "./promql.ts";
import type { ContainerHistory, OomEvent, RestartEvent, UsageSample } from "./types.ts";

export type UsageTarget = {
  readonly namespace: string;
  readonly workload: string;
  readonly kind: WorkloadKind;
  /** Containers of the pod template; empty: every container found. */
  readonly containers: readonly string[];
  /** Pods expected at a time, for sizing the queries. Default 1. */
  readonly replicas?: number;
  /** Time of the last sample already folded (a checkpoint's `at`); null: fetch the whole lookback. */
  readonly since: number | null;
  /**
   * Containers nothing was learned of yet although the target resumes from `since` (they had no samples when it
   * was last read): their history starts at their first step with data, as a new container's does.
   */
  readonly unseen?: readonly string[];
  /**
   * Each container's memory limit when its kills read now happened, by name (the caller knows it: the lowest the
   * pod template had since the last read): an OOM kill proves the container needed at least that much, however low
   * the last working-set sample before it was. Taken only for kills read since `since`, not over a first read.
   */
  readonly memoryLimitsBytes?: Readonly<Record<string, number>>;
};

export type UsageSourceConfig = {
  readonly promql: PromQLConfig;
  /** Step of the history, as folded by the recommender. */
  readonly stepMs: number;
  /** How far back a container without a checkpoint is read. */
  readonly lookbackMs: number;
  /** The newest step read is this far in the past, so it is complete when read. */
  readonly lagMs: number;
  readonly batch: BatchLimits;
  readonly range: RangeLimits;
  /** Queries in flight at once. */
  readonly concurrency: number;
};

export const defaultUsageSourceConfig: UsageSourceConfig = {
  promql: defaultPromQLConfig,
  stepMs: 5 * 60_000,
  lookbackMs: 14 * 24 * 3_600_000,
  lagMs: 60_000,
  batch: defaultBatchLimits,
  range: defaultRangeLimits,
  concurrency: 4,
};

export type UsageQueryRecord = { readonly metric: UsageMetric; readonly start: number; readonly end: number };

export type UsageFetch = {
  /** Per container key (see containerKey). */
  readonly histories: ReadonlyMap<string, ContainerHistory>;
  /** Containers asked for that no series exists for and that have no checkpoint: nothing to learn yet. */
  readonly missing: readonly string[];
  /**
   * Per workload (`namespace/Kind/name`), the others, targets or not, whose pods' names its own could be (long
   * names the API server cut alike): those pods are counted for none of them, so none is recommended from
   * another's usage.
   */
  readonly sharedPodNames: ReadonlyMap<string, readonly string[]>;
  /** Every range query made, in order of completion. */
  readonly queries: readonly UsageQueryRecord[];
  /** The newest step read; histories hold nothing later. */
  readonly until: number;
};

export type UsageSourceError = {
  readonly message: string;
  readonly cause: PrometheusError;
  readonly queries: readonly UsageQueryRecord[];
};

export type UsageResult =
  | { readonly ok: true; readonly value: UsageFetch }
  | { readonly ok: false; readonly error: UsageSourceError };

/** One container of one workload; the kind is part of it, as a Deployment and a StatefulSet may share a name. */
export const containerKey = (
  target: Pick<UsageTarget, "namespace" | "kind" | "workload">,
  container: string,
): string => `${target.namespace}/${target.kind}/${target.workload}/${container}`;

/** A workload as `namespace/Kind/name`. */
export const workloadName = (target: Pick<UsageTarget, "namespace" | "kind" | "workload">): string =>
  `${target.namespace}/${target.kind}/${target.workload}`;

/** A workload as the usage source names it, whether its usage is read or not. */
export type WorkloadIdentity = Pick<UsageTarget, "namespace" | "kind" | "workload">;

/** The one workload a pod's name belongs to, or every workload it could belong to when more than one could. */
type PodOwners = (
  namespace: string,
  pod: string,
) => { owner?: WorkloadIdentity; shared?: readonly WorkloadIdentity[] } | null;

/**
 * Owners by the pod's name alone, among the targets and every other workload given (only those in a target's
 * namespace matter): which containers a target reads is applied after, and a pod a workload that is not read
 * could have is counted for no target. Pure.
 */
function podOwnersOf(
  targets: readonly WorkloadIdentity[],
  others: readonly WorkloadIdentity[] = [],
): PodOwners {
  const namespaces = new Set(targets.map((t) => t.namespace));
  const workloads = new Map(
    [...others, ...targets].filter((w) => namespaces.has(w.namespace)).map((w) => [workloadName(w), w]),
  );
  const byNamespace = Map.groupBy(
    [...workloads.values()].map((workload) => ({
      workload,
      belongs: podNameMatcher(workload.kind, workload.workload),
    })),
    (entry) => entry.workload.namespace,
  );
  return (namespace, pod) => {
    const matching = (byNamespace.get(namespace) ?? []).filter((e) => e.belongs(pod)).map((e) => e.workload);
    if (matching.length === 0) return null;
    return matching.length === 1 ? { owner: matching[0] } : { shared: matching };
  };
}

const wantsContainer = (target: UsageTarget, container: string): boolean =>
  target.containers.length === 0 || target.containers.includes(container);

/**
 * Step-aligned start of the first step not yet folded, never before the lookback: a checkpoint weeks old (the
 * operator was down) resumes from there, and the steps before it count as they would have read, absent.
 */
function startFor(target: UsageTarget, until: number, config: UsageSourceConfig): number {
  const lookbackStart = alignUp(until - config.lookbackMs, config.stepMs);
  if (target.since === null) return lookbackStart;
  return Math.max(lookbackStart, alignDown(target.since, config.stepMs) + config.stepMs);
}

type Job = { readonly metric: UsageMetric; readonly query: string; readonly window: TimeWindow };

/**
 * Fetches new usage for the targets; at `now`, from each target's `since` (or the lookback) on. `others`: every
 * other workload whose pods may be among the series, its usage read or not (rightsizing off for it; the targets
 * may be among them): a pod one of them could have as well as a target is counted for neither.
 */
export async function fetchUsage(
  client: PrometheusClient,
  targets: readonly UsageTarget[],
  now: number,
  config: UsageSourceConfig = defaultUsageSourceConfig,
  others: readonly WorkloadIdentity[] = [],
): Promise<UsageResult> {
  const histories = new Map<string, ContainerHistory>();
  const missing: string[] = [];
  const sharedPodNames = new Map<string, readonly string[]>();
  let last: UsageFetch | undefined;
  for await (const batch of fetchUsageBatches(client, targets, now, config, others)) {
    if (!batch.ok) return batch;
    for (const [key, history] of batch.value.histories) histories.set(key, history);
    missing.push(...batch.value.missing);
    for (const [workload, others] of batch.value.sharedPodNames) sharedPodNames.set(workload, others);
    last = batch.value;
  }
  const until = alignDown(now - config.lagMs, config.stepMs);
  return {
    ok: true,
    value: {
      histories,
      missing,
      sharedPodNames,
      queries: last?.queries ?? [],
      until,
    },
  };
}

/**
 * The same, one batch at a time, so a caller can fold each batch and let it go: memory stays bounded by
 * the batch size, not the number of containers. Stops after the first error. `queries` accumulates over the
 * batches.
 */
export async function* fetchUsageBatches(
  client: PrometheusClient,
  targets: readonly UsageTarget[],
  now: number,
  config: UsageSourceConfig = defaultUsageSourceConfig,
  others: readonly WorkloadIdentity[] = [],
): AsyncGenerator<UsageResult> {
  const until = alignDown(now - config.lagMs, config.stepMs);
  const queries: UsageQueryRecord[] = [];
  // Targets that resume from the same step share batches: steady state is one group.
  const groups = Map.groupBy(targets, (t) => startFor(t, until, config));
  // Judged against every workload, not one batch's targets nor only the targets: a batch holding one of two
  // workloads whose pods' names cannot be told apart still reads the other's pods, read itself or not.
  const podOwners = podOwnersOf(targets, others);
  for (const [start, group] of [...groups].sort(([a], [b]) => a - b)) {
    if (start > until) continue;
    const sized = group.map((t) => ({ ...t, series: Math.max(1, t.containers.length) * (t.replicas ?? 1) }));
    for (const batch of planBatches(sized, config.batch)) {
      const assembler = historyAssembler(
        batch.targets,
        podOwners,
        { start, end: until },
        config.stepMs,
        config.promql.labels,
      );
      const fetched = await fetchBatch(client, batch, { start, end: until }, config, queries, assembler);
      if (!fetched.ok) {
        yield { ok: false, error: { ...fetched.error, queries } };
        return;
      }
      const { histories, missing, sharedPodNames } = assembler.finish();
      yield { ok: true, value: { histories, missing, sharedPodNames, queries, until } };
    }
  }
}

async function fetchBatch(
  client: PrometheusClient,
  batch: QueryBatch<UsageTarget & { series: number }>,
  range: TimeWindow,
  config: UsageSourceConfig,
  queries: UsageQueryRecord[],
  assembler: HistoryAssembler,
): Promise<{ ok: true } | { ok: false; error: Omit<UsageSourceError, "queries"> }> {
  const jobs: Job[] = usageMetrics.flatMap((metric) => {
    const query = usageQuery(metric, batch.scope, config.stepMs, config.promql);
    // OOM kills and restarts are sparse (only steps with an event come back): only the step bound applies.
    const series = metric === "cpu" || metric === "memory" ? batch.series : 1;
    return splitRange({ ...range, stepMs: config.stepMs }, series, config.range).map((window) => ({
      metric,
      query,
      window,
    }));
  });
  let failure: PrometheusError | undefined;
  const run = async (job: Job): Promise<void> => {
    if (failure) return;
    const result = await client.queryRange(job.query, { ...job.window, stepMs: config.stepMs });
    queries.push({ metric: job.metric, ...job.window });
    if (result.ok) {
      assembler.add(job.metric, result.value);
      return;
    }
    const steps = (job.window.end - job.window.start) / config.stepMs + 1;
    if (result.error.kind === "too-large" && steps > 1) {
      // The estimate was wrong (more pods than expected): halve the window and try again.
      const middle = job.window.start + Math.floor(steps / 2) * config.stepMs;
      await run({ ...job, window: { start: job.window.start, end: middle - config.stepMs } });
      await run({ ...job, window: { start: middle, end: job.window.end } });
      return;
    }
    failure ??= result.error;
  };
  await inPool(jobs, config.concurrency, run);
  if (failure) return { ok: false, error: { message: describeFailure(failure), cause: failure } };
  return { ok: true };
}

async function inPool<T>(items: readonly T[], size: number, work: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++];
      if (item !== undefined) await work(item);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(size, items.length)) }, worker));
}

export function describeFailure(error: PrometheusError): string {
  const status = error.status === undefined ? "" : ` (HTTP ${error.status})`;
  return `metrics source ${error.kind}${status} after ${error.attempts} attempt(s): ${error.message}`;
}

type Collected = Record<UsageMetric, readonly RangeSeries[]>;

/**
 * Query results of one batch as one history per workload container. Pure. Steps range.start..range.end;
 * a resumed container (since set) gets every step, absent where no pod had samples; a new one starts at
 * its first step with data.
 */
export function assembleHistories(
  targets: readonly UsageTarget[],
  collected: Collected,
  range: TimeWindow,
  stepMs: number,
  labelNames: PromQLConfig["labels"] = defaultPromQLConfig.labels,
): AssembledHistories {
  const assembler = historyAssembler(targets, podOwnersOf(targets), range, stepMs, labelNames);
  for (const metric of usageMetrics) assembler.add(metric, collected[metric]);
  return assembler.finish();
}

type HistoryAssembler = {
  /** Takes one response in; the response can be dropped afterwards. */
  add(metric: UsageMetric, series: readonly RangeSeries[]): void;
  finish(): AssembledHistories;
};

type AssembledHistories = {
  histories: Map<string, ContainerHistory>;
  missing: string[];
  /** Per workload (`namespace/Kind/name`), the others whose pods' names its own could be. */
  sharedPodNames: Map<string, string[]>;
};

// Values per step live in typed arrays indexed by step (NaN: no sample), a few bytes per step instead of
// an object or a map entry, so 1,000 containers over 14 days stay in tens of MiB.
function historyAssembler(
  targets: readonly UsageTarget[],
  podOwners: PodOwners,
  range: TimeWindow,
  stepMs: number,
  labelNames: PromQLConfig["labels"],
): HistoryAssembler {
  const steps = Math.max(0, Math.floor((range.end - range.start) / stepMs) + 1);
  const indexOf = (t: number): number => {
    const i = Math.round((t - range.start) / stepMs);
    return i >= 0 && i < steps ? i : -1;
  };
  const targetOf = new Map<string, UsageTarget>();
  const containerOf = new Map<string, string>();
  const owners = new Map<string, string | null>();
  // By name: the run's targets and the batch's are different objects for the same workload.
  const inBatch = new Map(targets.map((t) => [workloadName(t), t]));
  const shared = new Map<string, Set<string>>();
  const ownerOf = (namespace: string, pod: string, container: string): string | null => {
    const podKey = `${namespace}/${pod}/${container}`;
    const known = owners.get(podKey);
    if (known !== undefined) return known;
    const claim = podOwners(namespace, pod);
    const owner = claim?.owner && inBatch.get(workloadName(claim.owner));
    let key: string | null = null;
    if (owner && wantsContainer(owner, container)) {
      key = containerKey(owner, container);
      targetOf.set(key, owner);
      containerOf.set(key, container);
    }
    const claimants = (claim?.shared ?? []).map(workloadName);
    for (const name of claimants.filter((n) => inBatch.has(n))) {
      const others = shared.get(name) ?? new Set<string>();
      for (const other of claimants) if (other !== name) others.add(other);
      shared.set(name, others);
    }
    owners.set(podKey, key);
    return key;
  };
  const arrays = { cpu: new Map<string, Float64Array>(), memory: new Map<string, Float64Array>() };
  const memoryByPod = new Map<string, Float32Array>();
  const arrayOf = <A extends Float64Array | Float32Array>(
    map: Map<string, A>,
    key: string,
    make: () => A,
  ): A => {
    const found = map.get(key);
    if (found) return found;
    const made = make();
    made.fill(Number.NaN);
    map.set(key, made);
    return made;
  };
  const oomKills: { key: string; podKey: string; container: string; t: number }[] = [];
  const restarts = new Map<string, RestartEvent[]>();

  return {
    add(metric, seriesList) {
      for (const series of seriesList) {
        const namespace = series.metric[labelNames.namespace] ?? "";
        const pod = series.metric[labelNames.pod] ?? "";
        const container = series.metric[labelNames.container] ?? "";
        const key = ownerOf(namespace, pod, container);
        if (!key) continue;
        const podKey = `${namespace}/${pod}/${container}`;
        if (metric === "cpu" || metric === "memory") {
          const values = arrayOf(arrays[metric], key, () => new Float64Array(steps));
          const perPod =
            metric === "memory" ? arrayOf(memoryByPod, podKey, () => new Float32Array(steps)) : null;
          for (const [t, v] of series.points) {
            const i = indexOf(t);
            // An infinite usage (a rate over a counter reset gone wrong) is no usage to learn from.
            if (i < 0 || !Number.isFinite(v)) continue;
            const current = values[i] ?? Number.NaN;
            values[i] = Number.isNaN(current) ? v : Math.max(current, v);
            if (perPod) perPod[i] = v;
          }
        } else if (metric === "oom") {
          for (const [t] of series.points) oomKills.push({ key, podKey, container, t });
        } else {
          const events = restarts.get(key) ?? restarts.set(key, []).get(key) ?? [];
          for (const [t, count] of series.points) {
            for (let i = 0; i < Math.min(10, Math.max(1, Math.round(count))); i++) events.push({ t });
          }
        }
      }
    },

    finish() {
      const ooms = new Map<string, OomEvent[]>();
      for (const { key, podKey, container, t } of oomKills) {
        // The working set just before the kill: the step of the kill or the one before it.
        const perPod = memoryByPod.get(podKey);
        const at = (i: number) => (i >= 0 && perPod ? (perPod[i] ?? Number.NaN) : Number.NaN);
        const i = indexOf(t);
        const used = Math.max(0, ...[at(i), at(i - 1)].filter((v) => !Number.isNaN(v)));
        const target = targetOf.get(key);
        const limitBytes =
          target && resumes(target, container) ? target.memoryLimitsBytes?.[container] : undefined;
        const events = ooms.get(key) ?? ooms.set(key, []).get(key) ?? [];
        events.push({ t, memoryBytes: used, ...(limitBytes === undefined ? {} : { limitBytes }) });
      }
      const keys = new Set([
        ...arrays.cpu.keys(),
        ...arrays.memory.keys(),
        ...ooms.keys(),
        ...restarts.keys(),
      ]);
      const missing: string[] = [];
      for (const target of targets) {
        for (const container of target.containers) {
          const key = containerKey(target, container);
          if (keys.has(key)) continue;
          targetOf.set(key, target);
          containerOf.set(key, container);
          // A resumed container without samples had no pods: absent steps. A new one: nothing known yet.
          if (resumes(target, container)) keys.add(key);
          else missing.push(key);
        }
      }
      const histories = new Map<string, ContainerHistory>();
      const byTime = <E extends { t: number }>(events: E[] = []) => events.sort((a, b) => a.t - b.t);
      for (const key of keys) {
        const target = targetOf.get(key);
        const container = containerOf.get(key);
        const resumed = target !== undefined && container !== undefined && resumes(target, container);
        const samples = stepSamples(arrays.cpu.get(key), arrays.memory.get(key), range, stepMs, resumed);
        histories.set(key, {
          stepMs,
          samples,
          ooms: byTime(ooms.get(key)),
          restarts: byTime(restarts.get(key)),
        });
      }
      const sharedPodNames = new Map([...shared].map(([workload, others]) => [workload, [...others].sort()]));
      return { histories, missing, sharedPodNames };
    },
  };
}

/** Whether a container's history goes on from its target's `since` (else it starts at its first sample). */
function resumes(target: UsageTarget, container: string): boolean {
  return target.since !== null && !(target.unseen ?? []).includes(container);
}

function stepSamples(
  cpu: Float64Array | undefined,
  memory: Float64Array | undefined,
  range: TimeWindow,
  stepMs: number,
  resumed: boolean,
): UsageSample[] {
  const samples: UsageSample[] = [];
  for (let i = 0, t = range.start; t <= range.end; i++, t += stepMs) {
    const cores = cpu?.[i] ?? Number.NaN;
    const bytes = memory?.[i] ?? Number.NaN;
    if (!Number.isNaN(cores) && !Number.isNaN(bytes)) {
      samples.push({ t, present: true, cpuCores: cores, memoryBytes: bytes });
    } else if (resumed || samples.length > 0) {
      // Before a new container's first sample nothing is recorded: it did not exist yet.
      samples.push({ t, present: false });
    }
  }
  return samples;
}

/** An instant check that the source answers, for the readiness check "metrics source healthy". */
export async function probeSource(
  client: PrometheusClient,
  config: PromQLConfig = defaultPromQLConfig,
): Promise<PromResult<InstantSample[]>> {
  const cluster = config.cluster
    ? `{${config.cluster.label}="${config.cluster.value.replace(/["\\]/g, "\\$&")}"}`
    : "";
  return client.query(`count(${config.metrics.memoryWorkingSet}${cluster})`);
}
