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
