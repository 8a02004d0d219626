import { describe, expect, it } from "vitest";
import { forecastConfig, SLOT_MS, slotOf } from "../../forecast/index.ts";
import { generateTrace, SYNTHETIC_PROFILES, type TraceProfile } from "../traces/synthetic.ts";
import type { Trace } from "../traces/trace.ts";
import {
  bookedSpend,
  gridOf,
  oracleAdvice,
  type Policy,
  replayPolicy,
  serveRequest,
  startSim,
  WAKE_MS,
} from "./replay.ts";
import { everyTwoHours } from "./test-traces.ts";

const MIN = 60_000;
const START = Date.UTC(2024, 0, 1);
const trace = everyTwoHours(START);
const config = forecastConfig();
const replay = (policy: Omit<Policy, "name">) => ({
  ...replayPolicy(trace, { name: "", ...policy }, config),
});

describe("replay", () => {
  it.each([{ idle: 30 }, { idle: 15 }])(
    "pauses after each isolated request with a $idle min idle window",
    ({ idle }) => {
      const result = replay({ idleWindowMs: idle * MIN, useForecast: false });
      expect(result.coldStarts).toBe(12);
      expect(result.pauses).toBe(13);
      // Awake: the start until the first pause, then each request plus the idle window (rounded to the tick).
      expect(result.awakeHours).toBeCloseTo(((idle + 1) * 13) / 60, 0);
    },
  );

  it("counts every request that waits for a wake as a cold start, and the wake once", () => {
    const sim = startSim(START);
    sim.paused = true;
    const result = { coldStarts: 0, coldWakes: 0 };
    for (const atMs of [
      START + MIN,
      START + MIN + WAKE_MS / 3,
      START + MIN + (2 * WAKE_MS) / 3,
      START + MIN + WAKE_MS,
    ]) {
      serveRequest(sim, result, atMs);
    }
    expect(result).toEqual({ coldStarts: 3, coldWakes: 1 });
  });

  it.each<{ name: string; policy: Omit<Policy, "name">; like: Omit<Policy, "name"> }>([
    {
      name: "behaves like the plain clock while the forecast is still learning",
      policy: { idleWindowMs: 15 * MIN, useForecast: true },
      like: { idleWindowMs: 15 * MIN, useForecast: false },
    },
    {
      name: "keeps the untrusted idle window until the forecast is trusted",
      policy: { idleWindowMs: 10 * MIN, untrustedIdleWindowMs: 30 * MIN, useForecast: true },
      like: { idleWindowMs: 30 * MIN, useForecast: false },
    },
  ])("$name", ({ policy, like }) => {
    expect({ ...replay(policy), policy: "" }).toEqual({ ...replay(like), policy: "" });
  });
});

describe("what the engine is fed", () => {
  const burst: Trace = {
    ...trace,
    requestsMs: [START + 1 * MIN, START + 2 * MIN, START + 3 * MIN, START + 20 * MIN],
    telemetryGaps: [{ fromMs: START + SLOT_MS * 2, toMs: START + SLOT_MS * 3 }],
  };
  it.each([
    { signal: "requests" as const, values: [3, 1, null, 0] },
    { signal: "occupancy" as const, values: [1, 1, null, 0] },
  ])("counts $signal per slot, with telemetry gaps as unknown", ({ signal, values }) => {
    expect(gridOf(burst, signal).slice(0, 4)).toEqual(
      values.map((value, i) => ({ slot: slotOf(START) + i, value })),
    );
  });
});

