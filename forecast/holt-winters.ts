// Additive double-seasonal Holt-Winters (Taylor 2003): level, optional damped trend, a daily and a
// weekly seasonal term, plus a first-order autocorrelation adjustment of the one-step error.
// Additive, so long runs of zero activity are fine (a multiplicative model would divide by them).

import { type SeasonCalendar, UTC_CALENDAR } from "./calendar.ts";
import { DAY_SLOTS, WEEK_SLOTS } from "./grid.ts";

export type Seasonality = "daily" | "daily+weekly";

export type HwParams = { alpha: number; beta: number; gammaDay: number; gammaWeek: number; phi: number };

export type HwState = {
  seasonality: Seasonality;
  level: number;
  slope: number;
  /** Where each slot falls in the seasons: the workload's time zone. */
  calendar: SeasonCalendar;
  /** Indexed by the slot's local time of day (its week position mod 96). */
  daily: Float64Array;
  /** Indexed by the slot's local time of week; all zero while the model is daily only. */
  weekly: Float64Array;
  /** Last one-step residual of the component model, for the autocorrelation adjustment. */
  lastError: number;
  /** Grid slot the next observation belongs to. */
  nextSlot: number;
};

export type HwOptions = { damping: number };

export function cloneHwState(state: HwState): HwState {
  return { ...state, daily: state.daily.slice(), weekly: state.weekly.slice() };
}

/** Component forecast for `slot` from the state as it is (no autocorrelation term). */
function componentForecast(state: HwState, slot: number, trendSteps: number): number {
  const weekIndex = state.calendar.weekPosition(slot);
  return (
    state.level +
    state.slope * trendSteps +
    (state.daily[weekIndex % DAY_SLOTS] ?? 0) +
    (state.weekly[weekIndex] ?? 0)
  );
}

/**
 * Learns one slot in place and returns the adjusted one-step error (NaN for a gap).
 * A gap (NaN) advances time without touching level or seasons: missing data is not zero activity.
 */
export function stepInPlace(state: HwState, params: HwParams, options: HwOptions, value: number): number {
  const slot = state.nextSlot;
  state.nextSlot = slot + 1;
  const base = state.level + options.damping * state.slope;
  if (Number.isNaN(value)) {
    state.level = base;
    state.slope *= options.damping;
    state.lastError = 0;
    return Number.NaN;
  }
  const weekIndex = state.calendar.weekPosition(slot);
  const dayIndex = weekIndex % DAY_SLOTS;
  const daily = state.daily[dayIndex] ?? 0;
  const weekly = state.weekly[weekIndex] ?? 0;
  const componentError = value - (base + daily + weekly);
  const adjustedError = componentError - params.phi * state.lastError;

  const level = params.alpha * (value - daily - weekly) + (1 - params.alpha) * base;
  state.slope = params.beta * (level - state.level) + (1 - params.beta) * options.damping * state.slope;
  state.level = level;
  state.daily[dayIndex] = params.gammaDay * (value - level - weekly) + (1 - params.gammaDay) * daily;
  if (state.seasonality === "daily+weekly") {
    state.weekly[weekIndex] = params.gammaWeek * (value - level - daily) + (1 - params.gammaWeek) * weekly;
  }
  state.lastError = componentError;
  return adjustedError;
}

/**
 * Point forecast `horizon` slots ahead (1 = the next slot), unclipped. A slot already learned (horizon below 1:
 * a clock stepped back) is read at its own place in the seasons, with the level and trend of the next slot.
 */
export function forecastAt(state: HwState, params: HwParams, options: HwOptions, horizon: number): number {
  const ahead = Math.max(1, horizon);
  const slot = state.nextSlot + horizon - 1;
  return (
    componentForecast(state, slot, dampedSum(options.damping, ahead)) + params.phi ** ahead * state.lastError
  );
}

