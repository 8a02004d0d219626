// Where a grid slot falls in the day and the week of a time zone. The grid counts UTC slots, but people keep
// office hours by the local clock: learned by UTC, a team's 09:00 moves an hour at every daylight-saving change,
// and the seasons take days to follow it. Positioned by local time, the seasons never see the change.

import { positiveModulo, SLOT_MS, WEEK_SLOTS } from "./grid.ts";
import { err, ok, type Result } from "./result.ts";

export type SeasonCalendar = {
  /**
   * The zone's IANA name as it was asked for: the runtime's database may know it by another ("Asia/Kolkata" as
   * "Asia/Calcutta"), and messages speak the user's.
   */
  readonly timeZone: string;
  /**
   * The zone as the runtime's database knows it, which calendars are compared by (`sameCalendar`): "UTC" for
   * every spelling of it ("Etc/UTC", "GMT"), one name for a link and the zone it names ("US/Pacific").
   */
  readonly zone: string;
  /**
   * Where `slot` starts in the local week, 0 to WEEK_SLOTS - 1, counted from the local midnight that starts a
   * Thursday (the epoch's weekday, so the UTC calendar is the slot modulo a week). The local day is this modulo
   * DAY_SLOTS. Where the clocks go forward, an hour of positions is skipped that day; where they go back, one is
   * visited twice.
   */
  weekPosition(slot: number): number;
};

export const UTC_CALENDAR: SeasonCalendar = {
  timeZone: "UTC",
  zone: "UTC",
  weekPosition: (slot) => positiveModulo(slot, WEEK_SLOTS),
};

/** A stretch of slots [from, to) over which the zone's offset from UTC, in whole slots, is `shift`. */
type Span = { from: number; to: number; shift: number };

const DAY_OF_SLOTS = (24 * 60 * 60 * 1000) / SLOT_MS;
/** How far one search for an offset change looks, each way: zones change at most a few times a year. */
const SEARCH_DAYS = 400;
/** Slots a Date can hold (±8.64e15 ms), less a search's reach, so every probe stays a valid time. */
const LAST_SLOT = Math.floor(8.64e15 / SLOT_MS) - (SEARCH_DAYS + 1) * DAY_OF_SLOTS;

class ZoneCalendar implements SeasonCalendar {
  readonly timeZone: string;
  readonly zone: string;
  readonly #format: Intl.DateTimeFormat;
  /** Spans found so far, in time order, never overlapping. */
  readonly #spans: Span[] = [];
  #last: Span = { from: 0, to: 0, shift: 0 };

  constructor(timeZone: string, format: Intl.DateTimeFormat) {
    this.timeZone = timeZone;
    this.zone = format.resolvedOptions().timeZone;
    this.#format = format;
  }

  weekPosition(slot: number): number {
    // Nearly every call falls in the span of the one before: the offset is looked up only where it may change.
    let span = this.#last;
    if (slot < span.from || slot >= span.to) {
      span = this.#spanOf(slot);
      this.#last = span;
    }
    return positiveModulo(slot + span.shift, WEEK_SLOTS);
  }

  #spanOf(slot: number): Span {
    const at = Math.max(-LAST_SLOT, Math.min(LAST_SLOT, slot));
    const index = this.#spans.findIndex((span) => span.to > at);
    const next = index === -1 ? undefined : this.#spans[index];
    if (next && next.from <= at) return next;
    const before = index === -1 ? this.#spans.at(-1) : this.#spans[index - 1];
    const shift = this.#shiftAt(at);
    const span = {
      from: Math.max(before?.to ?? Number.NEGATIVE_INFINITY, this.#edge(at, shift, -1)),
      to: Math.min(next?.from ?? Number.POSITIVE_INFINITY, this.#edge(at, shift, 1)),
      shift,
    };
    this.#spans.splice(index === -1 ? this.#spans.length : index, 0, span);
    // Past the range a Date holds, the nearest valid offset stands.
    if (slot < -LAST_SLOT) return { ...span, from: Number.NEGATIVE_INFINITY };
    if (slot > LAST_SLOT) return { ...span, to: Number.POSITIVE_INFINITY };
    return span;
  }

  /**
   * The first slot past `slot` in `direction` whose offset differs (exclusive end when forward, inclusive start
   * when back), or the search's reach. Day by day, then halving within the day: no zone's offset changes and
   * changes back within a day.
   */
  #edge(slot: number, shift: number, direction: 1 | -1): number {
    let same = slot;
    for (let day = 1; day <= SEARCH_DAYS; day++) {
      const probe = slot + direction * day * DAY_OF_SLOTS;
      if (this.#shiftAt(probe) !== shift) {
        let differs = probe;
        while (Math.abs(differs - same) > 1) {
          const middle = Math.trunc((same + differs) / 2);
          if (this.#shiftAt(middle) === shift) same = middle;
          else differs = middle;
        }
        return direction === 1 ? differs : same;
      }
      same = probe;
    }
    return direction === 1 ? same + 1 : same;
  }

  /** The zone's offset from UTC at the start of `slot`, in whole slots (floored: the slot's local position). */
  #shiftAt(slot: number): number {
    const offsetMs = offsetOf(this.#format, slot * SLOT_MS);
    return Number.isFinite(offsetMs) ? Math.floor(offsetMs / SLOT_MS) : 0;
  }
}

/** How far the wall clock `format` reads is ahead of UTC at `atMs` (to the second; NaN past a Date's range). */
function offsetOf(format: Intl.DateTimeFormat, atMs: number): number {
  const wholeSecondMs = Math.floor(atMs / 1000) * 1000;
  const local = new Map(format.formatToParts(new Date(wholeSecondMs)).map((part) => [part.type, part.value]));
  const year = Number(local.get("year"));
  const wall = new Date(0);
  // Years before the first are counted back from it ("1 BC" is year 0).
  wall.setUTCFullYear(
    local.get("era") === "BC" ? 1 - year : year,
    Number(local.get("month")) - 1,
    Number(local.get("day")),
  );
  wall.setUTCHours(Number(local.get("hour")), Number(local.get("minute")), Number(local.get("second")), 0);
  return wall.getTime() - wholeSecondMs;
}

/**
 * How far the wall clock of `timeZone` is ahead of UTC at the instant `atMs` (Berlin in summer: 2 h). Throws a
 * RangeError for a zone the runtime does not know.
 */
export function utcOffsetMs(atMs: number, timeZone: string): number {
  const format = wallClockFormat(timeZone);
  if (!format) throw new RangeError(unknownZone(timeZone));
  return offsetOf(format, atMs);
}

/** `utcOffsetMs`'s formats, by zone name (up to MAX_NAMES). */
const formats = new Map<string, Intl.DateTimeFormat>();

/** A format that reads the wall clock of `timeZone`, or null for a zone the runtime does not know. */
function wallClockFormat(timeZone: string): Intl.DateTimeFormat | null {
  const known = formats.get(timeZone);
  if (known) return known;
  const format = newWallClockFormat(timeZone);
  if (format && formats.size < MAX_NAMES) formats.set(timeZone, format);
  return format;
}

function newWallClockFormat(timeZone: string): Intl.DateTimeFormat | null {
  try {
    return new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      era: "short",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric",
    });
  } catch {
    return null;
  }
}

