import { describe, expect, it } from "vitest";
import { utcOffsetMs } from "../../forecast/index.ts";
import { onWallClockOf, wallClockToUtcMs } from "./local-time.ts";
import type { Trace } from "./trace.ts";

const HOUR_MS = 3_600_000;
/** A wall-clock or UTC time from "2026-03-29T02:30:00.250" (no zone: its fields as they read). */
const at = (text: string) => Date.parse(`${text}Z`);

describe("a time on a zone's wall clock, at the instant it happens", () => {
  it.each([
    {
      case: "winter time, an hour ahead of UTC",
      zone: "Europe/Berlin",
      wall: "2026-01-15T10:00",
      utc: "2026-01-15T09:00",
    },
    {
      case: "summer time, two hours ahead",
      zone: "Europe/Berlin",
      wall: "2026-07-15T10:00",
      utc: "2026-07-15T08:00",
    },
    {
      case: "the last minute before the clocks go forward",
      zone: "Europe/Berlin",
      wall: "2026-03-29T01:59",
      utc: "2026-03-29T00:59",
    },
    {
      case: "the start of the skipped hour, moved forward by the gap (03:00 local)",
      zone: "Europe/Berlin",
      wall: "2026-03-29T02:00",
      utc: "2026-03-29T01:00",
    },
    {
      case: "inside the skipped hour, moved forward by the gap (03:30 local)",
      zone: "Europe/Berlin",
      wall: "2026-03-29T02:30",
      utc: "2026-03-29T01:30",
    },
    {
      case: "the hour after the skipped one, where its times also land",
      zone: "Europe/Berlin",
      wall: "2026-03-29T03:00",
      utc: "2026-03-29T01:00",
    },
    {
      case: "the last minute before the clocks go back",
      zone: "Europe/Berlin",
      wall: "2026-10-25T01:59",
      utc: "2026-10-24T23:59",
    },
    {
      case: "the repeated hour's start, at its first showing (summer time)",
      zone: "Europe/Berlin",
      wall: "2026-10-25T02:00",
      utc: "2026-10-25T00:00",
    },
    {
      case: "inside the repeated hour, at its first showing",
      zone: "Europe/Berlin",
      wall: "2026-10-25T02:59:59",
      utc: "2026-10-25T00:59:59",
    },
    {
      case: "the hour after the repeated one, in winter time",
      zone: "Europe/Berlin",
      wall: "2026-10-25T03:00",
      utc: "2026-10-25T02:00",
    },
    {
      case: "milliseconds kept in the skipped hour",
      zone: "Europe/Berlin",
      wall: "2026-03-29T02:30:00.250",
      utc: "2026-03-29T01:30:00.250",
    },
    {
      case: "a zone behind UTC, in its skipped hour",
      zone: "America/New_York",
      wall: "2026-03-08T02:30",
      utc: "2026-03-08T07:30",
    },
    {
      case: "a zone behind UTC, in its repeated hour",
      zone: "America/New_York",
      wall: "2026-11-01T01:30",
      utc: "2026-11-01T05:30",
    },
    {
      case: "a southern zone going forward in October",
      zone: "Australia/Sydney",
      wall: "2026-10-04T02:30",
      utc: "2026-10-03T16:30",
    },
    {
      case: "a half-hour change of clock (Lord Howe), its skipped half hour",
      zone: "Australia/Lord_Howe",
      wall: "2026-10-04T02:15",
      utc: "2026-10-03T15:45",
    },
    {
      case: "a half-hour offset without daylight saving",
      zone: "Asia/Kolkata",
      wall: "2026-03-29T10:00",
      utc: "2026-03-29T04:30",
    },
    { case: "UTC, unchanged", zone: "UTC", wall: "2026-03-29T02:30", utc: "2026-03-29T02:30" },
  ])("$case ($zone $wall)", ({ zone, wall, utc }) => {
    expect(new Date(wallClockToUtcMs(at(wall), zone)).toISOString()).toBe(new Date(at(utc)).toISOString());
  });

  it.each([
    { zone: "Europe/Berlin", utc: "2026-03-29T00:59:59", offsetHours: 1 },
    { zone: "Europe/Berlin", utc: "2026-03-29T01:00", offsetHours: 2 },
    { zone: "Europe/Berlin", utc: "2026-10-25T00:59:59", offsetHours: 2 },
    { zone: "Europe/Berlin", utc: "2026-10-25T01:00", offsetHours: 1 },
    { zone: "America/New_York", utc: "2026-07-01T12:00", offsetHours: -4 },
    { zone: "Asia/Kolkata", utc: "2026-07-01T12:00", offsetHours: 5.5 },
  ])("reads the offset of $zone at $utc as $offsetHours h", ({ zone, utc, offsetHours }) => {
    expect(utcOffsetMs(at(utc), zone)).toBe(offsetHours * HOUR_MS);
  });

  it("returns an instant the clock shows the time at, every quarter hour of a year but the skipped hour", () => {
    const wrong = Array.from({ length: 365 * 96 }, (_, i) => at("2026-01-01T00:00") + i * 15 * 60_000).filter(
      (wallMs) => {
        const utcMs = wallClockToUtcMs(wallMs, "Europe/Berlin");
        return utcMs + utcOffsetMs(utcMs, "Europe/Berlin") !== wallMs;
      },
    );
    expect(wrong.map((t) => new Date(t).toISOString().slice(0, 16))).toEqual([
      "2026-03-29T02:00",
      "2026-03-29T02:15",
      "2026-03-29T02:30",
      "2026-03-29T02:45",
    ]);
  });
});