/**
 * Forecast `horizon` slots ahead from level, trend and seasons alone, without the correction for the
 * last slot's error: what the learned pattern expects, whatever the last slot did. Unclipped.
 */
export function patternForecastAt(state: HwState, options: HwOptions, horizon: number): number {
  // As forecastAt: a slot already learned keeps its own place in the seasons.
  return componentForecast(
    state,
    state.nextSlot + horizon - 1,
    dampedSum(options.damping, Math.max(1, horizon)),
  );
}

function dampedSum(damping: number, horizon: number): number {
  if (damping === 1) return horizon;
  return (damping * (1 - damping ** horizon)) / (1 - damping);
}

/**
 * Variance multipliers for horizons 1..count: 1 + sum of squared innovation weights, the usual
 * linear-innovations approximation (level and trend carry every shock; a season carries it once per period).
 */
export function varianceMultipliers(params: HwParams, count: number): Float64Array {
  const multipliers = new Float64Array(count);
  let sum = 1;
  for (let h = 1; h <= count; h++) {
    multipliers[h - 1] = sum;
    const j = h;
    const weight =
      params.alpha * (1 + params.beta * j) +
      (j % DAY_SLOTS === 0 ? params.gammaDay : 0) +
      (j % WEEK_SLOTS === 0 ? params.gammaWeek : 0);
    sum += weight * weight;
  }
  return multipliers;
}

/** Values with NaN for gaps, starting at grid slot `startSlot`. */
export type SlotWindow = { startSlot: number; values: Float64Array };

/**
 * Half-lives, in days, of the weight each day of a window carries in the initial seasons: the newest slot
 * weighs 1, a slot `daily` days older 1/2. Infinity weighs every day alike.
 */
export type SeasonHalfLives = { daily: number; weekly: number };

export const EQUAL_WEIGHTS: SeasonHalfLives = {
  daily: Number.POSITIVE_INFINITY,
  weekly: Number.POSITIVE_INFINITY,
};

/**
 * Initial state from a window: level = mean of the observed values, daily term = weighted mean per time of
 * day minus the level, weekly term = weighted mean per time of week minus both. Recent days weigh more
 * (`halfLives`), so a changed schedule shows in the seasons within days instead of as it fills the window.
 */
export function initialState(
  window: SlotWindow,
  seasonality: Seasonality,
  halfLives: SeasonHalfLives = EQUAL_WEIGHTS,
  calendar: SeasonCalendar = UTC_CALENDAR,
): HwState {
  const level = meanOfObserved(window.values);
  const dayIndexOf = (slot: number) => calendar.weekPosition(slot) % DAY_SLOTS;
  const daily = dailyMeans(window, dayIndexOf, () => level, recencyWeight(window, halfLives.daily));
  // Two weeks give only two samples per time of week, so the raw weekly term is mostly sampling
  // noise unless the weekly pattern is strong: it is shrunk towards zero, day by day, by how much of
  // it the noise explains (see `shrunkWeeklyMeans`).
  const weekly =
    seasonality === "daily+weekly"
      ? shrunkWeeklyMeans(
          window,
          (slot) => level + (daily[dayIndexOf(slot)] ?? 0),
          recencyWeight(window, halfLives.weekly),
          calendar,
        )
      : new Float64Array(WEEK_SLOTS);
  const nextSlot = window.startSlot;
  return { seasonality, level, slope: 0, calendar, daily, weekly, lastError: 0, nextSlot };
}

/** Weight of the value at `offset` in `window`: 1 for the newest, halving every `halfLifeDays`. */
export function recencyWeight(window: SlotWindow, halfLifeDays: number): (offset: number) => number {
  const newest = window.values.length - 1;
  return (offset) => 0.5 ** ((newest - offset) / (halfLifeDays * DAY_SLOTS));
}

function meanOfObserved(values: Float64Array): number {
  let sum = 0;
  let count = 0;
  for (const value of values) {
    if (Number.isNaN(value)) continue;
    sum += value;
    count++;
  }
  return count === 0 ? 0 : sum / count;
}

