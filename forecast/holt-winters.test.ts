import { describe, expect, it } from "vitest";
import { DEFAULT_FORECAST_CONFIG, forecastConfig } from "./config.ts";
import { fitWindow, hwOptions } from "./fit.ts";
import { DAY_SLOTS, WEEK_SLOTS } from "./grid.ts";
import {
  cloneHwState,
  EQUAL_WEIGHTS,
  forecastAt,
  type HwState,
  initialState,
  recencyWeight,
  type SeasonHalfLives,
  type SlotWindow,
  shrunkWeeklyMeans,
  stepInPlace,
} from "./holt-winters.ts";
import { minimiseBounded } from "./optimise.ts";
import { normal, seededRandom } from "./prng.ts";
import { MONDAY_SLOT, officeRate, officeSeries } from "./testing.ts";

const config = forecastConfig();

function windowOf(values: (number | null)[], startSlot = MONDAY_SLOT): SlotWindow {
  return { startSlot, values: Float64Array.from(values, (v) => (v === null ? Number.NaN : v)) };
}

/** Deterministic shape: a daily sine plus a weekday/weekend offset. */
function knownShape(slot: number): number {
  const day = Math.floor((slot - MONDAY_SLOT) / DAY_SLOTS);
  const daily = 5 + 4 * Math.sin((2 * Math.PI * (slot % DAY_SLOTS)) / DAY_SLOTS);
  return daily + (day % 7 < 5 ? 3 : 0);
}

describe("double-seasonal Holt-Winters", () => {
  it("recovers a known daily and weekly pattern from noiseless data", () => {
    const values = Array.from({ length: 2 * WEEK_SLOTS }, (_, i) => knownShape(MONDAY_SLOT + i));
    const fit = fitWindow(windowOf(values), "daily+weekly", config);
    expect(fit).not.toBeNull();
    const options = hwOptions(config);
    for (const horizon of [1, 10, 50, DAY_SLOTS, 5 * DAY_SLOTS + 7]) {
      const slot = MONDAY_SLOT + 2 * WEEK_SLOTS + horizon - 1;
      expect(forecastAt(fit?.state ?? never(), fit?.params ?? never(), options, horizon)).toBeCloseTo(
        knownShape(slot),
        0,
      );
    }
  });

  it("recovers the office-hours shape from noisy counts", () => {
    const series = officeSeries(14, 7);
    const fit = fitWindow(windowOf(series.map((p) => p.value)), "daily+weekly", config);
    const options = hwOptions(config);
    const errors = Array.from({ length: DAY_SLOTS }, (_, i) => {
      const expected = officeRate(14, i);
      return Math.abs(forecastAt(fit?.state ?? never(), fit?.params ?? never(), options, i + 1) - expected);
    });
    const meanError = errors.reduce((a, b) => a + b, 0) / errors.length;
    expect(meanError).toBeLessThan(1.5);
  });

  it("handles a series of only zeros", () => {
    const fit = fitWindow(windowOf(new Array(3 * DAY_SLOTS).fill(0)), "daily", config);
    expect(fit?.meanSquaredError).toBe(0);
    expect(forecastAt(fit?.state ?? never(), fit?.params ?? never(), hwOptions(config), 5)).toBe(0);
  });

  it("treats a gap as unknown: the seasons do not learn a zero from it", () => {
    const state = initialState(windowOf(new Array(DAY_SLOTS).fill(4)), "daily");
    const params = { alpha: 0.5, beta: 0, gammaDay: 0.5, gammaWeek: 0, phi: 0 };
    const before = cloneHwState(state);
    const error = stepInPlace(state, params, hwOptions(config), Number.NaN);
    expect(error).toBeNaN();
    expect(state.daily).toEqual(before.daily);
    expect(state.level).toBe(before.level);
    expect(state.nextSlot).toBe(before.nextSlot + 1);
  });

  it("fits from a short, gappy history", () => {
    const values = officeSeries(3, 3).map((p, i) => (i % 5 === 0 ? null : p.value));
    const fit = fitWindow(windowOf(values), "daily", config);
    expect(fit).not.toBeNull();
    expect(Number.isFinite(fit?.meanSquaredError)).toBe(true);
  });

  it("returns no fit when the window has no observed value", () => {
    expect(fitWindow(windowOf(new Array(DAY_SLOTS).fill(null)), "daily", config)).toBeNull();
  });

  it.each([1, 2, 3, 4, 5])("keeps fitted parameters within their bounds (seed %i)", (seed) => {
    const withTrend = forecastConfig({ useTrend: true });
    const series = officeSeries(14, seed, (day, slot) => officeRate(day, slot, 2 + seed * 3) + day * 0.1);
    const fit = fitWindow(windowOf(series.map((p) => p.value)), "daily+weekly", withTrend);
    for (const [name, [low, high]] of Object.entries(DEFAULT_FORECAST_CONFIG.bounds)) {
      const value = fit?.params[name as keyof typeof DEFAULT_FORECAST_CONFIG.bounds] ?? Number.NaN;
      expect(value).toBeGreaterThanOrEqual(low);
      expect(value).toBeLessThanOrEqual(high);
    }
  });
});

