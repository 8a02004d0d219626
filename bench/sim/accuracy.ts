// Forecast accuracy on a replayed grid. MASE (Hyndman and Koehler's, seasonal): each absolute error divided by
// the mean absolute error seasonal-naive (the same slot a week before) made in sample, over the two weeks before
// the forecast's origin. Relative MAE: mean absolute error divided by that of seasonal-naive on the
// same held-out slots. Every forecaster forecasts the same 24 h from the same origins (each midnight once two
// weeks of history exist), each from all the history before the origin as it can use it: the engine learned every
// slot as it came (its periodic refits read the last 14 days), the library fits the whole series afresh. The
// engine's incremental one-step forecast is scored on the same slots as well.

import {
  createEngine,
  DAY_SLOTS,
  type ForecastConfig,
  forecastMean,
  forecastSlots,
  type GridPoint,
  observe,
  WEEK_SLOTS,
} from "../../forecast/index.ts";
import type { Forecaster } from "./augurs.ts";

export type Accuracy = {
  /** Errors scaled by seasonal-naive's in-sample mean absolute error; below 1 beats it in sample. */
  mase: number;
  /** Mean absolute error over that of seasonal-naive on the same held-out slots. */
  relativeMae: number;
  mae: number;
  naiveMae: number;
  /** Mean squared error over that of seasonal-naive: the proper score when values are 0/1 chances (Brier). */
  mseRatio: number;
  points: number;
  origins: number;
};

export type AccuracyReport = {
  /** The engine's forecast of the next slot, updated every slot. */
  engineOneStep: Accuracy;
  /** The engine's 24 h forecast from each origin. */
  engineDayAhead: Accuracy;
  /** The library forecaster's 24 h forecast from each origin, when one was given. */
  libraryDayAhead: Accuracy | null;
};

const HISTORY_SLOTS = 2 * WEEK_SLOTS;

type Sums = {
  /** Absolute errors over the in-sample scale, and how many had a scale (a history not all alike). */
  scaledError: number;
  scaledPoints: number;
  error: number;
  naiveError: number;
  squaredError: number;
  naiveSquaredError: number;
  points: number;
  origins: number;
};

const empty = (): Sums => ({
  scaledError: 0,
  scaledPoints: 0,
  error: 0,
  naiveError: 0,
  squaredError: 0,
  naiveSquaredError: 0,
  points: 0,
  origins: 0,
});

function summarise(sums: Sums): Accuracy {
  const mae = sums.error / Math.max(1, sums.points);
  const naiveMae = sums.naiveError / Math.max(1, sums.points);
  return {
    mase: sums.scaledPoints > 0 ? sums.scaledError / sums.scaledPoints : Number.NaN,
    relativeMae: naiveMae > 0 ? mae / naiveMae : Number.NaN,
    mae,
    naiveMae,
    mseRatio: sums.naiveSquaredError > 0 ? sums.squaredError / sums.naiveSquaredError : Number.NaN,
    points: sums.points,
    origins: sums.origins,
  };
}

export function evaluateAccuracy(
  grid: readonly GridPoint[],
  config: ForecastConfig,
  library: Forecaster | null = null,
): AccuracyReport {
  const values = Float64Array.from(grid, (point) => point.value ?? Number.NaN);
  const oneStep = empty();
  const engineDay = empty();
  const libraryDay = empty();
  let engine = createEngine(config);
  grid.forEach((point, index) => {
    if (index >= HISTORY_SLOTS) {
      const forecast = forecastMean(engine, point.slot, config);
      if (forecast !== null) score(oneStep, values, index, forecast, inSampleScale(values, index));
    }
    const horizon = Math.min(DAY_SLOTS, grid.length - index);
    const engineForecast =
      index >= HISTORY_SLOTS && index % DAY_SLOTS === 0
        ? forecastSlots(engine, point.slot, horizon, config).map((p) => p.mean)
        : [];
    // Same origins for every forecaster: none while the engine has no model yet.
    if (engineForecast.length > 0) {
      scoreDay(engineDay, values, index, engineForecast);
      // All the history before the origin, which the engine has learned slot by slot.
      if (library) scoreDay(libraryDay, values, index, Array.from(library(values.slice(0, index), horizon)));
    }
    engine = observe(engine, point, config).engine;
  });
  return {
    engineOneStep: summarise(oneStep),
    engineDayAhead: summarise(engineDay),
    libraryDayAhead: library ? summarise(libraryDay) : null,
  };
}

function scoreDay(sums: Sums, values: Float64Array, origin: number, forecast: readonly number[]) {
  sums.origins++;
  const scale = inSampleScale(values, origin);
  forecast.forEach((value, h) => {
    score(sums, values, origin + h, value, scale);
  });
}

/**
 * Seasonal-naive's mean absolute error over the history a forecast from `origin` is made from (the two weeks
 * before it: one week of forecasts, each from the week before).
 */
export function inSampleScale(values: Float64Array, origin: number): number {
  let total = 0;
  let count = 0;
  for (let t = Math.max(WEEK_SLOTS, origin - HISTORY_SLOTS + WEEK_SLOTS); t < origin; t++) {
    const difference = (values[t] ?? Number.NaN) - (values[t - WEEK_SLOTS] ?? Number.NaN);
    if (Number.isNaN(difference)) continue;
    total += Math.abs(difference);
    count++;
  }
  return count > 0 ? total / count : Number.NaN;
}

/** Scores slot `index` when it and the same slot a week before are known. */
function score(sums: Sums, values: Float64Array, index: number, forecast: number, scale: number) {
  const actual = values[index] ?? Number.NaN;
  const naive = values[index - WEEK_SLOTS] ?? Number.NaN;
  if (Number.isNaN(actual) || Number.isNaN(naive)) return;
  const error = actual - Math.max(0, forecast);
  if (scale > 0) {
    sums.scaledError += Math.abs(error) / scale;
    sums.scaledPoints++;
  }
  sums.error += Math.abs(error);
  sums.naiveError += Math.abs(actual - naive);
  sums.squaredError += error * error;
  sums.naiveSquaredError += (actual - naive) ** 2;
  sums.points++;
}
