// Forecasts with prediction intervals from the engine's current state.

import type { ForecastConfig } from "./config.ts";
import { type ForecastEngine, oneStepSigma } from "./engine.ts";
import { hwOptions } from "./fit.ts";
import { slotStartMs } from "./grid.ts";
import { forecastAt, patternForecastAt, varianceMultipliers } from "./holt-winters.ts";
import { activityProbability } from "./probability.ts";

export type ForecastPoint = {
  slot: number;
  startMs: number;
  /** Expected activity in the slot, never negative. */
  mean: number;
  lower: number;
  upper: number;
  /** Chance of any activity at all in the slot (see `probability.ts`). */
  probability: number;
};

/** Horizon of `slot` (1 = the next slot to learn; below 1 for a slot already learned, after a clock stepped back). */
function stepsAhead(engine: ForecastEngine, slot: number): number {
  return slot - (engine.nextSlot ?? slot) + 1;
}

/** Point forecast for one slot, or null while there is no model. */
export function forecastMean(engine: ForecastEngine, slot: number, config: ForecastConfig): number | null {
  if (!engine.model || !engine.params) return null;
  return Math.max(0, forecastAt(engine.model, engine.params, hwOptions(config), stepsAhead(engine, slot)));
}

/**
 * What the learned pattern expects in one slot, leaving out the one-step correction for how far the
 * last slot was off (activity just seen raises the next slot's forecast). Decisions use this: the idle
 * window already keeps a workload awake after activity, so counting that activity again in the
 * forecast would veto pauses after every burst. Null while there is no model.
 */
export function patternMean(engine: ForecastEngine, slot: number, config: ForecastConfig): number | null {
  if (!engine.model) return null;
  return Math.max(0, patternForecastAt(engine.model, hwOptions(config), stepsAhead(engine, slot)));
}

/** Chance of any activity in one slot, or null while there is no model. */
export function forecastProbability(
  engine: ForecastEngine,
  slot: number,
  config: ForecastConfig,
): number | null {
  const mean = forecastMean(engine, slot, config);
  return mean === null ? null : activityProbability(mean, engine.burstSize);
}

/** Forecasts for `count` slots from `fromSlot`, with intervals widening with the horizon. Empty without a model. */
export function forecastSlots(
  engine: ForecastEngine,
  fromSlot: number,
  count: number,
  config: ForecastConfig,
): ForecastPoint[] {
  const { model, params } = engine;
  if (!model || !params || count <= 0) return [];
  const firstSteps = stepsAhead(engine, fromSlot);
  const multipliers = varianceMultipliers(params, Math.max(1, firstSteps + count - 1));
  const points: ForecastPoint[] = [];
  for (let i = 0; i < count; i++) {
    const slot = fromSlot + i;
    const steps = firstSteps + i;
    const raw = forecastAt(model, params, hwOptions(config), steps);
    const sigma = oneStepSigma(engine, raw, config);
    // A slot already learned is as uncertain as the next one: its interval is the one-step interval.
    const spread = config.intervalZ * sigma * Math.sqrt(multipliers[Math.max(1, steps) - 1] ?? 1);
    points.push({
      slot,
      startMs: slotStartMs(slot),
      mean: Math.max(0, raw),
      lower: Math.max(0, raw - spread),
      upper: Math.max(0, raw + spread),
      probability: activityProbability(raw, engine.burstSize),
    });
  }
  return points;
}
