// Synthetic series for tests: a known daily and weekly shape plus seeded Poisson noise.

import { DAY_SLOTS, type GridPoint } from "./grid.ts";
import { poisson, seededRandom } from "./prng.ts";

/** Slot of Monday 2024-01-01 00:00 UTC, so day 0 of every test series is a Monday. */
export const MONDAY_SLOT = Date.UTC(2024, 0, 1) / (15 * 60 * 1000);

/** Office-like expected activity: `peak` per slot 08:00-18:00 on weekdays, zero otherwise. */
export function officeRate(dayIndex: number, daySlot: number, peak = 8): number {
  const weekday = dayIndex % 7 < 5;
  return weekday && daySlot >= 32 && daySlot < 72 ? peak : 0;
}

export function officeSeries(
  days: number,
  seed: number,
  rate: (dayIndex: number, daySlot: number) => number = officeRate,
  startSlot = MONDAY_SLOT,
): GridPoint[] {
  const random = seededRandom(seed);
  return Array.from({ length: days * DAY_SLOTS }, (_, i) => ({
    slot: startSlot + i,
    value: poisson(random, rate(Math.floor(i / DAY_SLOTS), i % DAY_SLOTS)),
  }));
}

/**
 * `officeSeries` kept by the wall clock of `zone` (office hours 08:00-18:00 local, Monday to Friday), on the UTC
 * grid from `startSlot`: read from the runtime's time-zone database directly, not through a season calendar.
 */
export function localOfficeSeries(zone: string, startSlot: number, days: number, seed: number): GridPoint[] {
  const random = seededRandom(seed);
  return Array.from({ length: days * DAY_SLOTS }, (_, i) => {
    const position = wallClockPosition(zone, (startSlot + i) * 15 * 60 * 1000);
    // Days of the week from Thursday: Saturday and Sunday are 2 and 3.
    const weekday = ![2, 3].includes(Math.floor(position / DAY_SLOTS));
    return { slot: startSlot + i, value: poisson(random, officeRate(weekday ? 0 : 5, position % DAY_SLOTS)) };
  });
}

/** The epoch's week starts on a Thursday, and so do the season calendar's weeks. */
const WEEKDAYS_FROM_THURSDAY = ["Thu", "Fri", "Sat", "Sun", "Mon", "Tue", "Wed"];
const weekdayFormats = new Map<string, Intl.DateTimeFormat>();

/**
 * Where `atMs` falls in the local week of `zone`, in 15-minute slots from Thursday 00:00: read from the runtime's
 * time-zone database directly (weekday and wall clock), not through a season calendar, which tests check by it.
 */
export function wallClockPosition(zone: string, atMs: number): number {
  let format = weekdayFormats.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat("en-GB", {
      timeZone: zone,
      weekday: "short",
      hourCycle: "h23",
      hour: "numeric",
      minute: "numeric",
    });
    weekdayFormats.set(zone, format);
  }
  const parts = format.formatToParts(new Date(atMs));
  const part = (type: string) => parts.find((p) => p.type === type)?.value ?? "";
  const day = WEEKDAYS_FROM_THURSDAY.indexOf(part("weekday"));
  return day * DAY_SLOTS + Math.floor((Number(part("hour")) * 60 + Number(part("minute"))) / 15);
}
