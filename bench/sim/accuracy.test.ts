import { describe, expect, it } from "vitest";
import { forecastConfig, WEEK_SLOTS } from "../../forecast/index.ts";
import { officeSeries } from "../../forecast/testing.ts";
import { evaluateAccuracy, inSampleScale } from "./accuracy.ts";
import { fillGaps } from "./augurs.ts";

const config = forecastConfig();
const grid = officeSeries(21, 4);

describe("forecast accuracy", () => {
  it("scores a forecaster that repeats last week at relative MAE 1, from the engine's origins", () => {
    const lastWeek = (history: Float64Array, horizon: number) =>
      history.slice(history.length - WEEK_SLOTS, history.length - WEEK_SLOTS + horizon);
    const report = evaluateAccuracy(grid, config, lastWeek);
    expect(report.libraryDayAhead?.relativeMae).toBeCloseTo(1, 9);
    expect(report.libraryDayAhead?.origins).toBe(report.engineDayAhead.origins);
    expect(report.engineDayAhead.origins).toBe(7);
  });

  it("forecasts a regular office week better than seasonal-naive", () => {
    const report = evaluateAccuracy(grid, config);
    expect(report.engineOneStep.relativeMae).toBeLessThan(1);
    expect(report.engineDayAhead.relativeMae).toBeLessThan(1);
    expect(report.libraryDayAhead).toBeNull();
  });

  it("scales MASE by seasonal-naive's in-sample error: a forecast off by that much everywhere scores 1", () => {
    // Alternating weeks of 0 and 2: seasonal-naive is off by 2 in every slot of its history.
    const alternating = Array.from({ length: 3 * WEEK_SLOTS }, (_, slot) => ({
      slot,
      value: Math.floor(slot / WEEK_SLOTS) % 2 === 0 ? 0 : 2,
    }));
    // Week 3 is all 0: a forecast of 2 is off by 2 everywhere.
    const offByTwo = (_history: Float64Array, horizon: number) => new Float64Array(horizon).fill(2);
    const report = evaluateAccuracy(alternating, config, offByTwo);
    expect(report.libraryDayAhead?.mase).toBeCloseTo(1, 9);
  });
});

describe("seasonal-naive's in-sample error", () => {
  it.each([
    {
      what: "the mean of the week-on-week differences",
      values: [...Array(WEEK_SLOTS).fill(1), ...Array(WEEK_SLOTS).fill(4)],
      want: 3,
    },
    {
      what: "leaving out differences with a gap",
      values: [...Array(WEEK_SLOTS).fill(1), Number.NaN, ...Array(WEEK_SLOTS - 1).fill(2)],
      want: 1,
    },
    { what: "none without a week before", values: Array(WEEK_SLOTS).fill(1), want: Number.NaN },
  ])("is $what", ({ values, want }) => {
    expect(inSampleScale(Float64Array.from(values), values.length)).toEqual(want);
  });
});

describe("gaps before a library fit", () => {
  const week = (fill: number) => new Array(WEEK_SLOTS).fill(fill);
  it.each([
    { name: "take the value a week before", values: [...week(2), Number.NaN], filled: 2 },
    { name: "are zero without anything to take", values: [Number.NaN], filled: 0 },
  ])("$name", ({ values, filled }) => {
    expect(fillGaps(Float64Array.from(values)).at(-1)).toBe(filled);
  });
});
