import { describe, expect, it } from "vitest";
import { type AccuracyRecord, confidenceOf } from "./accuracy.ts";

const record = (ratio: number, coverage: number): AccuracyRecord => ({
  modelSquaredError: ratio * ratio,
  naiveSquaredError: 1,
  coverage,
  scored: 100,
});

describe("confidence in the forecast", () => {
  it.each([
    { name: "is 0.5 for a forecast as good as seasonal-naive", ratio: 1, coverage: 0.95, confidence: 0.5 },
    { name: "rises as the forecast beats seasonal-naive", ratio: 0.5, coverage: 0.95, confidence: 0.75 },
    { name: "is not lowered by coverage at its target", ratio: 0.5, coverage: 0.9, confidence: 0.75 },
    { name: "falls as the intervals miss more often", ratio: 0.5, coverage: 0.7, confidence: 0.375 },
    { name: "is zero when the intervals miss half the time", ratio: 0.5, coverage: 0.5, confidence: 0 },
    {
      name: "is zero for a forecast twice as bad as seasonal-naive",
      ratio: 2,
      coverage: 0.95,
      confidence: 0,
    },
  ])("$name", ({ ratio, coverage, confidence }) => {
    expect(confidenceOf(record(ratio, coverage))).toBeCloseTo(confidence, 2);
  });

  it("is zero for a damaged record rather than NaN, which no threshold would catch", () => {
    expect(confidenceOf({ ...record(0.5, 0.95), modelSquaredError: Number.NaN })).toBe(0);
  });

  it("is zero before anything was scored", () => {
    expect(confidenceOf({ ...record(0.5, 1), scored: 0 })).toBe(0);
  });
});
