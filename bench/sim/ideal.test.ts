import { describe, expect, it } from "vitest";
import type { Trace } from "../traces/trace.ts";
import { type KnownRates, knownRatesAtBudget, replayKnownRates } from "./ideal.ts";

const MIN = 60_000;
const START = Date.UTC(2024, 0, 1);

/** Four hours with one request at each of `minutes`. */
function traceWith(minutes: number[]): Trace {
  return {
    name: "hand-made",
    description: "",
    startMs: START,
    endMs: START + 240 * MIN,
    requestsMs: minutes.map((m) => START + m * MIN + 10_000),
    telemetryGaps: [],
  };
}

function known(rates: Record<number, number>): KnownRates {
  const firstRequests = new Float64Array(240);
  for (const [minute, rate] of Object.entries(rates)) firstRequests[Number(minute)] = rate;
  return { firstRequests, followUp: Float64Array.from([0.5, 0.2]) };
}

type Case = {
  name: string;
  trace: Trace;
  rates: Record<number, number>;
  threshold: number;
  coldStarts: number;
};

describe("a policy that knows the rates", () => {
  it.each<Case>([
    {
      name: "is woken ahead of a minute worth being awake for",
      trace: traceWith([60]),
      rates: { 60: 0.5 },
      threshold: 0.3,
      coldStarts: 0,
    },
    {
      name: "takes a cold start in a minute not worth being awake for",
      trace: traceWith([60]),
      rates: { 60: 0.1 },
      threshold: 0.3,
      coldStarts: 1,
    },
    {
      name: "stays awake while the session is likely to go on",
      trace: traceWith([60, 61]),
      rates: {},
      threshold: 0.3,
      coldStarts: 1,
    },
    {
      name: "sleeps once the session has gone quiet",
      trace: traceWith([60, 64]),
      rates: {},
      threshold: 0.3,
      coldStarts: 2,
    },
  ])("$name", ({ trace, rates, threshold, coldStarts }) => {
    expect(replayKnownRates(trace, known(rates), threshold).coldStarts).toBe(coldStarts);
  });

  it("is awake only around the minutes worth it", () => {
    const result = replayKnownRates(traceWith([]), known({ 100: 1 }), 0.3);
    // Woken two minutes ahead, awake through the minute, and the first minute before its first look.
    expect(result.awakeHours * 60).toBeCloseTo(4, 6);
  });

  it("shares time between two prices to meet a budget between their awake times", () => {
    const trace = traceWith([60, 120]);
    const rates = known({ 60: 0.5, 120: 0.2 });
    const strict = replayKnownRates(trace, rates, 0.3);
    const loose = replayKnownRates(trace, rates, 0.1);
    const budget = (strict.awakeHours + loose.awakeHours) / 2;
    const shared = knownRatesAtBudget(trace, rates, budget, [0.3, 0.1]);
    expect(shared?.awakeHours).toBeCloseTo(budget, 9);
    expect(shared?.coldStarts).toBeCloseTo((strict.coldStarts + loose.coldStarts) / 2, 9);
  });

  it("finds nothing when every price keeps the workload awake longer than the budget", () => {
    expect(knownRatesAtBudget(traceWith([60]), known({ 60: 1 }), 0, [0.3])).toBeNull();
  });
});
