/**
 * A new forecast engine starts from the activity history Prometheus already holds, so a workload that opts in
 * is forecast within minutes instead of after days of learning. The history is what the activity clock would
 * have seen: the workload's pod CPU against spec.idle.cpuThreshold, and its activity queries against their
 * thresholds, per 15-minute slot. Pure: the queries to run, and the slots their answers make.
 */
import type { ActivityQuery, ManagedWorkload } from "../../api/managedworkload.ts";
import { type GridPoint, slotOf } from "../../forecast/index.ts";
import type { RangeSeries } from "../../rightsizing/prometheus-client.ts";
import { escapeRegex, type PromQLConfig, usageQuery } from "../../rightsizing/promql.ts";
import { isQueryActive } from "./activity-rules.ts";

/** Resolution of the history read: three samples per slot, 4,032 steps for 14 days (Prometheus allows 11,000). */
export const HISTORY_STEP_MS = 5 * 60_000;

export type HistoryQueries = {
  /** The workload's total pod CPU, in cores. */
  cpu: string;
  activity: readonly ActivityQuery[];
};

/**
 * The pods a workload's controller names: `<deployment>-<template hash>-<suffix>` or `<statefulset>-<ordinal>`.
 * Exact, so a sibling named with the same prefix (`web` and `web-admin`) is not counted.
 */
export function podRegexOf(kind: "Deployment" | "StatefulSet", name: string): string {
  const prefix = escapeRegex(name);
  return kind === "Deployment" ? `${prefix}-[a-z0-9]+-[a-z0-9]+` : `${prefix}-[0-9]+`;
}

export function historyQueries(mw: ManagedWorkload, promql: PromQLConfig): HistoryQueries {
  const { kind, name } = mw.spec.targetRef;
  const scope = { namespaces: [mw.metadata.namespace], workloads: [name], podRegex: podRegexOf(kind, name) };
  return {
    cpu: `sum(${usageQuery("cpu", scope, HISTORY_STEP_MS, promql)})`,
    activity: mw.spec.idle?.activityQueries ?? [],
  };
}

export type HistoryAnswers = {
  cpu: readonly RangeSeries[];
  /** Per activity query, in the order of `HistoryQueries.activity`. */
  activity: readonly { query: ActivityQuery; series: readonly RangeSeries[] }[];
};

/**
 * The slots `fromSlot` (included) to `toSlot` (excluded) as the engine learns them: 1 where the workload was
 * active at any sample, 0 where it was watched and never active, a gap (null) where nothing is known. CPU
 * counts from its first sample to its last: a workload without pods in between was scaled to zero, so idle.
 * Before the first (Prometheus' retention, a workload created since), after the last (samples not yet
 * written), and where an activity query had no answer, nothing is known.
 */
export function historyPoints(
  answers: HistoryAnswers,
  cpuThresholdCores: number,
  fromSlot: number,
  toSlot: number,
): GridPoint[] {
  const count = Math.max(0, toSlot - fromSlot);
  const known = new Uint8Array(count);
  const active = new Uint8Array(count);
  const mark = (atMs: number, isActive: boolean) => {
    const index = slotOf(atMs) - fromSlot;
    if (index < 0 || index >= count) return;
    known[index] = 1;
    if (isActive) active[index] = 1;
  };
  const cpuPoints = answers.cpu.flatMap((series) => series.points);
  const cpuTimes = cpuPoints.map(([t]) => t);
  if (cpuTimes.length > 0) {
    const first = Math.max(0, slotOf(Math.min(...cpuTimes)) - fromSlot);
    known.fill(1, first, Math.max(first, slotOf(Math.max(...cpuTimes)) - fromSlot + 1));
  }
  for (const [atMs, cores] of cpuPoints) mark(atMs, cores >= cpuThresholdCores);
  for (const { query, series } of answers.activity) {
    // As the clock reads a query: its first series.
    for (const [atMs, value] of series[0]?.points ?? []) mark(atMs, isQueryActive(query, value));
  }
  return Array.from({ length: count }, (_, i) => ({
    slot: fromSlot + i,
    value: active[i] ? 1 : known[i] ? 0 : null,
  }));
}