/** Why `calendarOf` refuses `timeZone`, and what to set instead. */
export function unknownZone(timeZone: string): string {
  return (
    `unknown time zone ${JSON.stringify(timeZone)}: use an IANA name such as "Europe/Berlin", ` +
    `"America/New_York" or "UTC"`
  );
}

const calendars = new Map<string, SeasonCalendar>([["UTC", UTC_CALENDAR]]);
/** The shape of an IANA name, as the CRD checks it. */
const ZONE_NAME = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/;
/**
 * Names are remembered up to this many (a zone may be spelt in any case, and names come from users); past it, a
 * calendar is made at each ask, and compared by zone (`sameCalendar`) it places slots alike.
 */
const MAX_NAMES = 1024;

/**
 * The slot `back` slots of wall-clock time before `slot` (a day or a week): the same local time as `slot`, on
 * either side of a daylight-saving change. Where that time did not exist then (the hour the clocks skipped), the
 * slot `back` before on the UTC grid.
 */
export function sameWallClockBefore(calendar: SeasonCalendar, slot: number, back: number): number {
  const before = slot - back;
  if (calendar.zone === "UTC") return before;
  // The offsets at both ends differ only across a change: then the slot before moves by the difference.
  const wanted = calendar.weekPosition(slot) - back;
  const shift =
    positiveModulo(wanted - calendar.weekPosition(before) + WEEK_SLOTS / 2, WEEK_SLOTS) - WEEK_SLOTS / 2;
  if (shift === 0) return before;
  return calendar.weekPosition(before + shift) === positiveModulo(wanted, WEEK_SLOTS)
    ? before + shift
    : before;
}

/** Whether two calendars place slots alike: they are of one zone, however spelt. */
export function sameCalendar(a: SeasonCalendar, b: SeasonCalendar): boolean {
  return a.zone === b.zone;
}

/**
 * A calendar for a zone this runtime does not know (named by a saved state that another operator wrote): it
 * places slots as UTC does and is the same as no other, so the seasons are placed anew, from the history kept, by
 * the zone the engine is asked to follow, rather than the state discarded.
 */
export function unknownCalendar(timeZone: string): SeasonCalendar {
  return { ...UTC_CALENDAR, timeZone, zone: `unknown:${timeZone}` };
}

/**
 * The calendar of an IANA time zone ("Europe/Berlin"; links such as "US/Pacific" read as the zone they name), one
 * per name for the whole process. Refused, with what to set instead, when the runtime does not know the zone.
 */
export function calendarOf(timeZone: string): Result<SeasonCalendar, string> {
  const known = calendars.get(timeZone);
  if (known) return ok(known);
  // Offsets ("+01", "-0530"), which some runtimes take for zones, are not names: they keep no daylight saving,
  // need not fall on a slot's edge, and an older runtime refuses them.
  if (!ZONE_NAME.test(timeZone)) return err(unknownZone(timeZone));
  // Kept by the calendar itself: the calendars are remembered, by name, as the formats are.
  const format = newWallClockFormat(timeZone);
  if (!format) return err(unknownZone(timeZone));
  // Every spelling of UTC ("Etc/UTC", "GMT") places slots as the grid does, without looking offsets up.
  const calendar =
    format.resolvedOptions().timeZone === "UTC"
      ? { ...UTC_CALENDAR, timeZone }
      : new ZoneCalendar(timeZone, format);
  if (calendars.size < MAX_NAMES) calendars.set(timeZone, calendar);
  return ok(calendar);
}