const weekdaysOnly = (day: number) => (day % 7 < 5 ? 6 : 0);

describe("weekly season from two weeks", () => {
  const WEEKEND = [5, 6];
  const EVERY_DAY = [0, 1, 2, 3, 4, 5, 6];
  /** Weekly terms of the given days of the test week (day 0 is a Monday), in slot order. */
  const onDays = (weekly: Float64Array, days: number[]) =>
    days.flatMap((day) =>
      Array.from(
        { length: DAY_SLOTS },
        (_, i) => weekly[(MONDAY_SLOT + day * DAY_SLOTS + i) % WEEK_SLOTS] ?? 0,
      ),
    );
  const meanAbs = (values: number[]) => values.reduce((sum, v) => sum + Math.abs(v), 0) / values.length;
  /** Weekly means of the values around a flat baseline, unshrunk. */
  const rawWeekly = (values: number[], baseline: number) => {
    const sums = new Float64Array(WEEK_SLOTS);
    const counts = new Float64Array(WEEK_SLOTS);
    values.forEach((v, i) => {
      const index = (MONDAY_SLOT + i) % WEEK_SLOTS;
      sums[index] = (sums[index] ?? 0) + v - baseline;
      counts[index] = (counts[index] ?? 0) + 1;
    });
    return sums.map((sum, i) => sum / (counts[i] ?? 1));
  };

  it.each([
    {
      name: "keeps a weekend that differs from the working days",
      rate: (day: number) => (day % 7 < 5 ? 6 : 0),
      days: 14,
      lookAt: WEEKEND,
      keptAtLeast: 0.95,
      keptAtMost: 1,
    },
    {
      name: "drops a weekly pattern that is only sampling noise",
      rate: () => 3,
      days: 14,
      lookAt: EVERY_DAY,
      keptAtLeast: 0,
      keptAtMost: 0.25,
    },
    {
      name: "keeps nothing while no time of week has been seen twice",
      rate: (day: number) => (day % 7 < 5 ? 6 : 0),
      days: 7,
      lookAt: EVERY_DAY,
      keptAtLeast: 0,
      keptAtMost: 0,
    },
  ])("$name", ({ rate, days, lookAt, keptAtLeast, keptAtMost }) => {
    const values = officeSeries(days, 5, (day) => rate(day)).map((p) => p.value ?? 0);
    const mean = values.reduce((a, b) => a + b, 0) / values.length;
    const weekly = shrunkWeeklyMeans(windowOf(values), () => mean);
    const kept = meanAbs(onDays(weekly, lookAt)) / meanAbs(onDays(rawWeekly(values, mean), lookAt));
    expect(kept).toBeGreaterThanOrEqual(keptAtLeast);
    expect(kept).toBeLessThanOrEqual(keptAtMost);
  });

  it.each([
    {
      name: "keeps a weekend that differs from the working days",
      rate: weekdaysOnly,
      atLeast: 0.95,
      atMost: 1,
    },
    { name: "drops a weekly pattern that is only sampling noise", rate: () => 3, atLeast: 0, atMost: 0.3 },
  ])("with the newer week weighing more, still $name", ({ rate, atLeast, atMost }) => {
    const values = officeSeries(14, 5, rate).map((p) => p.value ?? 0);
    const mean = values.reduce((a, b) => a + b, 0) / values.length;
    const window = windowOf(values);
    const weekly = shrunkWeeklyMeans(window, () => mean, recencyWeight(window, 10));
    const lookAt = rate === weekdaysOnly ? WEEKEND : EVERY_DAY;
    const kept = meanAbs(onDays(weekly, lookAt)) / meanAbs(onDays(rawWeekly(values, mean), lookAt));
    expect(kept).toBeGreaterThanOrEqual(atLeast);
    expect(kept).toBeLessThanOrEqual(atMost);
  });

  it("shrinks a day by the means it has: times of day never seen do not weaken the rest of it", () => {
    const random = seededRandom(4);
    const values = Array.from({ length: 2 * WEEK_SLOTS }, (_, i) => {
      const day = Math.floor(i / DAY_SLOTS) % 7;
      return (day === 2 ? 1 : 0) + 0.8 * normal(random);
    });
    // The same two weeks with the afternoon of day 2 never observed.
    const holed = values.map((v, i) =>
      Math.floor(i / DAY_SLOTS) % 7 === 2 && i % DAY_SLOTS >= 48 ? null : v,
    );
    const morning = (MONDAY_SLOT + 2 * DAY_SLOTS) % WEEK_SLOTS;
    const full = shrunkWeeklyMeans(windowOf(values), () => 0)[morning] ?? 0;
    const partial = shrunkWeeklyMeans(windowOf(holed), () => 0)[morning] ?? 0;
    expect(partial).toBeCloseTo(full, 1);
  });

  it("leans towards the newer week: a Monday peak that grew is mostly the new one", () => {
    const mondayPeak = (week: number) => (week === 0 ? 10 : 20);
    const values = Array.from({ length: 2 * WEEK_SLOTS }, (_, i) =>
      i % WEEK_SLOTS === 40 ? mondayPeak(Math.floor(i / WEEK_SLOTS)) : 0,
    );
    const window = windowOf(values);
    const equal = shrunkWeeklyMeans(window, () => 0)[(MONDAY_SLOT + 40) % WEEK_SLOTS] ?? 0;
    const recent =
      shrunkWeeklyMeans(window, () => 0, recencyWeight(window, 7))[(MONDAY_SLOT + 40) % WEEK_SLOTS] ?? 0;
    // Equal weights: 15, shrunk a little as sampling noise; halving a week: (10 / 2 + 20) / 1.5, shrunk.
    expect(equal).toBeLessThan(15);
    expect(recent / equal).toBeGreaterThan(1.1);
  });

  it("counts a mean of unequally weighted samples as noisier than one of equal weights", () => {
    // Every Monday slot sees 4, then 6; every other day 0. Samples (4, 6): variance (6 - 4)^2 / 2 = 2.
    const values = Array.from({ length: 2 * WEEK_SLOTS }, (_, i) =>
      i % WEEK_SLOTS < DAY_SLOTS ? (i < WEEK_SLOTS ? 4 : 6) : 0,
    );
    const window = windowOf(values);
    const monday = (weekly: Float64Array) => weekly[MONDAY_SLOT % WEEK_SLOTS] ?? 0;
    // Equal weights: mean 5, variance of the mean 2 / 2 = 1, shrunk by 1 - 1 / 5^2.
    expect(monday(shrunkWeeklyMeans(window, () => 0))).toBeCloseTo(5 * (1 - 1 / 25), 9);
    // Weights 1/3 and 1: mean 5.5, variance of the mean 2 * (1/9 + 1) / (4/3)^2 = 1.25, not 2 / 2.
    const thirdForOld = (offset: number) => (offset < WEEK_SLOTS ? 1 / 3 : 1);
    expect(monday(shrunkWeeklyMeans(window, () => 0, thirdForOld))).toBeCloseTo(
      5.5 * (1 - 1.25 / 5.5 ** 2),
      9,
    );
  });

  it("starts the weekly season from its own half-life", () => {
    const mondayPeak = (week: number) => (week === 0 ? 10 : 20);
    const values = Array.from({ length: 2 * WEEK_SLOTS }, (_, i) =>
      i % WEEK_SLOTS === 40 ? mondayPeak(Math.floor(i / WEEK_SLOTS)) : 0,
    );
    const window = windowOf(values);
    const peak = (state: HwState) =>
      state.level +
      (state.daily[(MONDAY_SLOT + 40) % DAY_SLOTS] ?? 0) +
      (state.weekly[(MONDAY_SLOT + 40) % WEEK_SLOTS] ?? 0);
    const equal = peak(initialState(window, "daily+weekly", EQUAL_WEIGHTS));
    const weeklyOnly = peak(
      initialState(window, "daily+weekly", { daily: Number.POSITIVE_INFINITY, weekly: 7 }),
    );
    expect(weeklyOnly).toBeGreaterThan(equal + 1);
  });
});

