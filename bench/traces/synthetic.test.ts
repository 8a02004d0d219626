import { describe, expect, it } from "vitest";
import { generateTrace, SYNTHETIC_PROFILES, type TraceProfile } from "./synthetic.ts";

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
