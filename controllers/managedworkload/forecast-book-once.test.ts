// What the forecast book tells and learns once: a reset's phase change however its history settles, an anomaly
// across a restart, and activity stamped by a clock ahead of this one.
import { describe, expect, it } from "vitest";
import type { ManagedWorkload } from "../../api/managedworkload.ts";
import {
  createEngine,
  decodeEngine,
  encodeEngine,
  forecastConfig,
  historyAt,
  observeAll,
  slotOf,
  slotStartMs,
} from "../../forecast/index.ts";
import { officeSeries } from "../../forecast/testing.ts";
import { knownActivity } from "./controller.ts";
import { dailyPatternPoints, dailyPatternState } from "./forecast-fixtures.ts";
import { ForecastBook, type ForecastNotice, type PredictionStatus } from "./forecasting.ts";

const minute = 60_000;
const hour = 60 * minute;
const iso = (ms: number) => new Date(ms).toISOString();
const notes = (notices: readonly ForecastNotice[]) => notices.map((n) => n.note);

function awake(
  prediction: PredictionStatus | undefined,
  spec: Partial<ManagedWorkload["spec"]> = {},
  status: Partial<NonNullable<ManagedWorkload["status"]>> = {},
): ManagedWorkload {
  return {
    apiVersion: "napwake.dev/v1alpha1",
    kind: "ManagedWorkload",
    metadata: { name: "web.deployment", namespace: "shop", uid: "u1" },
    spec: { targetRef: { kind: "Deployment", name: "web" }, ...spec },
    status: { phase: "Awake", ...status, ...(prediction ? { prediction } : {}) },
  };
}

describe("a reset that waits for its activity history", () => {
  const now = Date.parse("2026-11-23T09:50:00Z");

  /** A trusted engine whose activity cannot be known for a week, looked at every 5 minutes until it resets. */
  function resetRunning() {
    const book = new ForecastBook({}, { history: true });
    let prediction: PredictionStatus | undefined = {
      phase: "active-weekly",
      confidence: 0.8,
      state: dailyPatternState(now, 14),
    };
    let at = now;
    for (; ; at += 5 * minute) {
      const look = book.look("k", awake(prediction), at, 30 * minute, null, false);
      book.sent("k", look.notices);
      prediction = look.prediction;
      if (prediction?.phase === "learning") break;
    }
    expect(book.wantsHistory("k", at)).toBe(true);
    return { book, at };
  }

  it.each([
    {
      how: "unavailable",
      settle: (book: ForecastBook, at: number) =>
        book.historyUnavailable("k", awake(undefined), "bad_data: parse error", {
          retryable: false,
          nowMs: at,
        }),
    },
    {
      how: "empty",
      settle: (book: ForecastBook) =>
        book.learnHistory(
          "k",
          awake(undefined),
          dailyPatternPoints(now, 14).map((p) => ({ ...p, value: null })),
        ),
    },
  ])(
    "whose history came back $how is saved with the status that shows it, and not told again after a restart",
    ({ settle }) => {
      const { book, at } = resetRunning();
      settle(book, at);
      const next = book.look("k", awake(undefined), at + minute, 30 * minute, null, false);
      book.sent("k", next.notices);
      expect(notes(next.notices).join()).toMatch(/active-weekly -> learning/);
      const shown = next.prediction;
      const saved = decodeEngine(shown?.state ?? "", forecastConfig());
      if (!saved.ok) throw new Error(saved.error.message);
      expect(saved.value.phase).toBe(shown?.phase);

      // Restarted a minute later, the history still unavailable: the reset is not made, nor told, again.
      const restarted = new ForecastBook({}, { history: true });
      const first = restarted.look("k", awake(shown), at + 2 * minute, 30 * minute, null, false);
      restarted.historyUnavailable("k", awake(shown), "bad_data: parse error", {
        retryable: false,
        nowMs: at + 2 * minute,
      });
      const second = restarted.look("k", awake(shown), at + 3 * minute, 30 * minute, null, false);
      expect([...notes(first.notices), ...notes(second.notices)].join()).not.toMatch(
        /active-weekly -> learning/,
      );
    },
  );

  it("tells its phase change when spec.forecast.history turns None before the history came", () => {
    const saved = {
      phase: "active-weekly",
      confidence: 0.8,
      // Saved 7 days and 20 minutes ago: restored, the gap resets it.
      state: dailyPatternState(now - 7 * 24 * hour - 20 * minute, 14),
    };
    const book = new ForecastBook({}, { history: true });
    const first = book.look("k", awake(saved), now, 30 * minute);
    expect(first.prediction?.phase).toBe("learning");
    expect(book.wantsHistory("k", now)).toBe(true);
    book.sent("k", first.notices);
    const told = notes(first.notices);
    let shown = first.prediction;
    for (let t = now + minute; t <= now + 10 * minute; t += minute) {
      const look = book.look("k", awake(saved, { forecast: { history: "None" } }), t, 30 * minute);
      told.push(...notes(look.notices));
      book.sent("k", look.notices);
      shown = look.prediction;
    }
    expect(told.filter((n) => /active-weekly -> learning/.test(n))).toHaveLength(1);
    expect(shown?.savedAt).toBe(iso(now + minute));
  });
});

