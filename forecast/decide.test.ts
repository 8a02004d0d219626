import { describe, expect, it } from "vitest";
import { forecastConfig } from "./config.ts";
import { clockAdvice, decide } from "./decide.ts";
import { createEngine, type ForecastEngine, observeAll } from "./engine.ts";
import { forecastSlots } from "./forecast.ts";
import { DAY_SLOTS, slotStartMs } from "./grid.ts";
import { officeSeries } from "./testing.ts";

const config = forecastConfig();
const MINUTE = 60_000;
const trained = observeAll(createEngine(config), officeSeries(21, 11), config).engine;
/** Day 21 is a Monday: office hours start at slot 32 (08:00). */
const mondaySlot = (daySlot: number) => (trained.nextSlot ?? 0) + daySlot;

describe("forecast decisions", () => {
  it("forecasts the working day with intervals that widen with the horizon", () => {
    const points = forecastSlots(trained, trained.nextSlot ?? 0, DAY_SLOTS, config);
    expect(points[40]?.mean).toBeGreaterThan(5);
    expect(points[8]?.mean).toBeLessThan(1);
    const width = (i: number) => (points[i]?.upper ?? 0) - (points[i]?.lower ?? 0);
    expect(width(80)).toBeGreaterThanOrEqual(width(0));
  });

  it.each([
    { name: "pre-wakes 10 minutes before forecast activity", at: 3 * 60, prewake: 8 * 60 - 10, veto: false },
    {
      name: "vetoes a pause when activity is forecast within the idle window",
      at: 7 * 60 + 50,
      prewake: 8 * 60 - 10,
      veto: true,
    },
    { name: "vetoes a pause during forecast working hours", at: 11 * 60, prewake: 11 * 60 - 10, veto: true },
  ])("$name", ({ at, prewake, veto }) => {
    const nowMs = slotStartMs(mondaySlot(0)) + at * MINUTE;
    const decision = decide(trained, { nowMs, idleWindowMs: 15 * MINUTE }, config);
    expect(decision.actionable).toBe(true);
    expect(decision.vetoPause).toBe(veto);
    expect(decision.prewakeAtMs).toBe(slotStartMs(mondaySlot(0)) + prewake * MINUTE);
    expect(decision.vetoReason.code).toBe(
      veto ? "activity-forecast-in-idle-window" : "quiet-forecast-in-idle-window",
    );
  });

  it("does not veto when the forecast is quiet for the whole idle window", () => {
    const nowMs = slotStartMs(mondaySlot(0)) + 19 * 60 * MINUTE; // evening: the office has gone home
    const decision = decide(trained, { nowMs, idleWindowMs: 15 * MINUTE }, config);
    expect(decision.vetoPause).toBe(false);
  });

  it.each<{ phase: ForecastEngine["phase"]; code: string }>([
    { phase: "learning", code: "learning" },
    { phase: "shadow", code: "shadow" },
  ])("records but does not act on a decision while $phase", ({ phase, code }) => {
    const engine: ForecastEngine = { ...trained, phase };
    const nowMs = slotStartMs(mondaySlot(0)) + 7 * 60 * MINUTE + 55 * MINUTE;
    const decision = decide(engine, { nowMs, idleWindowMs: 15 * MINUTE }, config);
    expect(decision.actionable).toBe(false);
    expect(decision.actionableReason.code).toBe(code);
    expect(clockAdvice(decision)).toBeNull();
  });

  it("suspends pre-wake and veto after forecast activity failed to come", () => {
    const strict = forecastConfig({ suspendAfterMissedSlots: 2 });
    const nowMs = slotStartMs(mondaySlot(0)) + 11 * 60 * MINUTE;
    const decision = decide({ ...trained, missedRun: 2 }, { nowMs, idleWindowMs: 15 * MINUTE }, strict);
    expect(decision).toMatchObject({ vetoPause: false, prewakeAtMs: null });
    expect(decision.vetoReason.code).toBe("forecast-missed");
  });

  it("has nothing to say without a model", () => {
    const decision = decide(createEngine(config), { nowMs: 0, idleWindowMs: 15 * MINUTE }, config);
    expect(decision).toMatchObject({ vetoPause: false, prewakeAtMs: null, actionable: false });
    expect(decision.prewakeReason.code).toBe("no-forecast");
  });
});
