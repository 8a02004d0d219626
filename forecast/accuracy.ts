// Confidence in the forecast from its recent record: the learned pattern's one-step error compared with
// seasonal-naive (same slot last week, else yesterday) and how often the prediction interval held the sample.

import type { ForecastConfig } from "./config.ts";

/** Exponentially weighted running averages; `scored` counts the slots that fed them. */
export type AccuracyRecord = {
  modelSquaredError: number;
  naiveSquaredError: number;
  coverage: number;
  scored: number;
};

export const EMPTY_ACCURACY: AccuracyRecord = {
  modelSquaredError: 0,
  naiveSquaredError: 0,
  coverage: 0,
  scored: 0,
};

/** Nominal coverage below which the confidence starts to shrink (intervals are ~95 %). */
const TARGET_COVERAGE = 0.9;
/** Coverage at which the confidence reaches zero: intervals that miss this often say nothing. */
const COVERAGE_FLOOR = 0.5;
/** Confidence is kept to this many steps of 1: finer differences are float noise. */
const SCORE_STEPS = 1e9;
/** Keeps the error ratio defined on series that are (almost) always zero. */
const SQUARED_ERROR_FLOOR = 0.0025;

export function decayPerSlot(config: ForecastConfig): number {
  return 2 ** (-1 / config.accuracyHalfLifeSlots);
}

export function recordAccuracy(
  record: AccuracyRecord,
  outcome: { modelError: number; naiveError: number; covered: boolean },
  config: ForecastConfig,
): AccuracyRecord {
  // Until the average has seen enough samples, weight them equally so early scores are not biased to zero.
  const weight = Math.max(1 - decayPerSlot(config), 1 / (record.scored + 1));
  const blend = (old: number, sample: number) => old + weight * (sample - old);
  return {
    modelSquaredError: blend(record.modelSquaredError, outcome.modelError ** 2),
    naiveSquaredError: blend(record.naiveSquaredError, outcome.naiveError ** 2),
    coverage: blend(record.coverage, outcome.covered ? 1 : 0),
    scored: record.scored + 1,
  };
}

/**
 * 0..1: 1 - ratio/2 where ratio = model RMSE / seasonal-naive RMSE (so 0.5 means "as good as
 * seasonal-naive"), scaled down linearly as interval coverage falls from its target to its floor.
 * Squared error, like the fit, so a slightly non-zero forecast on quiet nights does not outweigh the
 * busy hours.
 */
export function confidenceOf(record: AccuracyRecord): number {
  if (record.scored === 0) return 0;
  const ratio = Math.sqrt(
    (record.modelSquaredError + SQUARED_ERROR_FLOOR) / (record.naiveSquaredError + SQUARED_ERROR_FLOOR),
  );
  const skill = clamp01(1 - ratio / 2);
  const score = skill * clamp01((record.coverage - COVERAGE_FLOOR) / (TARGET_COVERAGE - COVERAGE_FLOOR));
  // A damaged record must read as no confidence: NaN would compare false with every threshold. Rounded, since
  // a score can sit exactly on a threshold (model and seasonal-naive both without error, as on a cron schedule)
  // and a restored state's float32 seasons must not move it a few ulps under.
  return Number.isFinite(score) ? Math.round(score * SCORE_STEPS) / SCORE_STEPS : 0;
}

function clamp01(x: number): number {
  return Math.min(1, Math.max(0, x));
}