function dailyMeans(
  window: SlotWindow,
  indexOf: (slot: number) => number,
  baseline: (slot: number) => number,
  weightOf: (offset: number) => number,
): Float64Array {
  const sums = new Float64Array(DAY_SLOTS);
  const weights = new Float64Array(DAY_SLOTS);
  window.values.forEach((value, offset) => {
    if (Number.isNaN(value)) return;
    const slot = window.startSlot + offset;
    const index = indexOf(slot);
    const weight = weightOf(offset);
    sums[index] = (sums[index] ?? 0) + weight * (value - baseline(slot));
    weights[index] = (weights[index] ?? 0) + weight;
  });
  return sums.map((sum, index) => ((weights[index] ?? 0) > 0 ? sum / (weights[index] ?? 1) : 0));
}

/**
 * Weighted weekly means of the residual left by `baseline`, shrunk towards zero day by day (James-Stein):
 * for each day of the week, the factor is 1 - (sampling variance of a mean) / (mean square of the means),
 * floored at 0. A weekend that differs from the working days keeps its shape; a day whose means are
 * no bigger than their own noise (most days of a workload with no weekly pattern) contributes nothing.
 * A day without any time of week seen twice cannot tell signal from noise and contributes nothing.
 * The weights are reliability weights: a mean of unequally weighted samples is as noisy as fewer samples.
 */
export function shrunkWeeklyMeans(
  window: SlotWindow,
  baseline: (slot: number) => number,
  weightOf: (offset: number) => number = () => 1,
  calendar: SeasonCalendar = UTC_CALENDAR,
): Float64Array {
  const weights = new Float64Array(WEEK_SLOTS);
  const squaredWeights = new Float64Array(WEEK_SLOTS);
  const sums = new Float64Array(WEEK_SLOTS);
  const squares = new Float64Array(WEEK_SLOTS);
  window.values.forEach((value, offset) => {
    if (Number.isNaN(value)) return;
    const slot = window.startSlot + offset;
    const index = calendar.weekPosition(slot);
    const residual = value - baseline(slot);
    const weight = weightOf(offset);
    weights[index] = (weights[index] ?? 0) + weight;
    squaredWeights[index] = (squaredWeights[index] ?? 0) + weight * weight;
    sums[index] = (sums[index] ?? 0) + weight * residual;
    squares[index] = (squares[index] ?? 0) + weight * residual * residual;
  });
  const weekly = new Float64Array(WEEK_SLOTS);
  for (let day = 0; day < 7; day++) {
    let power = 0;
    let noise = 0;
    let noiseSamples = 0;
    let means = 0;
    for (let i = day * DAY_SLOTS; i < (day + 1) * DAY_SLOTS; i++) {
      const weight = weights[i] ?? 0;
      if (weight === 0) continue;
      const mean = (sums[i] ?? 0) / weight;
      weekly[i] = mean;
      power += mean * mean;
      means++;
      // Unbiased variance of the samples (n - 1 with equal weights), then of their weighted mean.
      const freedom = weight - (squaredWeights[i] ?? 0) / weight;
      if (freedom <= FREEDOM_EPSILON) continue;
      const variance = Math.max(0, (squares[i] ?? 0) - weight * mean * mean) / freedom;
      noise += (variance * (squaredWeights[i] ?? 0)) / (weight * weight);
      noiseSamples++;
    }
    const shrink =
      noiseSamples === 0 || power === 0 ? 0 : Math.max(0, 1 - noise / noiseSamples / (power / means));
    for (let i = day * DAY_SLOTS; i < (day + 1) * DAY_SLOTS; i++) weekly[i] = shrink * (weekly[i] ?? 0);
  }
  return weekly;
}

/** Below this, a time of week was seen once (its weight all in one sample): no variance to estimate. */
const FREEDOM_EPSILON = 1e-9;
