/**
 * A new forecast engine starts from the activity history Prometheus already holds, so a workload that opts in
 * is forecast within minutes instead of after days of learning. The history is what the activity clock would
 * have seen: the workload's pod CPU against spec.idle.cpuThreshold, and its activity queries against their
 * thresholds, per 15-minute slot. Pure: the queries to run, and the slots their answers make.
 */
import type { ActivityQuery, ManagedWorkload } from "../../api/managedworkload.ts";
import { type GridPoint, slotOf } from "../../forecast/index.ts";
import { podNameRegex } from "../../rightsizing/pod-names.ts";
import type { RangeSeries } from "../../rightsizing/prometheus-client.ts";
import { type PromQLConfig, replicasQuery, usageQuery } from "../../rightsizing/promql.ts";
import { isQueryActive } from "./activity-rules.ts";

/**
 * Resolution of the history read: three samples per slot, 4,032 steps for 14 days (Prometheus allows 11,000).
 * A CPU rate covers its step, so a burst shorter than the step counts only when its average over the step
 * reaches the threshold (one minute at five times it does), where the clock's live figure (metrics-server's)
 * is a rate over seconds: for a bursty workload the history sees less activity than the clock would have.
 */
export const HISTORY_STEP_MS = 5 * 60_000;

export type HistoryQueries = {
  /** The workload's total pod CPU, in cores. */
  cpu: string;
  /** The replicas it asked for (kube-state-metrics): tells a workload scaled to zero from one not watched. */
  replicas: string;
  activity: readonly ActivityQuery[];
};

export function historyQueries(mw: ManagedWorkload, promql: PromQLConfig): HistoryQueries {
  const { kind, name } = mw.spec.targetRef;
  const scope = {
    namespaces: [mw.metadata.namespace],
    workloads: [name],
    podRegex: podNameRegex(kind, name),
  };
  return {
    cpu: `sum(${usageQuery("cpu", scope, HISTORY_STEP_MS, promql)})`,
    replicas: replicasQuery(kind, mw.metadata.namespace, name, promql),
    activity: mw.spec.idle?.activityQueries ?? [],
  };
}

export type HistoryAnswers = {
  cpu: readonly RangeSeries[];
  /** Read at the steps' starts, like the activity queries; empty without kube-state-metrics. */
  replicas: readonly RangeSeries[];
  /** Per activity query, in the order of `HistoryQueries.activity`. */
  activity: readonly { query: ActivityQuery; series: readonly RangeSeries[] }[];
};

/**
 * The slots `fromSlot` (included) to `toSlot` (excluded) as the engine learns them: 1 where the workload was
 * active at any sample, 0 where it was watched and never active, a gap (null) where nothing is known. A CPU
 * sample at t is a rate over the step up to t, so it belongs to the slot of the instant before t (the reader
 * asks for samples at the ends of the steps). Where kube-state-metrics gives the replicas asked for (read at
 * the steps' starts), a step at 0 replicas is idle, whatever CPU pods still stopping used in it, and a step
 * with replicas but no CPU sample (not scraped, Prometheus down) is not known. Outside the stretch its
 * samples cover (kube-state-metrics installed since), CPU counts from its first sample to its last: a
 * workload without pods in between was taken as scaled to zero, so idle. Replicas are not used for a workload
 * that asked for pods the CPU query never found. Before the first CPU sample (Prometheus' retention, a
 * workload created since) and after the last (samples not yet written) only the replicas and the activity
 * queries tell; a slot none of them answered is a gap. An activity query is read at each step as the clock
 * reads it at an instant: its first series that has a value then.
 */
