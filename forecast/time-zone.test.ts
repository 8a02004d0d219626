import { describe, expect, it } from "vitest";
import { decodeEngine, encodeEngine, STATE_VERSION, ZONED_STATE_VERSION } from "./codec.ts";
import { forecastConfig } from "./config.ts";
import { decide } from "./decide.ts";
import { createEngine, historyAt, inTimeZone, observe, observeAll, seasonalNaive } from "./engine.ts";
import { slotOf, WEEK_SLOTS } from "./grid.ts";
import { localOfficeSeries } from "./testing.ts";

const utc = forecastConfig();
const berlin = forecastConfig({ timeZone: "Europe/Berlin" });
const MINUTE = 60_000;

// Three weeks of office hours kept by the Berlin clock, up to 04:00 UTC on Monday 30 March 2026: the clocks went
// forward on the Sunday, so 08:00 in Berlin is now 06:00 UTC, not 07:00.
const history = localOfficeSeries("Europe/Berlin", slotOf(Date.parse("2026-03-09T04:00:00Z")), 21, 7);
const learnedIn = (config: typeof utc) => observeAll(createEngine(config), history, config).engine;
const mondayMorning = { nowMs: Date.parse("2026-03-30T05:00:00Z"), idleWindowMs: 15 * MINUTE };
const lead = utc.prewakeLeadMs;

describe("seasons kept by a time zone's clock", () => {
  it("pre-wakes before 08:00 in Berlin the Monday after the clocks go forward", () => {
    const decision = decide(learnedIn(berlin), mondayMorning, berlin);
    expect(decision.actionable).toBe(true);
    expect(decision.prewakeAtMs).toBe(Date.parse("2026-03-30T06:00:00Z") - lead);
  });

  it("learned by UTC, pre-wakes an hour late that Monday (why the zone matters)", () => {
    const decision = decide(learnedIn(utc), mondayMorning, utc);
    expect(decision.actionable).toBe(true);
    expect(decision.prewakeAtMs).toBe(Date.parse("2026-03-30T07:00:00Z") - lead);
  });

  it("places seasons learned by UTC anew when the zone changes, from the history kept", () => {
    const moved = inTimeZone(learnedIn(utc), berlin);
    expect(moved.model?.calendar.timeZone).toBe("Europe/Berlin");
    expect(decide(moved, mondayMorning, berlin).prewakeAtMs).toBe(Date.parse("2026-03-30T06:00:00Z") - lead);
  });

  it("leaves an engine already in the zone as it is", () => {
    const engine = learnedIn(berlin);
    expect(inTimeZone(engine, berlin)).toBe(engine);
  });

  it("places the seasons anew at the next slot learned under another zone", () => {
    const engine = learnedIn(utc);
    const next = { slot: engine.nextSlot ?? 0, value: 0 };
    expect(observe(engine, next, berlin).engine.model?.calendar.timeZone).toBe("Europe/Berlin");
  });

  it("saves the zone with the state (a newer version), and UTC as before", () => {
    const zoned = encodeEngine(learnedIn(berlin));
    const plain = encodeEngine(learnedIn(utc));
    if (!zoned.ok || !plain.ok) throw new Error("not encoded");
    expect(JSON.parse(zoned.value)).toMatchObject({ v: ZONED_STATE_VERSION, m: { z: "Europe/Berlin" } });
    expect(JSON.parse(plain.value).v).toBe(STATE_VERSION);
    expect(JSON.parse(plain.value).m.z).toBeUndefined();
    // Read by an operator whose default is UTC: the zone comes from the state, not from the config.
    const restored = decodeEngine(zoned.value, utc);
    if (!restored.ok) throw new Error(restored.error.message);
    expect(restored.value.model?.calendar.timeZone).toBe("Europe/Berlin");
    expect(decide(restored.value, mondayMorning, utc).prewakeAtMs).toBe(
      Date.parse("2026-03-30T06:00:00Z") - lead,
    );
  });

  it("keeps a saved state whose zone this runtime does not know, and places its seasons anew by the one asked for", () => {
    const zoned = encodeEngine(learnedIn(berlin));
    if (!zoned.ok) throw new Error("not encoded");
    const wire = JSON.parse(zoned.value);
    wire.m.z = "Mars/Olympus_Mons";
    const decoded = decodeEngine(JSON.stringify(wire), berlin);
    if (!decoded.ok) throw new Error(decoded.error.message);
    expect(decoded.value.model?.calendar.timeZone).toBe("Mars/Olympus_Mons");
    const placed = inTimeZone(decoded.value, berlin);
    expect(placed.model?.calendar.timeZone).toBe("Europe/Berlin");
    expect(decide(placed, mondayMorning, berlin).prewakeAtMs).toBe(Date.parse("2026-03-30T06:00:00Z") - lead);
  });

  it("refuses a saved zone longer than any zone's name", () => {
    const zoned = encodeEngine(learnedIn(berlin));
    if (!zoned.ok) throw new Error("not encoded");
    const wire = JSON.parse(zoned.value);
    wire.m.z = "Z".repeat(65);
    const decoded = decodeEngine(JSON.stringify(wire), berlin);
    expect(decoded.ok === false && decoded.error.message).toBe("m.z is 65 characters, no zone's name");
  });

  it.each(["Etc/UTC", "GMT", "utc"])(
    "saves a state in %s as a state in UTC, readable by operators before zones",
    (zone) => {
      const config = forecastConfig({ timeZone: zone });
      const encoded = encodeEngine(learnedIn(config));
      if (!encoded.ok) throw new Error("not encoded");
      expect(JSON.parse(encoded.value).v).toBe(STATE_VERSION);
      expect(inTimeZone(learnedIn(utc), config).model?.calendar.timeZone).toBe("UTC");
    },
  );

  it("refuses a config in a zone the runtime does not know", () => {
    expect(() => forecastConfig({ timeZone: "Europe/Atlantis" })).toThrow(
      /timeZone: unknown time zone "Europe\/Atlantis": use an IANA name/,
    );
  });
});

