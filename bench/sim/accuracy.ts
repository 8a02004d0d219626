// Forecast accuracy on a replayed grid, as MASE: mean absolute error divided by that of seasonal-naive
// (the same slot a week before) on the same slots. Every forecaster forecasts the same 24 h from the
// same origins (each midnight once two weeks of history exist) from the same two weeks of history;
// the engine's incremental one-step forecast is scored on the same slots as well.

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
  mase: number;
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
  error: number;
  naiveError: number;
  squaredError: number;
  naiveSquaredError: number;
  points: number;
  origins: number;
};

const empty = (): Sums => ({
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
    mase: naiveMae > 0 ? mae / naiveMae : Number.NaN,
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
      if (forecast !== null) score(oneStep, values, index, forecast);
    }
    const horizon = Math.min(DAY_SLOTS, grid.length - index);
    const engineForecast =
      index >= HISTORY_SLOTS && index % DAY_SLOTS === 0
        ? forecastSlots(engine, point.slot, horizon, config).map((p) => p.mean)
        : [];
    // Same origins for every forecaster: none while the engine has no model yet.
    if (engineForecast.length > 0) {
      scoreDay(engineDay, values, index, engineForecast);
      if (library) {
        const history = values.slice(index - HISTORY_SLOTS, index);
        scoreDay(libraryDay, values, index, Array.from(library(history, horizon)));
      }
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
  forecast.forEach((value, h) => {
    score(sums, values, origin + h, value);
  });
}

/** Scores slot `index` when it and the same slot a week before are known. */
function score(sums: Sums, values: Float64Array, index: number, forecast: number) {
  const actual = values[index] ?? Number.NaN;
  const naive = values[index - WEEK_SLOTS] ?? Number.NaN;
  if (Number.isNaN(actual) || Number.isNaN(naive)) return;
  const error = actual - Math.max(0, forecast);
  sums.error += Math.abs(error);
  sums.naiveError += Math.abs(actual - naive);
  sums.squaredError += error * error;
  sums.naiveSquaredError += (actual - naive) ** 2;
  sums.points++;
}
