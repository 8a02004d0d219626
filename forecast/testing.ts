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
  const format = new Intl.DateTimeFormat("en-GB", {
    timeZone: zone,
    weekday: "short",
    hourCycle: "h23",
    hour: "numeric",
    minute: "numeric",
  });
  return Array.from({ length: days * DAY_SLOTS }, (_, i) => {
    const parts = format.formatToParts(new Date((startSlot + i) * 15 * 60 * 1000));
    const part = (type: string) => parts.find((p) => p.type === type)?.value ?? "";
    const weekday = !["Sat", "Sun"].includes(part("weekday"));
    const daySlot = Math.floor((Number(part("hour")) * 60 + Number(part("minute"))) / 15);
    return { slot: startSlot + i, value: poisson(random, officeRate(weekday ? 0 : 5, daySlot)) };
  });
}