describe("seasons started from a window whose schedule changed", () => {
  /** Ten days of activity at 08:00-18:00, then four at 06:00-15:00; 0/1 per slot, daily season only. */
  const changed: number[] = Array.from({ length: 14 * DAY_SLOTS }, (_, i) => {
    const hour = (i % DAY_SLOTS) / 4;
    const [from, to] = i < 10 * DAY_SLOTS ? [8, 18] : [6, 15];
    return hour >= from && hour < to ? 1 : 0;
  });
  const at0600 = 6 * 4;

  it("gives the newest days more weight, so the new hours show within days", () => {
    const window = windowOf(changed);
    const level = changed.reduce((a, b) => a + b, 0) / changed.length;
    const equal = (initialState(window, "daily").daily[at0600] ?? 0) + level;
    const weighted =
      (initialState(window, "daily", DEFAULT_FORECAST_CONFIG.seasonHalfLivesDays).daily[at0600] ?? 0) + level;
    expect(equal).toBeCloseTo(4 / 14, 6);
    // Four days of fourteen, halving every seven: (1 - 2^(-4/7)) / (1 - 2^(-2)).
    expect(weighted).toBeCloseTo((1 - 2 ** (-4 / 7)) / (1 - 2 ** -2), 2);
  });

  it("weighs every day alike with infinite half-lives: plain means, the weekly ones shrunk as unweighted", () => {
    // Three weeks, so most times of week are seen three times; gaps leave some seen twice or once.
    const values = officeSeries(21, 11).map((p, i) => (i % 11 === 0 || i > 20 * DAY_SLOTS ? null : p.value));
    const window = windowOf(values);
    const state = initialState(window, "daily+weekly", EQUAL_WEIGHTS);
    const expected = unweightedStart(window);
    expect(expected.weekly.some((v) => v !== 0)).toBe(true);
    for (const [i, v] of state.daily.entries()) expect(v).toBeCloseTo(expected.daily[i] ?? Number.NaN, 9);
    for (const [i, v] of state.weekly.entries()) expect(v).toBeCloseTo(expected.weekly[i] ?? Number.NaN, 9);
  });

  it("starts a refit's seasons from the configured half-lives", () => {
    // Smoothing held at its lower bound, as the fit leaves it on the replayed traces: the start shows.
    const slow = {
      ...DEFAULT_FORECAST_CONFIG.bounds,
      alpha: [0.001, 0.001],
      gammaDay: [0.001, 0.001],
    } as const;
    const at0600Tomorrow = (halfLives: SeasonHalfLives) => {
      const fitConfig = forecastConfig({ seasonHalfLivesDays: halfLives, bounds: slow });
      const fit = fitWindow(windowOf(changed), "daily", fitConfig);
      return forecastAt(fit?.state ?? never(), fit?.params ?? never(), hwOptions(fitConfig), at0600 + 1);
    };
    expect(at0600Tomorrow(EQUAL_WEIGHTS)).toBeCloseTo(4 / 14, 1);
    expect(at0600Tomorrow(DEFAULT_FORECAST_CONFIG.seasonHalfLivesDays)).toBeGreaterThan(
      at0600Tomorrow(EQUAL_WEIGHTS) + 0.1,
    );
  });

  it.each([0, -7, Number.NaN])("refuses a half-life of %s days", (days) => {
    expect(() => forecastConfig({ seasonHalfLivesDays: { daily: 7, weekly: days } })).toThrow(
      /seasonHalfLivesDays\.weekly must be a positive number of days/,
    );
    expect(() => forecastConfig({ seasonHalfLivesDays: EQUAL_WEIGHTS })).not.toThrow();
  });
});

