import { describe, expect, it } from "vitest";
import { forecastConfig } from "../../forecast/index.ts";
import { SYNTHETIC_PROFILES, type TraceProfile } from "../traces/synthetic.ts";
import { meetsTarget, replayDraws } from "./draws.ts";
import type { Policy, PolicyResult } from "./replay.ts";

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

describe("the target", () => {
  const result = (coldStarts: number, awakeHours: number): PolicyResult => ({
    policy: "",
    requests: 100,
    coldStarts,
    coldWakes: coldStarts,
    coldStartsByWeek: [coldStarts],
    awakeHours,
    pauses: 0,
    prewakes: 0,
    vetoedChecks: 0,
  });
  const baseline = result(40, 100);
  it.each([
    { name: "is met at half the cold starts and the same awake hours", cold: 20, awake: 100, met: true },
    { name: "is met at fewer cold starts still and fewer awake hours", cold: 5, awake: 90, met: true },
    { name: "is missed just short of half the cold starts", cold: 21, awake: 100, met: false },
    { name: "is missed at any more awake hours", cold: 0, awake: 100.01, met: false },
  ])("$name", ({ cold, awake, met }) => {
    expect(meetsTarget(result(cold, awake), baseline)).toBe(met);
  });

  it("is missed against a baseline without cold starts", () => {
    expect(meetsTarget(result(0, 50), result(0, 100))).toBe(false);
  });
});
