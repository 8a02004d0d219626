import { describe, expect, it } from "vitest";
import {
  generateTrace,
  generateTraceWithRates,
  SYNTHETIC_PROFILES,
  sessionFollowUpHazard,
  type TraceProfile,
} from "./synthetic.ts";

const HOUR = 3_600_000;
const office = SYNTHETIC_PROFILES[0] as TraceProfile;
const short: TraceProfile = { ...office, days: 14, changeAtDay: 7, holidays: [2] };
const trace = generateTrace(short);

function requestsOn(day: number, fromHour = 0, toHour = 24): number {
  const start = short.startMs + day * 24 * HOUR;
  return trace.requestsMs.filter((t) => t >= start + fromHour * HOUR && t < start + toHour * HOUR).length;
}

describe("synthetic traces", () => {
  it("is reproducible from its seed", () => {
    expect(generateTrace(short).requestsMs).toEqual(trace.requestsMs);
    expect(generateTrace({ ...short, seed: 99 }).requestsMs).not.toEqual(trace.requestsMs);
  });

  it("draws the same trace as when the benchmark's figures were taken", () => {
    const secondsIn = trace.requestsMs.reduce((sum, t) => sum + (t - trace.startMs), 0) / 1000;
    expect(trace.requestsMs).toHaveLength(2582);
    expect(Math.round(secondsIn)).toBe(1_355_576_137);
  });

  it("is sorted and stays within its span", () => {
    const sorted = [...trace.requestsMs].sort((a, b) => a - b);
    expect(trace.requestsMs).toEqual(sorted);
    expect(trace.requestsMs[0]).toBeGreaterThanOrEqual(trace.startMs);
    expect(trace.requestsMs[trace.requestsMs.length - 1]).toBeLessThan(trace.endMs);
  });

  it.each([
    { name: "busy office hours on a working day", day: 1, from: 9, to: 17, atLeast: 100 },
    { name: "the nightly job", day: 1, from: 2, to: 3, atLeast: 8 },
  ])("has $name", ({ day, from, to, atLeast }) => {
    expect(requestsOn(day, from, to)).toBeGreaterThanOrEqual(atLeast);
  });

  it("is quiet on holidays and much quieter on weekends", () => {
    expect(requestsOn(2, 9, 17)).toBeLessThan(41); // at most one burst
    expect(requestsOn(5)).toBeLessThan(requestsOn(1) / 4);
  });

  it("changes pattern half way: the working day starts earlier after the change", () => {
    expect(requestsOn(8, 6, 7.5)).toBeGreaterThan(requestsOn(1, 6, 7.5));
  });

  it("has telemetry gaps", () => {
    expect(trace.telemetryGaps).toHaveLength(short.telemetryGaps);
  });
});

describe("the rates a synthetic trace is drawn from", () => {
  const { trace: drawn, firstRequests } = generateTraceWithRates(short);
  const minutesOf = (day: number, fromHour: number, toHour: number) =>
    firstRequests.subarray((day * 24 + fromHour) * 60, (day * 24 + toHour) * 60);
  const sum = (rates: Float64Array) => rates.reduce((a, b) => a + b, 0);
  const burstsPerMinute = short.burstsPerWeek / (7 * 24 * 60);

  it("come with the very trace generateTrace draws", () => {
    expect(drawn.requestsMs).toEqual(trace.requestsMs);
    expect(firstRequests).toHaveLength(short.days * 24 * 60);
  });

  it.each([
    { name: "a working day expects sessions at its busy hours", day: 1, from: 10, to: 11, atLeast: 5 },
    { name: "the nightly job is one burst within its hour", day: 1, from: 2, to: 3, atLeast: 1 - 1e-9 },
  ])("$name", ({ day, from, to, atLeast }) => {
    expect(sum(minutesOf(day, from, to))).toBeGreaterThanOrEqual(atLeast);
  });

  it("expect nothing but unscheduled bursts on a holiday's office hours", () => {
    for (const rate of minutesOf(2, 9, 17)) expect(rate).toBeCloseTo(burstsPerMinute, 12);
  });

  it("spread weekend sessions over the waking hours, their first requests a little later", () => {
    const wakingHours = office.before.weekendSessionsPerDay + 14 * 60 * burstsPerMinute;
    expect(sum(minutesOf(5, 9, 23))).toBeCloseTo(wakingHours, 9);
    // Before 09:00 only the nightly job (every day) and unscheduled bursts.
    expect(sum(minutesOf(5, 0, 9))).toBeCloseTo(1 + 9 * 60 * burstsPerMinute, 9);
    expect(sum(minutesOf(5, 22, 23))).toBeGreaterThan(sum(minutesOf(5, 23, 24)));
  });

  it("send a job's first request within five minutes of its hour", () => {
    expect(sum(minutesOf(1, 2, 3)) - 60 * burstsPerMinute).toBeCloseTo(1, 9);
    const afterFiveMinutes = firstRequests.subarray((24 + 2) * 60 + 5, (24 + 3) * 60);
    expect(sum(afterFiveMinutes)).toBeCloseTo(55 * burstsPerMinute, 9);
  });
});

describe("the chance a session goes on", () => {
  const hazard = sessionFollowUpHazard(office, 30, 20_000);

  it("is highest just after a request", () => {
    expect(hazard[0]).toBeGreaterThan(hazard[5] ?? 1);
    expect(hazard[5]).toBeGreaterThan(hazard[15] ?? 1);
  });

  it("is nil after twenty minutes of quiet, the longest a session lasts", () => {
    for (const chance of hazard.subarray(20)) expect(chance).toBe(0);
  });
});
