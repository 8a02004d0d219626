// Traces drawn on a local wall clock, placed at the instants they happen. The generator reads its times as a
// clock without daylight saving (UTC); people who keep office hours by a zone's clock live on that zone's wall
// clock instead, whose offset from UTC changes twice a year in many zones.

import { utcOffsetMs } from "../../forecast/index.ts";
import type { Trace } from "./trace.ts";

const DAY_MS = 86_400_000;

/**
 * The instant at which the wall clock of `timeZone` shows `wallMs` (a time whose UTC fields are read as the local
 * date and time). A time the clock skips, where it goes forward, is moved forward by the gap, as a clock that
 * was set to it would be (02:30 on the day Berlin goes from 02:00 to 03:00 happens at 03:30); a time the clock
 * shows twice, where it goes back, is taken at its first showing. Assumes at most one change of offset within a
 * day either side of `wallMs`, as in every zone.
 */
export function wallClockToUtcMs(wallMs: number, timeZone: string): number {
  const before = utcOffsetMs(wallMs - DAY_MS, timeZone);
  const after = utcOffsetMs(wallMs + DAY_MS, timeZone);
  // The instants the clock shows it at: those whose offset is the one that places it there.
  const shown = [before, after]
    .filter((offsetMs) => utcOffsetMs(wallMs - offsetMs, timeZone) === offsetMs)
    .map((offsetMs) => wallMs - offsetMs);
  // Neither offset shows it: the clock skipped it; the offset it had before the change moves it past the gap.
  return shown.length === 0 ? wallMs - before : Math.min(...shown);
}

/**
 * `trace` drawn on the wall clock of `timeZone` (its times read as local dates and times), with every time at the
 * instant it happens, requests sorted again: a time in a skipped hour lands among (and after some of) the times
 * the hour after it shows, and the second showing of a repeated hour stays empty.
 */
export function onWallClockOf(trace: Trace, timeZone: string): Trace {
  const at = (wallMs: number) => wallClockToUtcMs(wallMs, timeZone);
  return {
    ...trace,
    description: `${trace.description} (kept by the wall clock of ${timeZone})`,
    startMs: at(trace.startMs),
    endMs: at(trace.endMs),
    requestsMs: trace.requestsMs.map(at).sort((a, b) => a - b),
    telemetryGaps: trace.telemetryGaps.map((gap) => ({ fromMs: at(gap.fromMs), toMs: at(gap.toMs) })),
  };
}
