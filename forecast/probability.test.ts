import { describe, expect, it } from "vitest";
import { forecastConfig } from "./config.ts";
import { poisson, seededRandom } from "./prng.ts";
import {
  activityProbability,
  calibrateBurstSize,
  isActivityExpected,
  MAX_BURST_SIZE,
  MIN_BURST_SIZE,
  OCCUPANCY,
} from "./probability.ts";

const config = forecastConfig();

describe("chance of any activity in a slot", () => {
  it.each([
    { name: "no activity expected gives no chance", mean: 0, burst: 1, chance: 0 },
    { name: "a negative forecast gives no chance", mean: -2, burst: 1, chance: 0 },
    { name: "single requests are Poisson: one expected is a 63% chance", mean: 1, burst: 1, chance: 0.632 },
    { name: "five requests per burst make five expected one burst", mean: 5, burst: 5, chance: 0.632 },
    { name: "an occupancy series's mean is its chance", mean: 0.3, burst: OCCUPANCY, chance: 0.3 },
    { name: "an occupancy chance never exceeds 1", mean: 1.4, burst: OCCUPANCY, chance: 1 },
  ])("$name", ({ mean, burst, chance }) => {
    expect(activityProbability(mean, burst)).toBeCloseTo(chance, 3);
  });

  it.each([
    { name: "a slot below the chance threshold is not activity", mean: 0.3, burst: 1, expected: false },
    { name: "a slot at a 45% chance is activity", mean: 0.6, burst: 1, expected: true },
    {
      name: "several requests expected are not activity when they are likely one rare burst",
      mean: 2,
      burst: 8,
      expected: false,
    },
  ])("$name", ({ mean, burst, expected }) => {
    expect(isActivityExpected(mean, burst, config)).toBe(expected);
  });

  it("honours the optional floor on the mean", () => {
    const floored = forecastConfig({ activityThreshold: 1 });
    expect(isActivityExpected(0.8, 1, config)).toBe(true);
    expect(isActivityExpected(0.8, 1, floored)).toBe(false);
  });
});

describe("burst size calibration", () => {
  const random = seededRandom(3);
  /** Bursts arrive as Poisson(rate) per slot, each of `size` requests; the forecast is the true mean. */
  function bursty(rate: number, size: number, slots: number) {
    const observed = Array.from({ length: slots }, () => poisson(random, rate) * size);
    return { expected: new Array(slots).fill(rate * size), observed };
  }

  it.each([
    { name: "finds one request per burst for independent requests", rate: 0.4, size: 1, low: 0.8, high: 1.3 },
    { name: "finds the size of bursts of five requests", rate: 0.3, size: 5, low: 4, high: 6 },
  ])("$name", ({ rate, size, low, high }) => {
    const { expected, observed } = bursty(rate, size, 4000);
    const burst = calibrateBurstSize(expected, observed);
    expect(burst).toBeGreaterThan(low);
    expect(burst).toBeLessThan(high);
  });

  it.each([
    {
      name: "reads a 0/1 series as occupancy",
      expected: [0.2, 0.9, 0.5],
      observed: [0, 1, 1],
      burst: OCCUPANCY,
    },
    {
      name: "reads a window without activity as occupancy, so the first activity after it is judged as a chance",
      expected: [1, 1],
      observed: [0, 0],
      burst: OCCUPANCY,
    },
    {
      name: "falls back to the minimum without any slot known",
      expected: [1],
      observed: [Number.NaN],
      burst: MIN_BURST_SIZE,
    },
    {
      name: "falls back to the minimum when even single requests would not explain the activity seen",
      expected: [0.1, 0.1, 0.1],
      observed: [2, 3, 0],
      burst: MIN_BURST_SIZE,
    },
    {
      name: "stops at the maximum for activity far rarer than its mean",
      expected: [1e6, 1e6, 1e6, 1e6],
      observed: [2, 0, 0, 0],
      burst: MAX_BURST_SIZE,
    },
    { name: "leaves gaps out", expected: [5, 0.1], observed: [Number.NaN, 2], burst: MIN_BURST_SIZE },
  ])("$name", ({ expected, observed, burst }) => {
    expect(calibrateBurstSize(expected, observed)).toBe(burst);
  });
});
