import { describe, expect, it } from "vitest";
import { forecastConfig, MAX_HISTORY_DAYS } from "./config.ts";

describe("forecastConfig", () => {
  it.each([0, 1, 1.5, MAX_HISTORY_DAYS + 1, 40, Number.NaN])("refuses to keep %s days of history", (days) => {
    expect(() => forecastConfig({ historyDays: days })).toThrow(/historyDays must be a whole number of days/);
  });

  it("keeps up to 14 days, and the weekly season within them", () => {
    expect(forecastConfig({ historyDays: MAX_HISTORY_DAYS }).historyDays).toBe(14);
    expect(forecastConfig({ historyDays: 7 }).weeklyAfterDays).toBe(7);
  });

  it("keeps at least the half of learningDays an engine must observe before it forecasts", () => {
    expect(forecastConfig({ historyDays: 2 }).historyDays).toBe(2);
    expect(() => forecastConfig({ historyDays: 2, learningDays: 5 })).toThrow(
      /from 3 \(half of learningDays/,
    );
  });

  it.each([
    [0, 0.9],
    [0.1, 1],
    [0.6, 0.4],
    [Number.NaN, 0.9],
  ])(
    "refuses awake-budget bounds [%s, %s], from which a steered threshold could not come back",
    (low, high) => {
      expect(() => forecastConfig({ activityProbabilityBounds: [low, high] })).toThrow(
        /activityProbabilityBounds must be two chances strictly between 0 and 1/,
      );
    },
  );
});