export function historyPoints(
  answers: HistoryAnswers,
  reading: HistoryReading,
  fromSlot: number,
  toSlot: number,
): GridPoint[] {
  const count = Math.max(0, toSlot - fromSlot);
  const known = new Uint8Array(count);
  const active = new Uint8Array(count);
  /** Slots with CPU of a start-up after a wake, and slots a CPU sample outside one or a query told of. */
  const startingUp = new Uint8Array(count);
  const told = new Uint8Array(count);
  /** The index of the slot `atMs` falls in, or null outside the range. */
  const indexOf = (atMs: number): number | null => {
    const index = slotOf(atMs) - fromSlot;
    return index >= 0 && index < count ? index : null;
  };
  const mark = (atMs: number, isActive: boolean, tells = true) => {
    const index = indexOf(atMs);
    if (index === null) return;
    known[index] = 1;
    if (tells) told[index] = 1;
    if (isActive) active[index] = 1;
  };
  // A rate at t covers the step up to t: its slot is the one the instant before t is in.
  const cpuPoints = answers.cpu.flatMap((series) =>
    series.points.map(([t, cores]) => [t - 1, cores] as const),
  );
  const cpuTimes = cpuPoints.map(([t]) => t);
  const allReplicaPoints = answers.replicas.flatMap((series) => series.points);
  // A workload that asked for pods the CPU query never found (pods named otherwise, no cAdvisor metric) would
  // show only its paused steps, as idle, and its awake ones as gaps: a history never active. Left out.
  const podsFound = cpuTimes.length > 0 || allReplicaPoints.every(([, replicas]) => replicas === 0);
  const replicaPoints = podsFound ? allReplicaPoints : [];
  for (const [atMs, replicas] of replicaPoints) if (replicas === 0) mark(atMs, false, false);
  /** Marks the slots of the CPU steps between `firstMs` and `lastMs` (rate times, both included) as watched. */
  const watched = (firstMs: number, lastMs: number) => {
    if (firstMs > lastMs) return;
    const first = Math.max(0, slotOf(firstMs) - fromSlot);
    known.fill(1, first, Math.max(first, slotOf(lastMs) - fromSlot + 1));
  };
  if (cpuTimes.length > 0) {
    const [firstCpu, lastCpu] = [Math.min(...cpuTimes), Math.max(...cpuTimes)];
    if (replicaPoints.length === 0) {
      watched(firstCpu, lastCpu);
    } else {
      // The replicas tell only the steps they cover (kube-state-metrics installed since, or removed): the steps
      // before their first sample and after their last are known from the CPU as without them. Between, a step
      // with neither (Prometheus or kube-state-metrics down) is a gap.
      const replicaTimes = replicaPoints.map(([t]) => t);
      watched(firstCpu, Math.min(lastCpu, Math.min(...replicaTimes) - 1));
      watched(Math.max(firstCpu, Math.max(...replicaTimes) + HISTORY_STEP_MS), lastCpu);
    }
  }
  const startups = startupWindows(replicaPoints, reading.startupMs);
  // Steps asked to run no pods: CPU there is pods still stopping, which the clock does not count either.
  const zeroSteps = new Set(replicaPoints.filter(([, replicas]) => replicas === 0).map(([atMs]) => atMs));
  for (const [atMs, cores] of cpuPoints) {
    if (zeroSteps.has(atMs + 1 - HISTORY_STEP_MS)) continue;
    if (startups.some(([after, upTo]) => atMs + 1 > after && atMs + 1 <= upTo)) {
      const index = indexOf(atMs);
      if (index !== null) startingUp[index] = 1;
    } else mark(atMs, cores >= reading.cpuThresholdCores);
  }
  for (const { query, series } of answers.activity) {
    for (const [atMs, value] of firstSeriesAtEachStep(series)) mark(atMs, isQueryActive(query, value));
  }
  const valueAt = (i: number): number | null => {
    if (active[i]) return 1;
    // Start-up CPU alone tells nothing of the slot: a gap, unless a sample outside it or a query told.
    if (startingUp[i] && !told[i]) return null;
    return known[i] ? 0 : null;
  };
  return Array.from({ length: count }, (_, i) => ({ slot: fromSlot + i, value: valueAt(i) }));
}

/** How the history is read for one workload. */
export type HistoryReading = {
  /** CPU at or above this is activity (spec.idle.cpuThreshold). */
  cpuThresholdCores: number;
  /**
   * CPU within this long after a wake is the pods' start-up (spec.forecast.prewake, the time a pre-wake gives
   * them), as the live clock takes it after a pre-wake.
   */
  startupMs: number;
};

/**
 * After each wake the replica counts show (a step at 0, the next above), the CPU rate times that hold start-up:
 * after the last step at 0, up to `startupMs` past the first above it. The history cannot tell a pre-wake from a
 * wake on a request, whose requests it does not see either: counted, a pre-wake's start-up would be learned as
 * traffic in the slot before the one it was for, and move the next pre-wake earlier; taken as idle, a request's
 * wake would be. So those slots are gaps, unless an activity query or CPU after the start-up tells. Only a wake
 * between two consecutive steps counts: one across a stretch the counts did not cover is not pinned down.
 */
function startupWindows(
  replicaPoints: readonly (readonly [number, number])[],
  startupMs: number,
): [after: number, upTo: number][] {
  if (startupMs <= 0) return [];
  const sorted = [...replicaPoints].sort(([a], [b]) => a - b);
  const windows: [number, number][] = [];
  for (let i = 1; i < sorted.length; i++) {
    const [beforeMs, before] = sorted[i - 1] ?? [0, 0];
    const [upMs, up] = sorted[i] ?? [0, 0];
    // Only a wake the counts pin to one step: across a stretch they did not cover, hours of traffic would go.
    const oneStep = upMs - beforeMs <= HISTORY_STEP_MS;
    if (before === 0 && up > 0 && oneStep) windows.push([beforeMs, upMs + startupMs]);
  }
  return windows;
}

/**
 * A query's value at each step as an instant query then would have given it to the clock: from the first
 * series (in the answer's order) that has a sample at that step. A series that comes and goes (a pod's)
 * does not hide the others while it is absent.
 */
function firstSeriesAtEachStep(series: readonly RangeSeries[]): Map<number, number> {
  const values = new Map<number, number>();
  for (const s of series) {
    for (const [atMs, value] of s.points) if (!values.has(atMs)) values.set(atMs, value);
  }
  return values;
}