/**
 * The start with every sample weighing alike, written out: plain means per time of day around the level,
 * and per time of week around both, each day's shrunk by 1 - (mean variance of a mean) / (mean square).
 */
function unweightedStart(window: SlotWindow): { daily: number[]; weekly: number[] } {
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const samples = (period: number, residual: (value: number, slot: number) => number) => {
    const byIndex: number[][] = Array.from({ length: period }, () => []);
    window.values.forEach((value, offset) => {
      const slot = window.startSlot + offset;
      if (!Number.isNaN(value)) byIndex[slot % period]?.push(residual(value, slot));
    });
    return byIndex;
  };
  const level = mean([...window.values].filter((v) => !Number.isNaN(v)));
  const daily = samples(DAY_SLOTS, (v) => v - level).map((xs) => (xs.length > 0 ? mean(xs) : 0));
  const byTimeOfWeek = samples(WEEK_SLOTS, (v, slot) => v - level - (daily[slot % DAY_SLOTS] ?? 0));
  const weekly: number[] = [];
  for (let day = 0; day < 7; day++) {
    const slots = byTimeOfWeek.slice(day * DAY_SLOTS, (day + 1) * DAY_SLOTS);
    const means = slots.map((xs) => (xs.length > 0 ? mean(xs) : 0));
    const power = mean(means.map((m) => m * m));
    const noises = slots
      .filter((xs) => xs.length >= 2)
      .map((xs) => xs.reduce((sum, x) => sum + (x - mean(xs)) ** 2, 0) / (xs.length - 1) / xs.length);
    const shrink = noises.length === 0 || power === 0 ? 0 : Math.max(0, 1 - mean(noises) / power);
    weekly.push(...means.map((m) => shrink * m));
  }
  return { daily, weekly };
}

describe("bounded minimiser", () => {
  it.each([
    { name: "finds an interior minimum", target: [0.3, 0.7], expected: [0.3, 0.7] },
    { name: "stops at the bound when the minimum lies outside", target: [-2, 3], expected: [0, 1] },
  ])("$name", ({ target, expected }) => {
    const objective = (p: readonly number[]) => p.reduce((sum, x, i) => sum + (x - (target[i] ?? 0)) ** 2, 0);
    const result = minimiseBounded(
      objective,
      [
        [0, 1],
        [0, 1],
      ],
      [0.5, 0.5],
      { maxEvaluations: 400, tolerance: 1e-12 },
    );
    result.point.forEach((x, i) => {
      expect(x).toBeGreaterThanOrEqual(0);
      expect(x).toBeLessThanOrEqual(1);
      expect(x).toBeCloseTo(expected[i] ?? Number.NaN, 1);
    });
  });
});

function never(): never {
  throw new Error("missing fit");
}
