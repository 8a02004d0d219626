// Forecast accuracy on a replayed grid: mean absolute error of the Holt-Winters one-step and
// 24 h-ahead forecasts divided by that of seasonal-naive (same slot last week) on the same slots.

import {
  createEngine,
  DAY_SLOTS,
  type ForecastConfig,
  forecastMean,
  type GridPoint,
  observe,
  WEEK_SLOTS,
} from "../../forecast/index.ts";

export type HorizonAccuracy = { mase: number; modelMae: number; naiveMae: number; points: number };

export type AccuracyReport = { oneStep: HorizonAccuracy; dayAhead: HorizonAccuracy };

type Sums = { model: number; naive: number; points: number };

function summarise(sums: Sums): HorizonAccuracy {
  const modelMae = sums.model / Math.max(1, sums.points);
  const naiveMae = sums.naive / Math.max(1, sums.points);
  return { mase: naiveMae > 0 ? modelMae / naiveMae : Number.NaN, modelMae, naiveMae, points: sums.points };
}

export function evaluateAccuracy(grid: readonly GridPoint[], config: ForecastConfig): AccuracyReport {
  let engine = createEngine(config);
  const oneStep: Sums = { model: 0, naive: 0, points: 0 };
  const dayAhead: Sums = { model: 0, naive: 0, points: 0 };
  const dayAheadForecasts = new Map<number, number>();
  grid.forEach((point, index) => {
    const actual = point.value;
    const naive = grid[index - WEEK_SLOTS]?.value ?? null;
    const oneStepForecast = forecastMean(engine, point.slot, config);
    const made = forecastMean(engine, point.slot + DAY_SLOTS - 1, config);
    if (made !== null) dayAheadForecasts.set(point.slot + DAY_SLOTS - 1, made);
    const dayAheadForecast = dayAheadForecasts.get(point.slot);
    dayAheadForecasts.delete(point.slot);
    if (actual !== null && naive !== null) {
      if (oneStepForecast !== null) add(oneStep, actual, oneStepForecast, naive);
      if (dayAheadForecast !== undefined) add(dayAhead, actual, dayAheadForecast, naive);
    }
    engine = observe(engine, point, config).engine;
  });
  return { oneStep: summarise(oneStep), dayAhead: summarise(dayAhead) };
}

function add(sums: Sums, actual: number, forecast: number, naive: number) {
  sums.model += Math.abs(actual - forecast);
  sums.naive += Math.abs(actual - naive);
  sums.points++;
}
