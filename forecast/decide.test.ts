import { describe, expect, it } from "vitest";
import { forecastConfig } from "./config.ts";
import { clockAdvice, decide, quietJudgedUntil, trustedIdleWindow } from "./decide.ts";
import { confidence, createEngine, type ForecastEngine, observeAll } from "./engine.ts";
import { forecastMean, forecastProbability, forecastSlots, patternMean } from "./forecast.ts";
import { DAY_SLOTS, type GridPoint, slotStartMs } from "./grid.ts";
import { officeSeries } from "./testing.ts";

const config = forecastConfig();
const MINUTE = 60_000;
const trained = observeAll(createEngine(config), officeSeries(21, 11), config).engine;
/** Day 21 is a Monday: office hours start at slot 32 (08:00). */
const mondaySlot = (daySlot: number) => (trained.nextSlot ?? 0) + daySlot;

describe("the confidence a decision names", () => {
  it("is rounded down, so a forecast kept in shadow just under the bar to trust it does not show the bar", () => {
    // A record a hair worse than seasonal-naive's, intervals holding: confidence just under activateAt.
    const floor = 0.0025;
    const engine: ForecastEngine = {
      ...trained,
      phase: "shadow",
      accuracy: {
        modelSquaredError: 1.0008 ** 2 - floor,
        naiveSquaredError: 1 - floor,
        coverage: 0.95,
        scored: 500,
      },
    };
    expect(confidence(engine)).toBeLessThan(config.activateAt);
    expect(confidence(engine)).toBeGreaterThan(config.activateAt - 0.005);
    const decision = decide(engine, { nowMs: slotStartMs(mondaySlot(0)), idleWindowMs: 30 * MINUTE }, config);
    expect(decision.actionableReason.message).toBe("forecast recorded, not acted on (confidence 0.49)");
  });
});

