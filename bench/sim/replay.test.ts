import { describe, expect, it } from "vitest";
import { forecastConfig } from "../../forecast/index.ts";
import type { Trace } from "../traces/trace.ts";
import { replayPolicy } from "./replay.ts";

const MIN = 60_000;
const START = Date.UTC(2024, 0, 1);
/** One request every two hours for a day. */
const trace: Trace = {
  name: "every-two-hours",
  description: "",
  startMs: START,
  endMs: START + 24 * 60 * MIN,
  requestsMs: Array.from({ length: 12 }, (_, i) => START + (i * 120 + 60) * MIN),
  telemetryGaps: [],
};

describe("replay", () => {
  it.each([{ idle: 30 }, { idle: 15 }])(
    "pauses after each isolated request with a $idle min idle window",
    ({ idle }) => {
      const result = replayPolicy(
        trace,
        { name: "clock", idleWindowMs: idle * MIN, useForecast: false },
        forecastConfig(),
      );
      expect(result.coldStarts).toBe(12);
      expect(result.pauses).toBe(13);
      // Awake: the start until the first pause, then each request plus the idle window (rounded to the tick).
      expect(result.awakeHours).toBeCloseTo(((idle + 1) * 13) / 60, 0);
    },
  );

  it("behaves like the plain clock while the forecast is still learning", () => {
    const plain = replayPolicy(
      trace,
      { name: "plain", idleWindowMs: 15 * MIN, useForecast: false },
      forecastConfig(),
    );
    const withForecast = replayPolicy(
      trace,
      { name: "fc", idleWindowMs: 15 * MIN, useForecast: true },
      forecastConfig(),
    );
    expect({ ...withForecast, policy: "" }).toEqual({ ...plain, policy: "" });
  });
});
