import { describe, expect, it } from "vitest";
import { DAY_SLOTS, SLOT_MS, slotOf } from "../../forecast/index.ts";
import { SYNTHETIC_PROFILES, type TraceProfile } from "../traces/synthetic.ts";
import type { Trace } from "../traces/trace.ts";
import { generatorChances, timeOfDayChances } from "./chances.ts";

const HOUR = 3_600_000;
const START = Date.UTC(2024, 0, 1);

describe("true chances of activity", () => {
  it("measures each time of day as the share of days with any request then", () => {
    const trace: Trace = {
      name: "",
      description: "",
      startMs: START,
      endMs: START + 4 * 24 * HOUR,
      // 10:00 on two of four days (twice on the first), 23:00 on one.
      requestsMs: [10, 10.1, 34, 71].map((h) => START + h * HOUR),
      telemetryGaps: [],
    };
    const chanceOf = timeOfDayChances(trace);
    const tenOClock = slotOf(START + 10 * HOUR);
    expect(chanceOf(tenOClock)).toBeCloseTo(0.5, 9);
    expect(chanceOf(tenOClock + 3 * DAY_SLOTS)).toBeCloseTo(0.5, 9);
    expect(chanceOf(slotOf(START + 23 * HOUR))).toBeCloseTo(0.25, 9);
    expect(chanceOf(slotOf(START + 3 * HOUR))).toBe(0);
  });

  it("knows a generator's daily job for certain and its quiet nights as quiet", () => {
    const office = SYNTHETIC_PROFILES[0] as TraceProfile;
    const week: TraceProfile = { ...office, days: 7, burstsPerWeek: 0 };
    const chanceOf = generatorChances(week, 20);
    const monday = slotOf(week.startMs);
    expect(chanceOf(monday + (2 * HOUR) / SLOT_MS)).toBe(1);
    expect(chanceOf(monday + (3.5 * HOUR) / SLOT_MS)).toBe(0);
    expect(chanceOf(monday + (11 * HOUR) / SLOT_MS)).toBeGreaterThan(0.5);
  });
});
