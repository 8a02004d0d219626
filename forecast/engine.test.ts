import { describe, expect, it } from "vitest";
import { decodeEngine, encodeEngine } from "./codec.ts";
import { forecastConfig } from "./config.ts";
import {
  confidence,
  confidenceMessage,
  createEngine,
  type EngineEvent,
  type ForecastEngine,
  observe,
  observeAll,
  type PhaseChangeEvent,
} from "./engine.ts";
import { patternMean } from "./forecast.ts";
import { DAY_SLOTS, type GridPoint } from "./grid.ts";
import { OCCUPANCY } from "./probability.ts";
import { MONDAY_SLOT, officeSeries } from "./testing.ts";

const config = forecastConfig();

function phaseChanges(events: EngineEvent[]): PhaseChangeEvent[] {
  return events.filter((e): e is PhaseChangeEvent => e.kind === "phase-change");
}

function dayOf(event: { atMs: number }): number {
  return (event.atMs / (15 * 60 * 1000) - MONDAY_SLOT) / DAY_SLOTS;
}

function run(points: GridPoint[], engine: ForecastEngine = createEngine(config)) {
  return observeAll(engine, points, config);
}

/** 21 days of office activity: enough for every step up the phase ladder. */
const regular = run(officeSeries(21, 11));

describe("forecast engine phases", () => {
  it("stays learning with a short history and says why", () => {
    const { engine, events } = run(officeSeries(2, 1));
    expect(engine.phase).toBe("learning");
    expect(engine.phaseReason.code).toBe("insufficient-history");
    expect(phaseChanges(events)).toEqual([]);
  });

  it.each([
    { from: "learning", to: "shadow", code: "history-sufficient", earliestDay: 3, latestDay: 3 },
    { from: "shadow", to: "active-daily", code: "confidence-high", earliestDay: 4, latestDay: 13 },
    {
      from: "active-daily",
      to: "active-weekly",
      code: "weekly-season-ready",
      earliestDay: 14,
      latestDay: 14,
    },
  ])("moves $from -> $to for reason $code", ({ from, to, code, earliestDay, latestDay }) => {
    const change = phaseChanges(regular.events).find((e) => e.from === from && e.to === to);
    expect(change?.reason.code).toBe(code);
    expect(change?.reason.message.length).toBeGreaterThan(10);
    expect(dayOf(change ?? { atMs: 0 })).toBeGreaterThanOrEqual(earliestDay);
    expect(dayOf(change ?? { atMs: 0 })).toBeLessThanOrEqual(latestDay);
  });

  it("drops back to shadow when the forecast stops beating seasonal-naive", () => {
    // The workload turns erratic: activity at random hours, no longer the learned office shape.
    const erratic = officeSeries(
      7,
      5,
      (day, slot) => ((day * 31 + slot * 17) % 11 < 3 ? 12 : 0),
      regular.engine.nextSlot ?? 0,
    );
    const { engine, events } = run(erratic, regular.engine);
    const drop = phaseChanges(events).find((e) => e.to === "shadow");
    expect(drop?.reason.code).toBe("confidence-low");
    expect(engine.phase).not.toBe("active-weekly");
  });

  it("never trusts a forecast of a workload never seen active: it covers no hour", () => {
    const zeros = officeSeries(6, 1, () => 0);
    const { engine, events } = run(zeros);
    expect(engine.phase).toBe("shadow");
    expect(confidence(engine)).toBe(0);
    expect(phaseChanges(events).map((e) => e.to)).toEqual(["shadow"]);
  });

  it("drops back to shadow once the history it keeps holds activity within half a day only, and says so", () => {
    const quiet = officeSeries(config.historyDays + 1, 1, () => 0, regular.engine.nextSlot ?? 0);
    const { engine, events } = run(quiet, regular.engine);
    expect(engine.phase).toBe("shadow");
    const [drop, ...more] = phaseChanges(events);
    expect(more).toEqual([]);
    expect(drop?.reason.message).toMatch(
      /all activity of the last 14 days within half a day: no pattern to forecast yet/,
    );
    // When the last occasion but one leaves the history: the last working day's activity is still in it.
    const earlier = regular.engine.earlierActiveSlot ?? Number.NaN;
    const dropSlot = (drop?.atMs ?? 0) / (15 * 60 * 1000);
    expect(dropSlot - (earlier + config.historyDays * DAY_SLOTS)).toBeGreaterThanOrEqual(0);
    expect(dropSlot - (earlier + config.historyDays * DAY_SLOTS)).toBeLessThanOrEqual(2);
    expect(dropSlot).toBeLessThan((regular.engine.lastActiveSlot ?? 0) + config.historyDays * DAY_SLOTS);
  });

  it.each([
    { idleDays: 4, at: "10:00", daySlots: [40] },
    { idleDays: 10, at: "10:00 to 11:00", daySlots: [40, 41, 42, 43] },
    { idleDays: 20, at: "23:45 to 00:15, across midnight UTC", daySlots: [95, 96, 97] },
    { idleDays: 4, at: "10:00 and 21:45, less than half a day apart", daySlots: [40, 87] },
  ])(
    "does not trust one burst after $idleDays idle days, at $at: it is not a pattern",
    ({ idleDays, daySlots }) => {
      const before = run(officeSeries(idleDays, 1, () => 0)).engine;
      const start = before.nextSlot ?? 0;
      const last = Math.max(...daySlots);
      const burst = Array.from({ length: last + 1 }, (_, i) => ({
        slot: start + i,
        value: daySlots.includes(i) ? 1 : 0,
      }));
      const { engine } = run(burst, before);
      expect(engine.phase).toBe("shadow");
      expect(confidence(engine)).toBe(0);
    },
  );

  it("counts activity half a day apart as two occasions, and reads them back from a saved state", () => {
    const before = run(officeSeries(4, 1, () => 0)).engine;
    const start = before.nextSlot ?? 0;
    const points = Array.from({ length: 89 }, (_, i) => ({
      slot: start + i,
      value: i === 40 || i === 88 ? 1 : 0,
    }));
    const { engine } = run(points, before);
    expect(engine.earlierActiveSlot).toBe(start + 40);
    const encoded = encodeEngine(engine);
    const decoded = encoded.ok ? decodeEngine(encoded.value, config) : null;
    expect(decoded?.ok && decoded.value.earlierActiveSlot).toBe(start + 40);
  });

  it("refits at once a model restored without a refit on record, instead of never", () => {
    const start = regular.engine.nextSlot ?? 0;
    const { events } = observe({ ...regular.engine, lastRefitSlot: null }, { slot: start, value: 0 }, config);
    expect(events.map((e) => e.kind)).toContain("refit");
  });

  it("waits for the next refit after one that found no data, rather than trying again at every slot", () => {
    // Gaps allowed longer than the history kept: the window a refit reads comes to hold no data at all.
    const patient = forecastConfig({ maxGapSlots: 20 * DAY_SLOTS });
    const start = regular.engine.nextSlot ?? 0;
    const gaps = Array.from({ length: 15 * DAY_SLOTS }, (_, i) => ({ slot: start + i, value: null }));
    const { engine } = observeAll(regular.engine, gaps, patient);
    expect(engine.model).not.toBeNull();
    expect((engine.nextSlot ?? 0) - (engine.lastRefitSlot ?? 0)).toBeLessThanOrEqual(patient.refitEverySlots);
  });

  it("restarts learning after a gap longer than the limit", () => {
    const farSlot = (regular.engine.nextSlot ?? 0) + config.maxGapSlots + 10;
    const { engine, events } = observe(regular.engine, { slot: farSlot, value: 3 }, config);
    expect(engine.phase).toBe("learning");
    expect(phaseChanges(events)[0]?.reason.code).toBe("long-gap-reset");
  });

  it("restarts learning once more than the limit has passed in points without a value", () => {
    const start = regular.engine.nextSlot ?? 0;
    const gaps = Array.from({ length: config.maxGapSlots + 1 }, (_, i) => ({ slot: start + i, value: null }));
    const { engine, events } = run(gaps, regular.engine);
    expect(engine.phase).toBe("learning");
    expect(engine.nextSlot).toBeNull();
    expect(phaseChanges(events).map((e) => e.reason.code)).toEqual(["long-gap-reset"]);
    const resumed = observe(engine, { slot: start + config.maxGapSlots + 1, value: 2 }, config).engine;
    expect(resumed.firstSlot).toBe(start + config.maxGapSlots + 1);
  });

  it("keeps what it learned through gaps up to the limit, given as points or skipped", () => {
    const start = regular.engine.nextSlot ?? 0;
    const gaps = Array.from({ length: config.maxGapSlots }, (_, i) => ({ slot: start + i, value: null }));
    const asPoints = run([...gaps, { slot: start + config.maxGapSlots, value: 0 }], regular.engine).engine;
    const skipped = observe(regular.engine, { slot: start + config.maxGapSlots, value: 0 }, config).engine;
    for (const engine of [asPoints, skipped]) {
      expect(engine.phase).toBe(regular.engine.phase);
      expect(engine.firstSlot).toBe(regular.engine.firstSlot);
    }
  });

  it("starts learning at the first slot with a value: gaps before it are no history", () => {
    const office = officeSeries(2, 1);
    const first = office[0]?.slot ?? 0;
    const leading = Array.from({ length: 12 * DAY_SLOTS }, (_, i) => ({
      slot: first - 12 * DAY_SLOTS + i,
      value: null,
    }));
    const { engine } = run([...leading, ...office]);
    expect(engine.firstSlot).toBe(first);
    expect(engine.phase).toBe("learning");
    expect(engine.phaseReason.code).toBe("insufficient-history");
  });

  it("treats skipped slots as gaps and ignores late samples", () => {
    const start = regular.engine.nextSlot ?? 0;
    const skipped = observe(regular.engine, { slot: start + 3, value: 0 }, config).engine;
    expect(skipped.nextSlot).toBe(start + 4);
    const late = observe(skipped, { slot: start + 1, value: 50 }, config);
    expect(late.engine).toBe(skipped);
    expect(late.events).toEqual([]);
  });
});