describe("the seasonal-naive baseline the forecast is scored against", () => {
  it("is the same Berlin time last week in the week after the clocks go forward, not the same UTC time", () => {
    const start = slotOf(Date.parse("2026-03-09T04:00:00Z"));
    const engine = observeAll(
      createEngine(berlin),
      localOfficeSeries("Europe/Berlin", start, 25, 7),
      berlin,
    ).engine;
    // Thursday 2 April, 08:00 in Berlin (summer time); a week before, 08:00 was 07:00 UTC, not 06:00.
    const slot = slotOf(Date.parse("2026-04-02T06:00:00Z"));
    const wallClock = historyAt(engine, slotOf(Date.parse("2026-03-26T07:00:00Z")));
    const utcGrid = historyAt(engine, slot - WEEK_SLOTS);
    expect(wallClock, "the office was open then, and not an hour before").not.toBe(utcGrid);
    expect(seasonalNaive(engine, slot)).toBe(wallClock);
  });
});

describe("a zone asked for with no history to place the seasons by", () => {
  it("is taken at once, not tried again at every slot until data comes", () => {
    const short = { historyDays: 3, learningDays: 3 };
    const [inUtc, inBerlin] = [
      forecastConfig(short),
      forecastConfig({ ...short, timeZone: "Europe/Berlin" }),
    ];
    const learned = observeAll(createEngine(inUtc), history.slice(0, 5 * 96), inUtc).engine;
    const start = learned.nextSlot ?? 0;
    // Four days of gaps: the three kept hold nothing, and a gap that short does not reset the engine.
    const gaps = Array.from({ length: 4 * 96 }, (_, i) => ({ slot: start + i, value: null }));
    const silent = observeAll(learned, gaps, inUtc).engine;
    const moved = observe(silent, { slot: start + 4 * 96, value: null }, inBerlin).engine;
    expect(moved.model?.calendar.timeZone).toBe("Europe/Berlin");
    expect(moved.lastRefitSlot).toBe(start + 4 * 96 + 1);
    const next = observe(moved, { slot: start + 4 * 96 + 1, value: null }, inBerlin).engine;
    expect(next.lastRefitSlot).toBe(moved.lastRefitSlot);
  });
});
