import { describe, expect, it } from "vitest";
import { type ClockInput, decideClock } from "./activity-clock.ts";

const MIN = 60_000;
const NOW = Date.UTC(2024, 0, 1, 12, 0);

const awake = (overrides: Partial<ClockInput> = {}): ClockInput => ({
  nowMs: NOW,
  lastActivityMs: NOW - 5 * MIN,
  awakeSinceMs: NOW - 60 * MIN,
  pausedSinceMs: null,
  paused: false,
  idleWindowMs: 15 * MIN,
  ...overrides,
});

const paused = (overrides: Partial<ClockInput> = {}): ClockInput =>
  awake({ paused: true, pausedSinceMs: NOW - 30 * MIN, lastActivityMs: NOW - 50 * MIN, ...overrides });

const quiet = { vetoPause: false, prewakeAtMs: null, reason: "no activity forecast in the next 15m" };
const busy = {
  vetoPause: true,
  prewakeAtMs: NOW - 10 * MIN,
  reason: "activity forecast at 12:05, within the idle window and the pre-wake lead",
  prewakeReason: "activity forecast at 12:05; woken 10m before it",
};

describe("activity clock", () => {
  it.each([
    {
      name: "stays awake inside the idle window",
      input: awake(),
      action: "stay",
      reason: /idle for 5m of 15m/,
    },
    {
      name: "pauses after the idle window without a forecast",
      input: awake({ lastActivityMs: NOW - 20 * MIN }),
      action: "pause",
      reason: /idle for 20m/,
    },
    {
      name: "pauses after the idle window when the forecast is quiet",
      input: awake({ lastActivityMs: NOW - 20 * MIN, forecast: quiet }),
      action: "pause",
      reason: /idle window/,
    },
    {
      name: "says why the forecast's idle window is shorter with the pause it allows",
      input: awake({
        lastActivityMs: NOW - 11 * MIN,
        idleWindowMs: 10 * MIN,
        forecast: { ...quiet, idleWindowMs: 10 * MIN, idleWindowNote: "shortened: quiet hours" },
      }),
      action: "pause",
      reason: /idle for 11m, at least the idle window of 10m \(shortened: quiet hours\)/,
    },
    {
      name: "does not pause when the forecast vetoes",
      input: awake({ lastActivityMs: NOW - 20 * MIN, forecast: busy }),
      action: "stay",
      reason: /pause vetoed: activity forecast/,
    },
    {
      name: "gives a freshly woken workload a full idle window",
      input: awake({ lastActivityMs: NOW - 90 * MIN, awakeSinceMs: NOW - 2 * MIN }),
      action: "stay",
      reason: /idle for 2m/,
    },
    {
      name: "waits when neither activity nor wake time is known",
      input: awake({ lastActivityMs: null, awakeSinceMs: null }),
      action: "stay",
      reason: /not started/,
    },
    {
      name: "wakes a paused workload on activity since the pause",
      input: paused({ lastActivityMs: NOW - MIN }),
      action: "wake",
      reason: /while paused/,
    },
    {
      name: "pre-wakes a paused workload at prewakeAt",
      input: paused({ forecast: { ...quiet, prewakeAtMs: NOW } }),
      action: "wake",
      reason: /^pre-wake/,
    },
    {
      name: "keeps a paused workload paused until prewakeAt",
      input: paused({ forecast: { ...quiet, prewakeAtMs: NOW + 30 * MIN } }),
      action: "stay",
      reason: /pre-wake scheduled/,
    },
    {
      name: "keeps a paused workload paused without forecast advice (off, learning, suspended), saying so",
      input: paused(),
      action: "stay",
      reason: /^paused; no forecast advice: activity wakes it$/,
    },
    {
      name: "keeps a paused workload paused when no activity is forecast",
      input: paused({ forecast: quiet }),
      action: "stay",
      reason: /^paused; no activity forecast$/,
    },
    {
      name: "says why a pre-wake wakes, not the veto that holds with it",
      input: paused({ forecast: busy }),
      action: "wake",
      reason: /^pre-wake: activity forecast at 12:05; woken 10m before it$/,
    },
    {
      name: "writes a window of under two minutes to the second",
      input: awake({ lastActivityMs: NOW - 50_000, idleWindowMs: 80_000 }),
      action: "stay",
      reason: /^idle for 50s of 1m20s;/,
    },
  ])("$name", ({ input, action, reason }) => {
    const outcome = decideClock(input);
    expect(outcome.action).toBe(action);
    expect(outcome.reason).toMatch(reason);
  });

  it("says when to look again", () => {
    expect(decideClock(awake()).nextCheckAtMs).toBe(NOW + 10 * MIN);
    expect(decideClock(paused({ forecast: { ...quiet, prewakeAtMs: NOW + 30 * MIN } })).nextCheckAtMs).toBe(
      NOW + 30 * MIN,
    );
  });
});
