import { describe, expect, it } from "vitest";
import { forecastConfig, WEEK_SLOTS } from "../../forecast/index.ts";
import { officeSeries } from "../../forecast/testing.ts";
import { evaluateAccuracy } from "./accuracy.ts";
import { fillGaps } from "./augurs.ts";

const config = forecastConfig();
const grid = officeSeries(21, 4);

describe("forecast accuracy", () => {
  it("scores a forecaster that repeats last week at MASE 1, from the engine's origins", () => {
    const lastWeek = (history: Float64Array, horizon: number) =>
      history.slice(history.length - WEEK_SLOTS, history.length - WEEK_SLOTS + horizon);
    const report = evaluateAccuracy(grid, config, lastWeek);
    expect(report.libraryDayAhead?.mase).toBeCloseTo(1, 9);
    expect(report.libraryDayAhead?.origins).toBe(report.engineDayAhead.origins);
    expect(report.engineDayAhead.origins).toBe(7);
  });

  it("forecasts a regular office week better than seasonal-naive", () => {
    const report = evaluateAccuracy(grid, config);
    expect(report.engineOneStep.mase).toBeLessThan(1);
    expect(report.engineDayAhead.mase).toBeLessThan(1);
    expect(report.libraryDayAhead).toBeNull();
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
