// Fits the smoothing parameters to a history window by minimising the one-step-ahead squared error,
// then replays the window with the winning parameters to get the state to forecast from.

import { type Bounds, type ForecastConfig, seasonCalendar } from "./config.ts";
import {
  cloneHwState,
  forecastAt,
  type HwOptions,
  type HwParams,
  type HwState,
  initialState,
  type Seasonality,
  type SlotWindow,
  stepInPlace,
} from "./holt-winters.ts";
import { minimiseBounded } from "./optimise.ts";
import { calibrateBurstSize } from "./probability.ts";

export type FitResult = {
  params: HwParams;
  state: HwState;
  /** Mean squared one-step error over the window with the fitted parameters. */
  meanSquaredError: number;
  /** Averages behind the error variance model (see `varianceOffset`). */
  errorMoments: ErrorMoments;
  /** Requests per burst, calibrated on the window (see `probability.ts`). */
  burstSize: number;
  evaluations: number;
};

type ParamName = keyof HwParams;

/** Mean squared error and mean variance scale (forecast + offset); their ratio is the dispersion. */
export type ErrorMoments = { squaredError: number; scale: number };

/** Expected value of the variance scale for a forecast. */
export function varianceScale(forecast: number, config: ForecastConfig): number {
  return Math.max(0, forecast) + config.varianceOffset;
}

const START: HwParams = { alpha: 0.1, beta: 0.01, gammaDay: 0.2, gammaWeek: 0.1, phi: 0.3 };

/** Parameters that are free for this model; the others are fixed at zero. */
export function freeParameters(seasonality: Seasonality, useTrend: boolean): ParamName[] {
  const names: ParamName[] = ["alpha", "gammaDay", "phi"];
  if (seasonality === "daily+weekly") names.push("gammaWeek");
  if (useTrend) names.push("beta");
  return names;
}

export function hwOptions(config: ForecastConfig): HwOptions {
  return { damping: config.useTrend ? config.trendDamping : 1 };
}

function toParams(names: readonly ParamName[], point: readonly number[]): HwParams {
  const params: HwParams = { alpha: 0, beta: 0, gammaDay: 0, gammaWeek: 0, phi: 0 };
  names.forEach((name, i) => {
    params[name] = point[i] ?? 0;
  });
  return params;
}

/** Replays `window` from `start` in place; returns the summed squared error and how many slots were scored. */
export function replay(
  state: HwState,
  params: HwParams,
  options: HwOptions,
  values: Float64Array,
): { sse: number; scored: number } {
  let sse = 0;
  let scored = 0;
  for (const value of values) {
    const error = stepInPlace(state, params, options, value);
    if (Number.isNaN(error)) continue;
    sse += error * error;
    scored++;
  }
  return { sse, scored };
}

/** Returns null when the window holds no observed value at all. */
export function fitWindow(
  window: SlotWindow,
  seasonality: Seasonality,
  config: ForecastConfig,
): FitResult | null {
  const initial = initialState(window, seasonality, config.seasonHalfLivesDays, seasonCalendar(config));
  const options = hwOptions(config);
  const names = freeParameters(seasonality, config.useTrend);
  const bounds: Bounds[] = names.map((name) => config.bounds[name]);
  const scratch = cloneHwState(initial);

  const objective = (point: readonly number[]) => {
    scratch.daily.set(initial.daily);
    scratch.weekly.set(initial.weekly);
    Object.assign(scratch, { level: initial.level, slope: 0, lastError: 0, nextSlot: initial.nextSlot });
    const { sse, scored } = replay(scratch, toParams(names, point), options, window.values);
    return scored === 0 ? Number.POSITIVE_INFINITY : sse / scored;
  };

  const best = minimiseBounded(
    objective,
    bounds,
    names.map((name) => START[name]),
    { maxEvaluations: config.fitMaxEvaluations, tolerance: 1e-4 },
  );
  if (!Number.isFinite(best.value)) return null;
  const params = toParams(names, best.point);
  const state = cloneHwState(initial);
  let sse = 0;
  let scaleSum = 0;
  let scored = 0;
  const expectedMeans = new Float64Array(window.values.length);
  window.values.forEach((value, i) => {
    const expected = forecastAt(state, params, options, 1);
    expectedMeans[i] = expected;
    const error = stepInPlace(state, params, options, value);
    if (Number.isNaN(error)) return;
    sse += error * error;
    scaleSum += varianceScale(expected, config);
    scored++;
  });
  const n = Math.max(1, scored);
  return {
    params,
    state,
    meanSquaredError: sse / n,
    errorMoments: { squaredError: sse / n, scale: scaleSum / n },
    burstSize: calibrateBurstSize(expectedMeans, window.values),
    evaluations: best.evaluations,
  };
}
