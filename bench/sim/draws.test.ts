import { describe, expect, it } from "vitest";
import { forecastConfig } from "../../forecast/index.ts";
import { SYNTHETIC_PROFILES, type TraceProfile } from "../traces/synthetic.ts";
import { replayDraws } from "./draws.ts";
import type { Policy } from "./replay.ts";

const MIN = 60_000;
const short: TraceProfile = { ...(SYNTHETIC_PROFILES[0] as TraceProfile), days: 7, changeAtDay: 7 };
const timeout: Policy = { name: "timeout", idleWindowMs: 30 * MIN, useForecast: false };
const config = forecastConfig();

describe("policies over several draws", () => {
  it("finds no change when the baseline is compared with itself", () => {
    const [same] = replayDraws(short, 3, timeout, [timeout], config);
    expect(same).toMatchObject({ draws: 3, coldStartChange: 0, awakeChange: 0, coldStartRange: [0, 0] });
    expect(same?.drawsMeetingTarget).toBe(0);
  });

  it("counts a draw as meeting the target only at no more awake hours", () => {
    const neverPaused: Policy = {
      name: "never paused",
      idleWindowMs: 30 * 24 * 60 * MIN,
      useForecast: false,
    };
    const [awake] = replayDraws(short, 2, timeout, [neverPaused], config);
    expect(awake?.coldStartChange).toBe(-1);
    expect(awake?.awakeChange).toBeGreaterThan(0);
    expect(awake?.drawsMeetingTarget).toBe(0);
  });

  it("differs from draw to draw", () => {
    const quick: Policy = { name: "quick", idleWindowMs: 5 * MIN, useForecast: false };
    const [summary] = replayDraws(short, 3, timeout, [quick], config);
    const [low, high] = summary?.coldStartRange ?? [0, 0];
    expect(low).toBeLessThan(high);
    expect(summary?.awakeChange).toBeLessThan(0);
  });
});