describe("the confidence a phase change gives as its reason", () => {
  it.each([
    { score: 0.449, comparison: "<", threshold: 0.45, shown: "confidence 0.44 < 0.45" },
    { score: 0.57, comparison: ">=", threshold: 0.57, shown: "confidence 0.57 >= 0.57" },
    { score: 0.5, comparison: ">=", threshold: 0.5, shown: "confidence 0.50 >= 0.5" },
  ])(
    "shows $score as a figure that keeps to its comparison with $threshold",
    ({ score, comparison, threshold, shown }) => {
      expect(confidenceMessage(score, comparison, threshold)).toMatch(new RegExp(`^${shown}`));
    },
  );
});

describe("values no activity can have", () => {
  it.each([Number.NaN, Number.POSITIVE_INFINITY, -1])(
    "do not start a new engine: %s is no history",
    (value) => {
      const { engine } = observe(createEngine(config), { slot: MONDAY_SLOT, value }, config);
      expect(engine.nextSlot).toBeNull();
    },
  );

  it.each([Number.POSITIVE_INFINITY, Number.NaN, -1])("learns %s as a gap, not a number", (value) => {
    const slot = regular.engine.nextSlot ?? 0;
    const { engine } = observe(regular.engine, { slot, value }, config);
    expect(Number.isFinite(engine.model?.level)).toBe(true);
    expect(engine.accuracy).toEqual(regular.engine.accuracy);
    expect(confidence(engine)).toBe(confidence(regular.engine));
    expect(encodeEngine(engine).ok).toBe(true);
  });
});

