// The trade-off frontier of the forecast policy: the same rule replayed over a grid of its two knobs
// (the chance that counts as "activity expected" and the idle window once trusted), once with the
// engine's forecast and once with the true chances. The best point within the 30-minute timeout's
// awake hours says whether the target is reachable by the rule at all, and how much of the gap is
// forecast quality rather than the rule.

import { type ForecastConfig, forecastConfig } from "../../forecast/index.ts";
import { relativeChange } from "../format.ts";
import type { Trace } from "../traces/trace.ts";
import { type ChanceOf, type Policy, type PolicyResult, replayPolicy } from "./replay.ts";

export type Setting = { activityProbability: number; idleWindowMinutes: number };

export type FrontierPoint = Setting & {
  /** Relative change against the baseline: -0.5 is half the cold starts. */
  coldStartChange: number;
  awakeChange: number;
};

export const FRONTIER_PROBABILITIES = [0.2, 0.25, 0.3, 0.35, 0.45, 0.55, 0.7] as const;
export const FRONTIER_IDLE_MINUTES = [2, 3, 5, 10, 15, 25] as const;

export function settingsGrid(
  probabilities: readonly number[] = FRONTIER_PROBABILITIES,
  idleMinutes: readonly number[] = FRONTIER_IDLE_MINUTES,
): Setting[] {
  return probabilities.flatMap((activityProbability) =>
    idleMinutes.map((idleWindowMinutes) => ({ activityProbability, idleWindowMinutes })),
  );
}

export function pointOf(setting: Setting, result: PolicyResult, baseline: PolicyResult): FrontierPoint {
  return {
    ...setting,
    coldStartChange: relativeChange(result.coldStarts, baseline.coldStarts),
    awakeChange: relativeChange(result.awakeHours, baseline.awakeHours),
  };
}

/** The point with the fewest cold starts among those within the baseline's awake hours; null if none is. */
export function bestWithinAwakeBudget(points: readonly FrontierPoint[]): FrontierPoint | null {
  let best: FrontierPoint | null = null;
  for (const point of points) {
    if (point.awakeChange > 0) continue;
    if (best === null || point.coldStartChange < best.coldStartChange) best = point;
  }
  return best;
}

/** The point lies on the border of the grid: the best of the rule may lie beyond it. */
export function onGridEdge(
  point: Setting,
  probabilities: readonly number[] = FRONTIER_PROBABILITIES,
  idleMinutes: readonly number[] = FRONTIER_IDLE_MINUTES,
): boolean {
  const edge = (value: number, values: readonly number[]) =>
    value === Math.min(...values) || value === Math.max(...values);
  return edge(point.activityProbability, probabilities) || edge(point.idleWindowMinutes, idleMinutes);
}

export type Frontier = { engine: FrontierPoint[]; reference: FrontierPoint[] };

/**
 * Replays `policy` at every setting of the grid, with its forecast and (when `chances` is given) with
 * the true chances, against `baseline`. Everything else in the policy and the config stays as given.
 */
export function replayFrontier(
  trace: Trace,
  policy: Policy,
  baseline: PolicyResult,
  chances: ChanceOf | null,
  settings: readonly Setting[] = settingsGrid(),
  base: Partial<ForecastConfig> = {},
): Frontier {
  const run = (setting: Setting, oracle?: ChanceOf) => {
    const config = forecastConfig({ ...base, activityProbability: setting.activityProbability });
    // Each setting is a fixed rule: no awake budget steering its chance.
    const variant: Policy = {
      ...policy,
      idleWindowMs: setting.idleWindowMinutes * 60_000,
      awakeBudget: false,
    };
    return pointOf(setting, replayPolicy(trace, oracle ? { ...variant, oracle } : variant, config), baseline);
  };
  return {
    engine: settings.map((setting) => run(setting)),
    reference: chances ? settings.map((setting) => run(setting, chances)) : [],
  };
}
