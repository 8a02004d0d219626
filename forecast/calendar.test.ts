import { describe, expect, it } from "vitest";
import {
  calendarOf,
  type SeasonCalendar,
  sameCalendar,
  sameWallClockBefore,
  UTC_CALENDAR,
  unknownCalendar,
} from "./calendar.ts";
import { DAY_SLOTS, SLOT_MS, slotOf, WEEK_SLOTS } from "./grid.ts";
import { wallClockPosition } from "./testing.ts";

function calendar(zone: string): SeasonCalendar {
  const found = calendarOf(zone);
  if (!found.ok) throw new Error(found.error);
  return found.value;
}

const at = (iso: string) => slotOf(Date.parse(iso));

describe("season calendar", () => {
  it("places UTC slots by the slot alone", () => {
    for (const slot of [0, 1, 95, 96, 671, 672, -1, 2_000_000]) {
      expect(UTC_CALENDAR.weekPosition(slot)).toBe(((slot % WEEK_SLOTS) + WEEK_SLOTS) % WEEK_SLOTS);
    }
  });

  it("keeps 09:00 on a Friday in Berlin at one position in winter and in summer time", () => {
    const berlin = calendar("Europe/Berlin");
    const winter = berlin.weekPosition(at("2026-03-27T08:00:00Z"));
    const summer = berlin.weekPosition(at("2026-04-03T07:00:00Z"));
    expect(summer).toBe(winter);
    expect(winter).toBe(DAY_SLOTS + 36);
  });

  it.each([
    "Europe/Berlin",
    "America/New_York",
    "America/St_Johns", // -3:30, with daylight saving
    "Australia/Lord_Howe", // a daylight-saving change of 30 minutes
    "Asia/Kathmandu", // +5:45
    "Pacific/Chatham", // +12:45 / +13:45
    "Pacific/Apia", // skipped a whole day in 2011
  ])("places every slot where the wall clock of %s says, whatever order it is asked in", (zone) => {
    const zoned = calendar(zone);
    const start = at("2010-01-01T00:00:00Z");
    const slots = Array.from({ length: 4000 }, (_, i) => start + ((i * 7919) % (16 * 365 * DAY_SLOTS)));
    for (const slot of slots) {
      expect(zoned.weekPosition(slot), new Date(slot * SLOT_MS).toISOString()).toBe(
        wallClockPosition(zone, slot * SLOT_MS),
      );
    }
  });

  it("skips the hour the clocks go forward and visits twice the hour they go back", () => {
    const berlin = calendar("Europe/Berlin");
    const positions = (fromIso: string) =>
      Array.from({ length: 12 }, (_, i) => berlin.weekPosition(at(fromIso) + i) % DAY_SLOTS);
    // 29 March 2026: 02:00 CET becomes 03:00 CEST at 01:00 UTC.
    expect(positions("2026-03-29T00:00:00Z")).toEqual([4, 5, 6, 7, 12, 13, 14, 15, 16, 17, 18, 19]);
    // 25 October 2026: 03:00 CEST becomes 02:00 CET at 01:00 UTC.
    expect(positions("2026-10-25T00:00:00Z")).toEqual([8, 9, 10, 11, 8, 9, 10, 11, 12, 13, 14, 15]);
  });

  it.each([
    {
      what: "a week before on the UTC grid, in UTC",
      zone: "UTC",
      from: "2026-03-30T06:00:00Z",
      back: WEEK_SLOTS,
      want: "2026-03-23T06:00:00Z",
    },
    {
      what: "08:00 a week before, across the change to summer time",
      zone: "Europe/Berlin",
      from: "2026-04-02T06:00:00Z",
      back: WEEK_SLOTS,
      want: "2026-03-26T07:00:00Z",
    },
    {
      what: "08:00 a week before, across the change to winter time",
      zone: "Europe/Berlin",
      from: "2026-10-29T07:00:00Z",
      back: WEEK_SLOTS,
      want: "2026-10-22T06:00:00Z",
    },
    {
      what: "08:00 the day before, across the change",
      zone: "America/New_York",
      from: "2026-03-08T12:00:00Z",
      back: DAY_SLOTS,
      want: "2026-03-07T13:00:00Z",
    },
    {
      what: "the same slot a day before where the time did not exist (the hour skipped)",
      zone: "Europe/Berlin",
      from: "2026-03-30T00:15:00Z",
      back: DAY_SLOTS,
      want: "2026-03-29T00:15:00Z",
    },
    {
      what: "the same slot a week before, with no change between",
      zone: "Europe/Berlin",
      from: "2026-06-04T06:00:00Z",
      back: WEEK_SLOTS,
      want: "2026-05-28T06:00:00Z",
    },
  ])("finds the same wall-clock time before: $what", ({ zone, from, back, want }) => {
    expect(sameWallClockBefore(calendar(zone), at(from), back)).toBe(at(want));
  });

  it("keeps the name asked for, and places a link's slots as the zone it names, and UTC's in any spelling", () => {
    const start = at("2026-01-01T00:00:00Z");
    const slots = Array.from({ length: 400 }, (_, i) => start + i * 97);
    const placed = (zone: string) => slots.map((slot) => calendar(zone).weekPosition(slot));
    expect(calendar("Asia/Kolkata").timeZone).toBe("Asia/Kolkata");
    expect(placed("US/Pacific")).toEqual(placed("America/Los_Angeles"));
    expect(placed("Etc/UTC")).toEqual(placed("UTC"));
    expect(placed("gmt")).toEqual(slots.map((slot) => UTC_CALENDAR.weekPosition(slot)));
    expect(calendar("UTC")).toBe(UTC_CALENDAR);
  });

  it("takes two spellings of one zone for the same calendar, and two zones for two", () => {
    expect(sameCalendar(calendar("US/Pacific"), calendar("America/Los_Angeles"))).toBe(true);
    expect(sameCalendar(calendar("Etc/UTC"), UTC_CALENDAR)).toBe(true);
    expect(sameCalendar(calendar("Asia/Kolkata"), calendar("Asia/Calcutta"))).toBe(true);
    expect(sameCalendar(calendar("Europe/Berlin"), calendar("Europe/Paris"))).toBe(false);
    expect(sameCalendar(unknownCalendar("Mars/Olympus_Mons"), UTC_CALENDAR)).toBe(false);
  });

  it.each(["+01", "-00", "+2359", "-05:30", ""])(
    "refuses the offset or blank %j, which some runtimes take for a zone",
    (name) => {
      const refused = calendarOf(name);
      expect(refused.ok === false && refused.error).toMatch(/use an IANA name/);
    },
  );

  it("refuses an unknown zone, saying what to set", () => {
    const refused = calendarOf("Mars/Olympus_Mons");
    expect(refused.ok).toBe(false);
    if (!refused.ok)
      expect(refused.error).toMatch(/unknown time zone "Mars\/Olympus_Mons": use an IANA name/);
  });

  it("places slots at the ends of the range a date holds without throwing", () => {
    const zoned = calendar("Europe/Berlin");
    const last = Math.floor(8.64e15 / SLOT_MS);
    for (const slot of [last, -last, last + 10 * WEEK_SLOTS, 0]) {
      const position = zoned.weekPosition(slot);
      expect(position).toBeGreaterThanOrEqual(0);
      expect(position).toBeLessThan(WEEK_SLOTS);
    }
  });
});