describe("anomalies", () => {
  it("flags a burst far outside the interval and learns a clipped value", () => {
    const quietSlot = (regular.engine.nextSlot ?? 0) + 4; // 01:00 on a Monday: nothing expected
    const gapFill = observeAll(
      regular.engine,
      [0, 1, 2, 3].map((i) => ({ slot: quietSlot - 4 + i, value: 0 })),
      config,
    ).engine;
    const { engine, events } = observe(gapFill, { slot: quietSlot, value: 400 }, config);
    const anomaly = events.find((e) => e.kind === "anomaly");
    expect(anomaly).toMatchObject({ kind: "anomaly", observed: 400, direction: "above" });
    const learned = anomaly?.kind === "anomaly" ? anomaly.learned : Number.NaN;
    expect(learned).toBeLessThan(20);
    expect(engine.model?.level ?? Number.NaN).toBeLessThan((gapFill.model?.level ?? 0) + 5);
  });

  it("stays trusted through one stray request on an exact schedule", () => {
    // 10:00-12:00 every day for three weeks, 0/1, then a request at 03:00 and a week more of the schedule: the
    // next slots' one-step correction for the burst is no decision's, so it does not count against the forecast.
    const stray = MONDAY_SLOT + 21 * DAY_SLOTS + 12;
    const points = Array.from({ length: 28 * DAY_SLOTS }, (_, i) => {
      const daySlot = i % DAY_SLOTS;
      return {
        slot: MONDAY_SLOT + i,
        value: MONDAY_SLOT + i === stray || (daySlot >= 40 && daySlot < 48) ? 1 : 0,
      };
    });
    const { events } = run(points);
    const after = phaseChanges(events).filter((e) => e.atMs >= stray * 15 * 60_000);
    expect(after).toEqual([]);
  });

  it("does not let a burst neither forecast foresaw swing the confidence", () => {
    const quietSlot = (regular.engine.nextSlot ?? 0) + 4; // 01:00 on a Monday, quiet for weeks
    const quiet = [0, 1, 2, 3].map((i) => ({ slot: quietSlot - 4 + i, value: 0 }));
    const before = observeAll(regular.engine, quiet, config).engine;
    const after = observe(before, { slot: quietSlot, value: 400 }, config).engine;
    expect(Math.abs(confidence(after) - confidence(before))).toBeLessThan(0.02);
  });

  describe("on a 0/1 series (activity seen in a slot or not, as the operator learns it)", () => {
    const occupancy = officeSeries(21, 11).map((p) => ({ ...p, value: Math.min(1, p.value ?? 0) }));
    const learned = observeAll(createEngine(config), occupancy, config).engine;
    const monday = learned.nextSlot ?? 0;
    it.each([
      {
        what: "flags activity where the chance of it was below 1%, and learns it as it came",
        daySlot: 12,
        value: 1,
      },
      { what: "flags no activity where activity was all but certain (a holiday)", daySlot: 40, value: 0 },
    ])("$what", ({ daySlot, value }) => {
      const quiet = Array.from({ length: daySlot }, (_, i) => ({ slot: monday + i, value: i >= 32 ? 1 : 0 }));
      const before = observeAll(learned, quiet, config).engine;
      const { events } = observe(before, { slot: monday + daySlot, value }, config);
      const anomaly = events.find((e) => e.kind === "anomaly");
      expect(anomaly).toMatchObject({
        observed: value,
        learned: value,
        direction: value ? "above" : "below",
      });
    });
    it("does not flag activity where the forecast gave it a fair chance", () => {
      const { events } = observe(learned, { slot: monday + 32, value: 1 }, config);
      expect(events.filter((e) => e.kind === "anomaly")).toEqual([]);
    });
    it("flags a count in it as a count, and learns it as activity (1), so one burst does not make every hour busy", () => {
      expect(learned.burstSize).toBe(OCCUPANCY);
      const night = monday + DAY_SLOTS + 4; // 01:00 the next night
      const { engine, events } = observe(learned, { slot: monday + 40, value: 100 }, config);
      const anomaly = events.find((e) => e.kind === "anomaly");
      expect(anomaly).toMatchObject({ observed: 100, direction: "above" });
      expect(anomaly?.kind === "anomaly" && anomaly.learned).toBe(1);
      expect(patternMean(engine, night, config) ?? Number.NaN).toBeLessThan(0.1);
    });
    it("learns counts in it as activity however long they last: an hour of 100 a slot is no new level", () => {
      const night = monday + DAY_SLOTS + 4;
      const day = Array.from({ length: 44 }, (_, i) => ({
        slot: monday + i,
        value: i >= 40 ? 100 : i >= 32 ? 1 : 0,
      }));
      const { engine, events } = observeAll(learned, day, config);
      const counts = events.filter((e) => e.kind === "anomaly" && e.observed === 100);
      expect(counts).toHaveLength(4);
      expect(counts.map((e) => (e.kind === "anomaly" ? e.learned : 0))).toEqual([1, 1, 1, 1]);
      expect(patternMean(engine, night, config) ?? Number.NaN).toBeLessThan(0.1);
    });
  });

  it("flags the first activity after a window without any as a 0/1 sample: a chance, not a count", () => {
    const idle = officeSeries(5, 1, () => 0);
    const before = run(idle).engine;
    const { events } = observe(before, { slot: (before.nextSlot ?? 0) + 12, value: 1 }, config);
    expect(events.filter((e) => e.kind === "anomaly")).toMatchObject([{ observed: 1, direction: "above" }]);
  });

  it("accepts a changed level after a run of anomalies", () => {
    const start = regular.engine.nextSlot ?? 0;
    const surge = Array.from({ length: 6 }, (_, i) => ({ slot: start + i, value: 200 }));
    const { events } = run(surge, regular.engine);
    const anomalies = events.filter((e) => e.kind === "anomaly");
    const last = anomalies[anomalies.length - 1];
    expect(last?.kind === "anomaly" && last.learned).toBe(200);
  });
});