describe("forecast decisions", () => {
  it("forecasts the working day with intervals that widen with the horizon", () => {
    const points = forecastSlots(trained, trained.nextSlot ?? 0, DAY_SLOTS, config);
    expect(points[40]?.mean).toBeGreaterThan(5);
    expect(points[8]?.mean).toBeLessThan(1);
    const width = (i: number) => (points[i]?.upper ?? 0) - (points[i]?.lower ?? 0);
    expect(width(80)).toBeGreaterThanOrEqual(width(0));
  });

  it("forecasts from the slot asked for, one already learned too, as the point forecast reads it", () => {
    const from = (trained.nextSlot ?? 0) - 4;
    const points = forecastSlots(trained, from, 3, config);
    expect(points.map((p) => p.slot)).toEqual([from, from + 1, from + 2]);
    expect(points[0]?.mean).toBeCloseTo(forecastMean(trained, from, config) ?? Number.NaN, 9);
  });

  const lead = config.prewakeLeadMs / MINUTE;
  it.each([
    {
      name: "pre-wakes the lead time before forecast activity",
      at: 3 * 60,
      prewake: 8 * 60 - lead,
      veto: false,
    },
    {
      name: "vetoes a pause when activity is forecast within the idle window",
      at: 7 * 60 + 50,
      prewake: 8 * 60 - lead,
      veto: true,
    },
    {
      name: "vetoes a pause during forecast working hours",
      at: 11 * 60,
      prewake: 11 * 60 - lead,
      veto: true,
    },
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

  it.each([
    { name: "in the night, shortens the trusted window to two thirds", at: 3 * 60, window: 10, rule: config },
    { name: "the quarter hour before office hours, keeps it", at: 7 * 60 + 45, window: 15, rule: config },
    { name: "in office hours, keeps it", at: 11 * 60, window: 15, rule: config },
    {
      name: "with the rule off (quietProbability 0), keeps it",
      at: 3 * 60,
      window: 15,
      rule: { ...config, quietProbability: 0 },
    },
  ])("where the forecast expects no activity in this slot and the next: $name", ({ at, window, rule }) => {
    const nowMs = slotStartMs(mondaySlot(0)) + at * MINUTE;
    expect(trustedIdleWindow(trained, nowMs, 15 * MINUTE, rule)).toBe(window * MINUTE);
  });

  it.each([
    { name: "the lead as planned, made on time", at: 7 * 60 + 50, says: /; woken 10m before it$/ },
    {
      name: "the lead that was left, made late",
      at: 7 * 60 + 53,
      says: /; woken 7m before it, late for the 10m lead$/,
    },
    {
      name: "under a minute left, made half a minute before the activity",
      at: 7 * 60 + 59.5,
      says: /; woken under a minute before it, late for the 10m lead$/,
    },
    {
      name: "that the lead was missed, made after the activity began",
      at: 8 * 60 + 3,
      says: /; woken late, after it began \(the 10m lead was missed\)$/,
    },
  ])("says how a pre-wake stands to its activity: $name", ({ at, says }) => {
    const tenMinutes = forecastConfig({ prewakeLeadMs: 10 * MINUTE });
    const nowMs = slotStartMs(mondaySlot(0)) + at * MINUTE;
    const decision = decide(trained, { nowMs, idleWindowMs: 15 * MINUTE }, tenMinutes);
    expect(decision.prewakeReason.message).toMatch(says);
  });

  it("gives the same decision at every look within a slot where activity is forecast", () => {
    const slotStart = slotStartMs(mondaySlot(0)) + 11 * 60 * MINUTE;
    const at = (offset: number) =>
      decide(trained, { nowMs: slotStart + offset, idleWindowMs: 15 * MINUTE }, config);
    const [first, later] = [at(10_000), at(9 * MINUTE)];
    expect(first.nextActivityAtMs).toBe(slotStart);
    expect(later).toEqual(first);
  });

  it("looks a day beyond a pre-wake lead near 24 h (set before the 2h cap), so the Monday pre-wake is known on Sunday", () => {
    const longLead = forecastConfig({ prewakeLeadMs: 23 * 60 * MINUTE + 50 * MINUTE });
    // Trained to Saturday's end: the next slot is Sunday 00:00, and activity comes again Monday 08:00.
    const weekend = observeAll(createEngine(longLead), officeSeries(20, 11), longLead).engine;
    const sunday = weekend.nextSlot ?? 0;
    const mondayAt8 = slotStartMs(sunday + DAY_SLOTS + 32);
    const nowMs = slotStartMs(sunday) + 8 * 60 * MINUTE + 5 * MINUTE;
    const decision = decide(weekend, { nowMs, idleWindowMs: MINUTE }, longLead);
    expect(decision.nextActivityAtMs).toBe(mondayAt8);
    expect(decision.prewakeAtMs).toBe(mondayAt8 - longLead.prewakeLeadMs);
    expect(decision.prewakeAtMs).toBeGreaterThan(nowMs);
  });

  it.each([
    {
      name: "names the current quarter hour as such, not by its start in the past",
      at: 11 * 60 + 7,
      veto: /^activity forecast in the current quarter hour \(\d+% chance in the 15 min from \S+T11:00:00\.000Z\), within/,
    },
    {
      name: "names a later quarter hour by its start",
      at: 7 * 60 + 50,
      veto: /^activity forecast from \S+T08:00:00\.000Z \(\d+% chance in 15 min\), within/,
    },
  ])("a veto's message $name", ({ at, veto }) => {
    const nowMs = slotStartMs(mondaySlot(0)) + at * MINUTE;
    const decision = decide(trained, { nowMs, idleWindowMs: 15 * MINUTE }, config);
    expect(decision.vetoReason.message).toMatch(veto);
  });

  it.each([
    { name: "vetoes a pause the pre-wake would undo within the idle window", idle: 5, lead: 10, veto: true },
    {
      name: "lets a pause go ahead when the pre-wake comes after the idle window",
      idle: 5,
      lead: 2,
      veto: false,
    },
  ])("$name", ({ idle, lead: leadMinutes, veto }) => {
    // Activity is forecast from 08:00; it is 07:48.
    const nowMs = slotStartMs(mondaySlot(0)) + (7 * 60 + 48) * MINUTE;
    const withLead = { ...config, prewakeLeadMs: leadMinutes * MINUTE };
    const decision = decide(trained, { nowMs, idleWindowMs: idle * MINUTE }, withLead);
    expect(decision.vetoPause).toBe(veto);
    expect(decision.prewakeAtMs).toBe(slotStartMs(mondaySlot(0)) + (8 * 60 - leadMinutes) * MINUTE);
  });

  it("pre-wakes a paused workload for the first slot after what its pause was judged on, never one before", () => {
    // At 08:10 on Monday, activity is forecast in the current quarter hour: a pause judged quiet until 09:00
    // (its idle window and lead) is pre-woken for 09:00, a lead before it, not at once for 08:00.
    const nowMs = slotStartMs(mondaySlot(32)) + 10 * MINUTE;
    const at = decide(trained, { nowMs, idleWindowMs: 30 * MINUTE }, config);
    expect(at.nextActivityAtMs).toBe(slotStartMs(mondaySlot(32)));
    const searchFromMs = slotStartMs(mondaySlot(36));
    const paused = decide(trained, { nowMs, idleWindowMs: 30 * MINUTE, searchFromMs }, config);
    expect(paused.nextActivityAtMs).toBe(searchFromMs);
    expect(paused.prewakeAtMs).toBe(searchFromMs - config.prewakeLeadMs);
    // A judgement that ended mid-slot covered that slot: the search starts after it.
    const midSlot = decide(
      trained,
      { nowMs, idleWindowMs: 30 * MINUTE, searchFromMs: searchFromMs + MINUTE },
      config,
    );
    expect(midSlot.nextActivityAtMs).toBe(slotStartMs(mondaySlot(37)));
  });

  it.each([
    {
      name: "the idle window and the lead from now when the advice lets the pause be",
      veto: false,
      until: 40,
    },
    { name: "nothing when the advice vetoes the pause", veto: true, until: null },
  ])("judges a pause quiet until $name", ({ veto, until }) => {
    const input = { nowMs: 0, idleWindowMs: 30 * MINUTE };
    const expected = until === null ? null : until * MINUTE;
    expect(quietJudgedUntil({ vetoPause: veto }, input, { ...config, prewakeLeadMs: 10 * MINUTE })).toBe(
      expected,
    );
    expect(quietJudgedUntil(null, input, config)).toBeNull();
  });

  it("does not veto when the forecast is quiet for the whole idle window", () => {
    const nowMs = slotStartMs(mondaySlot(0)) + 19 * 60 * MINUTE; // evening: the office has gone home
    const decision = decide(trained, { nowMs, idleWindowMs: 15 * MINUTE }, config);
    expect(decision.vetoPause).toBe(false);
  });

  it("leaves activity just seen to the idle window: a burst in a quiet evening does not veto the pause", () => {
    const slot = mondaySlot(19 * 4);
    const nowMs = slotStartMs(slot);
    const model = trained.model as NonNullable<ForecastEngine["model"]>;
    const params = trained.params as NonNullable<ForecastEngine["params"]>;
    // Learned up to 19:00, the last slot far above its forecast: the one-step correction lifts the next.
    const quiet: ForecastEngine = { ...trained, nextSlot: slot, model: { ...model, nextSlot: slot } };
    const afterBurst: ForecastEngine = {
      ...quiet,
      params: { ...params, phi: 0.5 },
      model: { ...model, nextSlot: slot, lastError: 20 },
    };
    const lifted = forecastProbability(afterBurst, slot, config) ?? 0;
    expect(lifted).toBeGreaterThanOrEqual(config.activityProbability);
    expect(patternMean(afterBurst, slot, config)).toBe(patternMean(quiet, slot, config));
    const decision = decide(afterBurst, { nowMs, idleWindowMs: 15 * MINUTE }, config);
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

  describe("when forecast activity does not come", () => {
    /** `source` after learning Monday up to minute `upTo`, with activity in [activeFrom, activeUntil). */
    function learnedUntil(
      source: ForecastEngine,
      upTo: number,
      activeFrom = Number.POSITIVE_INFINITY,
      activeUntil = Number.POSITIVE_INFINITY,
    ): ForecastEngine {
      const start = source.nextSlot ?? 0;
      const points: GridPoint[] = Array.from({ length: upTo / 15 }, (_, i) => ({
        slot: start + i,
        value: i * 15 >= activeFrom && i * 15 < activeUntil ? 1 : 0,
      }));
      return observeAll(source, points, config).engine;
    }
    const at = (minutes: number) => slotStartMs(mondaySlot(0)) + minutes * MINUTE;
    const occupancy = observeAll(
      createEngine(config),
      officeSeries(21, 11).map((p) => ({ ...p, value: Math.min(1, p.value ?? 0) })),
      config,
    ).engine;

    it.each([
      { name: "keeps advising after two silent working slots", learned: 8 * 60 + 30, suspended: false },
      { name: "suspends advice after three silent working slots", learned: 8 * 60 + 45, suspended: true },
      {
        name: "resumes once activity comes back",
        learned: 9 * 60 + 15,
        activeFrom: 9 * 60,
        suspended: false,
      },
      {
        name: "starts afresh after a quiet night (a holiday does not silence the next day)",
        learned: DAY_SLOTS * 15 + 7 * 60 + 45,
        suspended: false,
      },
    ])("$name", ({ learned, activeFrom, suspended }) => {
      const engine = learnedUntil(trained, learned, activeFrom);
      const decision = decide(engine, { nowMs: at(learned) + MINUTE, idleWindowMs: 15 * MINUTE }, config);
      expect(decision.vetoReason.code === "forecast-missed").toBe(suspended);
      expect(decision.prewakeAtMs === null).toBe(suspended);
    });

    it("starts the next day afresh after a quiet night nobody watched (the operator down)", () => {
      const suspended = learnedUntil(trained, 8 * 60 + 45);
      expect(
        decide(suspended, { nowMs: at(8 * 60 + 45) + MINUTE, idleWindowMs: 15 * MINUTE }, config).prewakeAtMs,
      ).toBeNull();
      // Down from 08:45 until Tuesday 07:30: every slot in between is a gap.
      const tuesday = (minutes: number) => DAY_SLOTS * 15 + minutes;
      const gaps = Array.from({ length: (tuesday(7 * 60 + 30) - (8 * 60 + 45)) / 15 }, (_, i) => ({
        slot: (suspended.nextSlot ?? 0) + i,
        value: null,
      }));
      const restarted = observeAll(suspended, gaps, config).engine;
      const decision = decide(
        restarted,
        { nowMs: at(tuesday(7 * 60 + 30)) + MINUTE, idleWindowMs: 15 * MINUTE },
        config,
      );
      expect(decision.prewakeAtMs).toBe(at(tuesday(8 * 60)) - config.prewakeLeadMs);
    });

    it("suspends advice on a holiday of a sharp daily pattern, the last slot's miss notwithstanding", () => {
      // Activity 10:00-12:00 every day for three weeks, learned as occupancy; then a day without any.
      const sharp = observeAll(
        createEngine(config),
        Array.from({ length: 21 * DAY_SLOTS }, (_, i) => {
          const daySlot = i % DAY_SLOTS;
          return { slot: mondaySlot(0) - 21 * DAY_SLOTS + i, value: daySlot >= 40 && daySlot < 48 ? 1 : 0 };
        }),
        config,
      ).engine;
      const holiday = learnedUntil(sharp, 11 * 60);
      const decision = decide(holiday, { nowMs: at(11 * 60) + MINUTE, idleWindowMs: 15 * MINUTE }, config);
      expect(decision.vetoReason.code).toBe("forecast-missed");
      expect(decision.prewakeAtMs).toBeNull();
    });

    it("never lets one silent slot suspend advice, however sure the forecast was", () => {
      const wary = forecastConfig({ missedLikelihood: 0.05 });
      expect(forecastSlots(occupancy, mondaySlot(40), 1, wary)[0]?.probability).toBeGreaterThan(0.95);
      const engine = learnedUntil(occupancy, 10 * 60 + 15, 8 * 60, 10 * 60);
      expect(engine.silence.slots).toBe(1);
      const decision = decide(engine, { nowMs: at(10 * 60 + 16), idleWindowMs: 15 * MINUTE }, wary);
      expect(decision.vetoPause).toBe(true);
    });
  });
});