describe("an activity anomaly and a restart within the hour", () => {
  it("is told once: the slot learned with it is saved at once", () => {
    const config = forecastConfig();
    const office = officeSeries(21, 11).map((p) => ({ ...p, value: Math.min(1, p.value ?? 0) }));
    const engine = observeAll(createEngine(config), office, config).engine;
    const encoded = encodeEngine(engine);
    if (!encoded.ok) throw new Error(encoded.error.message);
    const monday = slotStartMs(engine.nextSlot ?? 0);
    const spec = { forecast: { awakeBudget: "None" as const } };
    let book = new ForecastBook();
    let prediction: PredictionStatus | undefined = { phase: "x", confidence: 0, state: encoded.value };
    const anomalies: string[] = [];
    // A request at 03:05, where the forecast is sure of quiet; the operator restarts at 03:25 (a rollout).
    const request = monday + 3 * hour + 5 * minute;
    for (let t = monday + 2 * hour; t <= monday + 4 * hour; t += minute) {
      if (t === monday + 3 * hour + 25 * minute) book = new ForecastBook();
      const look = book.look(
        "k",
        awake(prediction, spec),
        t,
        30 * minute,
        t >= request ? request : monday - 6 * hour,
      );
      prediction = look.prediction;
      anomalies.push(...look.notices.filter((n) => n.reason === "ActivityAnomaly").map((n) => n.note));
      book.sent("k", look.notices);
    }
    expect(anomalies).toHaveLength(1);
  });
});

describe("one request stamped by a clock 4 minutes ahead", () => {
  it("is learned in the quarter hour it was first known in, not in two", () => {
    const t0 = Date.parse("2026-11-02T10:00:00Z");
    const seenAt = t0 + 12 * minute;
    const stamp = seenAt + 4 * minute; // 10:16, in the next quarter hour
    const book = new ForecastBook();
    let prediction: PredictionStatus | undefined;
    for (let t = t0; t <= t0 + 61 * minute; t += 30_000) {
      const mw = awake(
        prediction,
        { forecast: { history: "None" } },
        t >= seenAt ? { lastActivity: { time: iso(stamp), source: "manual" } } : {},
      );
      const look = book.look("k", mw, t, 30 * minute, knownActivity(mw, undefined, t), true);
      prediction = look.prediction;
      // As the controller does after the decision, with status.lastActivity.
      if (t >= seenAt) book.noteActivity("k", stamp);
    }
    const engine = decodeEngine(prediction?.state ?? "", forecastConfig());
    if (!engine.ok) throw new Error(engine.error.message);
    expect([0, 1, 2].map((i) => historyAt(engine.value, slotOf(t0) + i))).toEqual([1, 0, 0]);
  });
});
