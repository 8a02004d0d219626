// An awake budget: the forecast's pre-wakes and vetoes together keep a workload awake no longer than its
// idle window alone would have. The chance of activity at which a slot counts as "activity expected" is
// steered per workload: awake time spent beyond what the idle window alone would have spent raises it
// (fewer pre-wakes and vetoes), time left unspent lowers it (more of them). So the forecast moves awake
// time to where traffic is expected instead of adding to it, whatever the workload's pattern.

import type { ForecastConfig } from "./config.ts";
import { SLOT_MS } from "./grid.ts";

/** Awake time over some stretch: the workload's, and what its idle window alone would have kept awake. */
export type AwakeSpend = { awakeMs: number; baselineAwakeMs: number };

const logit = (p: number) => Math.log(p / (1 - p));
const logistic = (x: number) => 1 / (1 + Math.exp(-x));

/**
 * The chance threshold after `spend`: moved on the log-odds scale by the overspend against the share of the idle
 * window's awake time the budget aims at, within the config's bounds.
 */
export function spendBudget(threshold: number, spend: AwakeSpend, config: ForecastConfig): number {
  const [low, high] = config.activityProbabilityBounds;
  const start = Number.isFinite(threshold)
    ? Math.min(high, Math.max(low, threshold))
    : config.activityProbability;
  const overspend = (spend.awakeMs - config.budgetShare * spend.baselineAwakeMs) / SLOT_MS;
  if (!Number.isFinite(overspend)) return start;
  const moved = logistic(logit(start) + config.budgetGain * overspend);
  return Math.min(high, Math.max(low, moved));
}

/** The config with the chance threshold the budget steered, which decisions act on. */
export function withThreshold(config: ForecastConfig, threshold: number): ForecastConfig {
  return threshold === config.activityProbability ? config : { ...config, activityProbability: threshold };
}

/**
 * How long within (fromMs, toMs] an idle window alone would have kept the workload awake: up to
 * `idleWindowMs` after each of the given activity times (null: none known).
 */
export function idleWindowAwakeMs(
  fromMs: number,
  toMs: number,
  activityMs: readonly (number | null)[],
  idleWindowMs: number,
): number {
  const spans = activityMs
    .filter((at): at is number => at !== null)
    .map((at) => [Math.max(fromMs, at), Math.min(toMs, at + idleWindowMs)] as const)
    .filter(([start, end]) => end > start)
    .sort((a, b) => a[0] - b[0]);
  let total = 0;
  let coveredUntil = fromMs;
  for (const [start, end] of spans) {
    const from = Math.max(start, coveredUntil);
    if (end > from) total += end - from;
    coveredUntil = Math.max(coveredUntil, end);
  }
  return total;
}