describe("a trace kept by a zone's wall clock", () => {
  const wall: Trace = {
    name: "office",
    description: "office hours",
    startMs: at("2026-03-02T00:00"),
    endMs: at("2026-04-13T00:00"),
    requestsMs: [at("2026-03-27T09:00"), at("2026-03-29T02:30"), at("2026-03-30T09:00")],
    telemetryGaps: [{ fromMs: at("2026-03-10T12:00"), toMs: at("2026-04-01T12:00") }],
  };
  const placed = onWallClockOf(wall, "Europe/Berlin");

  it("starts and ends at the local midnights, in UTC", () => {
    expect(new Date(placed.startMs).toISOString()).toBe("2026-03-01T23:00:00.000Z");
    expect(new Date(placed.endMs).toISOString()).toBe("2026-04-12T22:00:00.000Z");
  });

  it("places 09:00 an hour earlier in UTC once the clocks went forward, a skipped time past the gap", () => {
    expect(placed.requestsMs.map((t) => new Date(t).toISOString())).toEqual([
      "2026-03-27T08:00:00.000Z",
      "2026-03-29T01:30:00.000Z",
      "2026-03-30T07:00:00.000Z",
    ]);
  });

  it("keeps requests sorted, though a time in the skipped hour lands after some just past it", () => {
    const requestsMs = [at("2026-03-29T02:45"), at("2026-03-29T03:00"), at("2026-03-29T03:50")];
    const sorted = onWallClockOf({ ...wall, requestsMs }, "Europe/Berlin").requestsMs;
    expect(sorted.map((t) => new Date(t).toISOString())).toEqual([
      "2026-03-29T01:00:00.000Z",
      "2026-03-29T01:45:00.000Z",
      "2026-03-29T01:50:00.000Z",
    ]);
  });

  it("places telemetry gaps by the same clock, and says which clock it keeps", () => {
    expect(placed.telemetryGaps).toEqual([{ fromMs: at("2026-03-10T11:00"), toMs: at("2026-04-01T10:00") }]);
    expect(placed.description).toBe("office hours (kept by the wall clock of Europe/Berlin)");
    expect(placed.name).toBe("office");
  });
});