describe("advice from known chances", () => {
  const tenOClock = slotOf(START + 10 * 60 * MIN);
  const chanceOf = (slot: number) => (slot === tenOClock ? 0.6 : 0.1);
  it.each([
    { name: "pre-wakes the lead time before a likely slot", at: 8 * 60, veto: false },
    { name: "vetoes a pause when a likely slot starts within the idle window", at: 9 * 60 + 50, veto: true },
    {
      name: "vetoes a pause when a likely slot starts within the idle window and the pre-wake lead",
      at: 10 * 60 - 15 - config.prewakeLeadMs / MIN + 1,
      veto: true,
    },
    {
      name: "lets a pause be when a likely slot starts after the idle window and the pre-wake lead",
      at: 10 * 60 - 15 - config.prewakeLeadMs / MIN - 1,
      veto: false,
    },
  ])("$name", ({ at, veto }) => {
    const advice = oracleAdvice(chanceOf, { nowMs: START + at * MIN, idleWindowMs: 15 * MIN }, config);
    expect(advice.vetoPause).toBe(veto);
    expect(advice.prewakeAtMs).toBe(tenOClock * SLOT_MS - config.prewakeLeadMs);
  });

  it("says nothing when no slot ahead is likely enough", () => {
    expect(oracleAdvice(() => 0.1, { nowMs: START, idleWindowMs: 15 * MIN }, config)).toMatchObject({
      vetoPause: false,
      prewakeAtMs: null,
    });
  });
});

describe("the awake time a check books, as the operator books it", () => {
  const at = (s: number) => START + s * 1_000;
  it.each([
    {
      what: "a check that found the workload awake charges the whole stretch",
      pausedAtLook: false,
      activity: [at(-60)],
      booked: { awakeMs: 30_000, baselineAwakeMs: 30_000 },
    },
    {
      what: "a check that found it paused charges nothing, though a request woke it since",
      pausedAtLook: true,
      activity: [at(20)],
      booked: { awakeMs: 0, baselineAwakeMs: 10_000 },
    },
    {
      what: "the idle window alone counts from the activity, in continuous time",
      pausedAtLook: false,
      activity: [at(-30 * 60 + 5)],
      booked: { awakeMs: 30_000, baselineAwakeMs: 5_000 },
    },
  ])("$what", ({ pausedAtLook, activity, booked }) => {
    expect(bookedSpend(at(0), at(30), pausedAtLook, activity, 30 * MIN)).toEqual(booked);
  });
});

describe("replay with an awake budget", () => {
  const office = generateTrace({ ...(SYNTHETIC_PROFILES[0] as TraceProfile), days: 21, changeAtDay: 21 });
  const forecast: Policy = {
    name: "",
    idleWindowMs: 15 * MIN,
    untrustedIdleWindowMs: 30 * MIN,
    useForecast: true,
  };
  const run = (policy: Partial<Policy>) => replayPolicy(office, { ...forecast, ...policy }, config);

  it("changes nothing when the trusted window is not shorter: there is nothing to spend", () => {
    const equal = { idleWindowMs: 30 * MIN, untrustedIdleWindowMs: 30 * MIN };
    expect(run({ ...equal, awakeBudget: true })).toEqual(run({ ...equal, awakeBudget: false }));
  });

  it("keeps the workload awake no longer than the fixed chance does where that overspends", () => {
    const timeout = replayPolicy(office, { name: "", idleWindowMs: 30 * MIN, useForecast: false }, config);
    const fixed = run({ awakeBudget: false });
    const budgeted = run({ awakeBudget: true });
    expect(fixed.awakeHours).toBeGreaterThan(timeout.awakeHours);
    expect(budgeted.awakeHours).toBeLessThan(fixed.awakeHours);
  });
});

describe("the slot a check learns", () => {
  it("is the slot that closes at a check on its end, learned before the check decides, as the operator's look", () => {
    const trace = generateTrace({ ...(SYNTHETIC_PROFILES[0] as TraceProfile), days: 2 });
    const lags = new Set<number>();
    replayPolicy(
      trace,
      { name: "(c)", idleWindowMs: 15 * 60_000, useForecast: true },
      forecastConfig(),
      (at, engine) => {
        if (at % SLOT_MS === 0 && engine.nextSlot !== null) lags.add(slotOf(at) - engine.nextSlot);
      },
    );
    expect([...lags]).toEqual([0]);
  });
});
