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
import { dailyPatternPoints, dailyPatternState } from "./forecast-fixtures.ts";
import { closedSlots, ForecastBook, type PredictionStatus, shownPrediction } from "./forecasting.ts";

const t0 = Date.parse("2026-11-02T00:00:00Z");
const hour = 3_600_000;

function mw(spec: Partial<ManagedWorkload["spec"]> = {}, prediction?: PredictionStatus): ManagedWorkload {
  return {
    apiVersion: "napwake.dev/v1alpha1",
    kind: "ManagedWorkload",
    metadata: { name: "web.deployment", namespace: "shop" },
    spec: { targetRef: { kind: "Deployment", name: "web" }, ...spec },
    ...(prediction ? { status: { prediction } } : {}),
  };
}

/**
 * The saved state of three weeks of office hours (08:00-18:00 on working days) learned up to a Monday, and that
 * Monday's start: a forecast that expects activity from 08:00.
 */
function officeUpToMonday(): { state: string; monday: number } {
  const config = forecastConfig();
  const office = officeSeries(21, 11).map((p) => ({ ...p, value: Math.min(1, p.value ?? 0) }));
  const engine = observeAll(createEngine(config), office, config).engine;
  const encoded = encodeEngine(engine);
  if (!encoded.ok) throw new Error(encoded.error.message);
  return { state: encoded.value, monday: slotStartMs(engine.nextSlot ?? 0) };
}

describe("the forecast book", () => {
  it("starts learning a workload it has no state for, and gives no advice while learning", () => {
    const look = new ForecastBook().look("shop/web.deployment", mw(), t0, 30 * 60_000);
    expect(look.advice).toBeNull();
    expect(look.prediction?.phase).toBe("learning");
    expect(look.prediction?.state).toBeDefined();
    expect(look.notices).toEqual([]);
  });

  it("gives nothing, and forgets, when the spec turns forecasting off", () => {
    const book = new ForecastBook();
    book.look("k", mw(), t0, 30 * 60_000);
    const look = book.look("k", mw({ forecast: { enabled: false } }), t0 + hour, 30 * 60_000);
    expect(look).toEqual({ advice: null, prediction: undefined, notices: [] });
  });

  it("sends what it had not yet sent when the spec turns forecasting off, then forgets", () => {
    const book = new ForecastBook();
    const corrupt = mw({}, { phase: "active-daily", confidence: 0.9, state: "{not json" });
    book.look("k", corrupt, t0, 30 * 60_000);
    const off = { ...corrupt, spec: { ...corrupt.spec, forecast: { enabled: false } } };
    const last = book.look("k", off, t0 + 60_000, 30 * 60_000);
    expect(last.advice).toBeNull();
    expect(last.prediction).toBeUndefined();
    expect(last.notices.map((n) => n.reason)).toEqual(["ForecastStateDiscarded"]);
    book.sent("k", last.notices);
    expect(book.look("k", off, t0 + 120_000, 30 * 60_000).notices).toEqual([]);
    // Forgotten: turned on again, it restores from status afresh (and finds the same unreadable state).
    const again = book.look("k", corrupt, t0 + 180_000, 30 * 60_000);
    expect(again.notices.map((n) => n.reason)).toEqual(["ForecastStateDiscarded"]);
  });

  it("does not send the notices of a ManagedWorkload deleted and made again, under the same name, with forecasting off", () => {
    const book = new ForecastBook();
    const corrupt = mw({}, { phase: "active-daily", confidence: 0.9, state: "{not json" });
    expect(
      book.look("k", { ...corrupt, metadata: { ...corrupt.metadata, uid: "old" } }, t0, 30 * 60_000).notices,
    ).toHaveLength(1);
    const remade = mw({ forecast: { enabled: false } });
    const look = book.look(
      "k",
      { ...remade, metadata: { ...remade.metadata, uid: "new" } },
      t0 + 60_000,
      30 * 60_000,
    );
    expect(look.notices).toEqual([]);
  });

  it("learns the hours forecasting was off as gaps, not idleness, when it is turned on before its notices went out", () => {
    const book = new ForecastBook();
    const corrupt = mw({}, { phase: "active-daily", confidence: 0.9, state: "{not json" });
    const paused = (m: ManagedWorkload): ManagedWorkload => ({
      ...m,
      status: { ...m.status, phase: "Paused" },
    });
    book.look("k", paused(corrupt), t0, 30 * 60_000);
    // Turned off before the notice went out (the Event failed): kept, to send it.
    const off = { ...corrupt, spec: { ...corrupt.spec, forecast: { enabled: false } } };
    book.look("k", paused(off), t0 + 60_000, 30 * 60_000);
    // On again three hours later: nobody looked with the forecast on meanwhile.
    const on = book.look("k", paused(corrupt), t0 + 3 * hour, 30 * 60_000, null, false);
    const engine = decodeEngine(on.prediction?.state ?? "", forecastConfig());
    if (!engine.ok) throw new Error(engine.error.message);
    expect(historyAt(engine.value, slotOf(t0 + 90 * 60_000))).toBeNaN();
  });

  it("learns the hours a paused workload's activity could not be known (its queries failed) as gaps, not idleness", () => {
    const start = Date.parse("2026-11-23T09:30:00Z");
    const book = new ForecastBook();
    let prediction: PredictionStatus | undefined = {
      phase: "x",
      confidence: 0,
      state: dailyPatternState(start, 21),
    };
    // Paused, woken by a queue-depth query; Prometheus is down 10:00-12:00, when the queue fills every day.
    for (let at = start; at <= start + 3 * hour; at += 5 * 60_000) {
      const down = at >= start + 30 * 60_000 && at < start + 150 * 60_000;
      const paused: ManagedWorkload = {
        ...mw(),
        status: { phase: "Paused", ...(prediction ? { prediction } : {}) },
      };
      prediction = book.look("k", paused, at, 30 * 60_000, null, !down).prediction;
    }
    const engine = decodeEngine(prediction?.state ?? "", forecastConfig());
    if (!engine.ok) throw new Error(engine.error.message);
    const ten = slotOf(Date.parse("2026-11-23T10:00:00Z"));
    const learned = Array.from({ length: 7 }, (_, i) => historyAt(engine.value, ten + i));
    expect(learned.every(Number.isNaN)).toBe(true);
    // Watched again from 12:00: the quiet slots after are learned as idle.
    expect(historyAt(engine.value, slotOf(Date.parse("2026-11-23T12:15:00Z")))).toBe(0);
  });

  it("discards a saved state it cannot read, says so, and learns again", () => {
    const look = new ForecastBook().look(
      "k",
      mw({}, { phase: "active-daily", confidence: 0.9, state: "{not json" }),
      t0,
      30 * 60_000,
    );
    expect(look.notices.map((n) => n.reason)).toEqual(["ForecastStateDiscarded"]);
    expect(look.prediction?.phase).toBe("learning");
  });

  it("shows a notice again until it is sent: a reconcile that failed before its Events loses none", () => {
    const book = new ForecastBook();
    const corrupt = mw({}, { phase: "active-daily", confidence: 0.9, state: "{not json" });
    const first = book.look("k", corrupt, t0, 30 * 60_000);
    const retried = book.look("k", corrupt, t0 + 60_000, 30 * 60_000);
    expect(retried.notices).toEqual(first.notices);
    book.sent("k", retried.notices);
    expect(book.look("k", corrupt, t0 + 120_000, 30 * 60_000).notices).toEqual([]);
  });

  it("drops only the notices that were sent, keeping those the engine produced since", () => {
    const book = new ForecastBook();
    const saved = mw({}, { phase: "active-daily", confidence: 0.9, state: "{not json" });
    // Paused all along: three quiet days learned without a look in each slot.
    const corrupt: ManagedWorkload = { ...saved, status: { ...saved.status, phase: "Paused" } };
    const discarded = book.look("k", corrupt, t0, 30 * 60_000).notices;
    const later = book.look("k", corrupt, t0 + 3 * 24 * hour + hour, 30 * 60_000).notices;
    expect(later.map((n) => n.reason)).toEqual(["ForecastStateDiscarded", "ForecastPhaseChanged"]);
    book.sent("k", discarded);
    const left = book.look("k", corrupt, t0 + 3 * 24 * hour + 2 * hour, 30 * 60_000).notices;
    expect(left.map((n) => n.reason)).toEqual(["ForecastPhaseChanged"]);
  });

  it("restores a saved state and, from it, vetoes a pause before the daily traffic", () => {
    const now = Date.parse("2026-11-23T09:50:00Z");
    const state = dailyPatternState(now, 21);
    const look = new ForecastBook().look("k", mw({}, { phase: "x", confidence: 0, state }), now, 30 * 60_000);
    expect(look.prediction?.phase).toMatch(/^active/);
    expect(look.advice?.vetoPause).toBe(true);
    expect(look.prediction?.nextActivity).toBe("2026-11-23T10:00:00.000Z");
  });

  it("reads the slots a clock stepped back over by their own time of day: it still vetoes before the daily traffic", () => {
    const idle = 30 * 60_000;
    const book = new ForecastBook();
    const state = dailyPatternState(Date.parse("2026-11-23T12:00:00Z"), 21);
    const noon = book.look(
      "k",
      mw({}, { phase: "x", confidence: 0, state }),
      Date.parse("2026-11-23T12:05:00Z"),
      idle,
    );
    expect(noon.prediction?.phase).toMatch(/^active/);
    // The clock is stepped back to 09:55: the engine has learned up to 12:00, but 10:00 is ahead again.
    const back = book.look("k", mw({}, noon.prediction), Date.parse("2026-11-23T09:55:00Z"), idle);
    expect(back.prediction?.nextActivity).toBe("2026-11-23T10:00:00.000Z");
    expect(back.advice?.vetoPause).toBe(true);
  });

  it.each([
    {
      what: "a trusted 30-minute window (the workload's own) vetoes a pause 15 minutes before traffic",
      spec: { forecast: { idleWindow: "30m" } },
      veto: true,
      window: 30 * 60_000,
    },
    {
      what: "a trusted forecast's window is half the workload's when unset",
      spec: {},
      veto: false,
      window: 15 * 60_000,
    },
    {
      what: "a trusted forecast's window is never longer than the workload's",
      spec: { forecast: { idleWindow: "2h" } },
      veto: true,
      window: 30 * 60_000,
    },
    {
      what: "a trusted forecast's 15-minute window lets it pause then, and hands the window to the clock",
      spec: { forecast: { idleWindow: "15m" } },
      veto: false,
      window: 15 * 60_000,
    },
  ])("$what", ({ spec, veto, window }) => {
    const now = Date.parse("2026-11-23T09:30:00Z");
    const state = dailyPatternState(now, 21);
    // The quiet half hour before the traffic would shorten the window (see the next test): not what is tested here.
    const look = new ForecastBook({ quietProbability: 0 }).look(
      "k",
      mw(spec, { phase: "x", confidence: 0, state }),
      now,
      30 * 60_000,
    );
    expect(look.advice?.vetoPause).toBe(veto);
    expect(look.advice?.idleWindowMs).toBe(window);
  });

  /** The advice at `iso` for a workload with spec.idle.window of `idleMin` minutes, traffic daily from 10:00. */
  const adviceAt = (iso: string, idleMin = 30) =>
    new ForecastBook().look(
      "k",
      mw({}, { phase: "x", confidence: 0, state: dailyPatternState(Date.parse("2026-11-23T09:30:00Z"), 21) }),
      Date.parse(iso),
      idleMin * 60_000,
    ).advice;

  it("says why a trusted forecast's window is shorter, and shorter still where the next two slots are quiet", () => {
    // 09:30 and 09:45 are quiet; at 09:45 the next slot has the traffic.
    expect(adviceAt("2026-11-23T09:30:00Z")?.idleWindowNote).toMatch(
      /expects no activity in this quarter hour or the next/,
    );
    expect(adviceAt("2026-11-23T09:45:00Z")?.idleWindowNote).toBe(
      "the trusted forecast's: spec.forecast.idleWindow, by default half of spec.idle.window and never under a minute",
    );
    // A window no shorter than the workload's own needs no word.
    expect(adviceAt("2026-11-23T09:45:00Z", 1)?.idleWindowNote).toBeUndefined();
  });

  it.each([
    { idle: 30, trusted: 15, quiet: 10 },
    { idle: 6, trusted: 3, quiet: 2 },
    { idle: 3, trusted: 1.5, quiet: 1 },
    { idle: 2, trusted: 1, quiet: 1 },
    { idle: 1, trusted: 1, quiet: 1 },
  ])(
    "takes a spec.idle.window of $idle min to $trusted trusted and $quiet in quiet hours (two thirds, never under a minute)",
    ({ idle, trusted, quiet }) => {
      expect(adviceAt("2026-11-23T09:45:00Z", idle)?.idleWindowMs).toBe(trusted * 60_000);
      expect(adviceAt("2026-11-23T09:30:00Z", idle)?.idleWindowMs).toBe(quiet * 60_000);
    },
  );

  it("keeps the trusted window spec.forecast.idleWindow sets, quiet hours or not", () => {
    const now = Date.parse("2026-11-23T09:30:00Z");
    const state = dailyPatternState(now, 21);
    const look = new ForecastBook().look(
      "k",
      mw({ forecast: { idleWindow: "15m" } }, { phase: "x", confidence: 0, state }),
      now,
      30 * 60_000,
    );
    expect(look.advice?.idleWindowMs).toBe(15 * 60_000);
  });

  it("keeps its advice suspended across a restart: slots nobody watched neither end the silence nor add to it", () => {
    // The Monday is a holiday, the workload paused all day.
    const { state, monday } = officeUpToMonday();
    const paused = (prediction: PredictionStatus | undefined): ManagedWorkload => ({
      ...mw({ forecast: { awakeBudget: "None" } }),
      status: { phase: "Paused", ...(prediction ? { prediction } : {}) },
    });
    const lastActivity = monday - 6 * hour;
    let prediction: PredictionStatus | undefined = { phase: "x", confidence: 0, state };
    const book = new ForecastBook();
    let advice: ReturnType<ForecastBook["look"]>["advice"] = null;
    for (let t = monday; t <= monday + 10 * hour + 5 * 60_000; t += 5 * 60_000) {
      ({ advice, prediction } = book.look("k", paused(prediction), t, 30 * 60_000, lastActivity));
    }
    expect(advice).toBeNull();
    // Saved when the suspension began (08:45) and hourly since.
    expect(prediction?.savedAt).toBe(new Date(monday + 9 * hour + 45 * 60_000).toISOString());
    // Restarted two slots after the hourly save: those slots are gaps to the restored engine.
    const restarted = new ForecastBook().look(
      "k",
      paused(prediction),
      monday + 10 * hour + 20 * 60_000,
      30 * 60_000,
      lastActivity,
    );
    expect(restarted.advice).toBeNull();
  });

  describe("saves its state when the advice is suspended or resumes, so a restart within the hour keeps it", () => {
    // The workload is awake, looked at every 30 s.
    const { state, monday } = officeUpToMonday();
    const awake = (prediction: PredictionStatus | undefined): ManagedWorkload => ({
      ...mw({ forecast: { awakeBudget: "None" } }),
      status: { phase: "Awake", ...(prediction ? { prediction } : {}) },
    });
    /** Looks from 07:00 with activity from `activityFrom` on, until `stop` says so; the book and the last look. */
    function run(activityFrom: number, stop: (look: ReturnType<ForecastBook["look"]>) => boolean) {
      const book = new ForecastBook();
      let prediction: PredictionStatus | undefined = { phase: "x", confidence: 0, state };
      for (let t = monday + 7 * hour; t <= monday + 12 * hour; t += 30_000) {
        const activity = t >= activityFrom ? t : monday - 6 * hour;
        const look = book.look("k", awake(prediction), t, 30 * 60_000, activity);
        prediction = look.prediction;
        book.sent("k", look.notices);
        if (stop(look)) return { t, prediction };
      }
      throw new Error("the look awaited never came");
    }

    it("a restart ten minutes into a suspension on a holiday finds it suspended, and says nothing", () => {
      const { t, prediction } = run(Number.POSITIVE_INFINITY, (look) => !!look.prediction?.adviceSuspended);
      const at = t + 10 * 60_000;
      const restarted = new ForecastBook().look("k", awake(prediction), at, 30 * 60_000, monday - 6 * hour);
      expect(restarted.advice).toBeNull();
      expect(restarted.prediction?.adviceSuspended?.since).toBe(prediction?.adviceSuspended?.since);
      expect(restarted.notices).toEqual([]);
    });

    it("shows the pre-wake to come until its advice is suspended, and none while it is: none would come", () => {
      expect(run(Number.POSITIVE_INFINITY, () => true).prediction?.nextPrewake).toBeDefined();
      const { prediction } = run(Number.POSITIVE_INFINITY, (look) => !!look.prediction?.adviceSuspended);
      expect(prediction?.nextPrewake).toBeUndefined();
    });

    it("a restart six minutes after the advice resumed (a late start) finds it resumed, and says nothing", () => {
      const late = monday + 9 * hour + 20 * 60_000;
      const { t, prediction } = run(late, (look) =>
        look.notices.some((n) => n.reason === "ForecastAdviceResumed"),
      );
      const at = t + 6 * 60_000;
      const restarted = new ForecastBook().look("k", awake(prediction), at, 30 * 60_000, at);
      expect(restarted.prediction?.adviceSuspended).toBeUndefined();
      expect(restarted.advice).not.toBeNull();
      expect(restarted.notices).toEqual([]);
    });
  });

  it("says its advice resumed because quiet hours passed, when the holiday's evening comes without activity", () => {
    const { state, monday } = officeUpToMonday();
    const book = new ForecastBook();
    let prediction: PredictionStatus | undefined = { phase: "x", confidence: 0, state };
    const notes: string[] = [];
    for (let t = monday + 7 * hour; t <= monday + 21 * hour; t += 60_000) {
      const awake = {
        ...mw({ forecast: { awakeBudget: "None" } }),
        status: { phase: "Awake" as const, prediction },
      };
      const look = book.look("k", awake, t, 30 * 60_000, monday - 6 * hour);
      prediction = look.prediction;
      notes.push(...look.notices.map((n) => n.note));
      book.sent("k", look.notices);
    }
    expect(notes.at(-1)).toBe(
      "forecast advice resumed: an hour the forecast calls quiet passed without activity, so the silence no longer " +
        "speaks against it; it vetoes pauses and pre-wakes again",
    );
  });

  it("says when its advice is suspended on a holiday and when it resumes, once each, and not again after a restart", () => {
    // The Monday is a holiday.
    const { state, monday } = officeUpToMonday();
    const awake = (prediction: PredictionStatus | undefined): ManagedWorkload => ({
      ...mw({ forecast: { awakeBudget: "None" } }),
      status: { phase: "Awake", ...(prediction ? { prediction } : {}) },
    });
    let book = new ForecastBook();
    let prediction: PredictionStatus | undefined = { phase: "x", confidence: 0, state };
    const notices: string[] = [];
    const lookAt = (t: number, activityMs: number) => {
      const look = book.look("k", awake(prediction), t, 30 * 60_000, activityMs);
      prediction = look.prediction;
      notices.push(...look.notices.map((n) => n.reason));
      book.sent("k", look.notices);
      return look;
    };
    let suspendedLook: ReturnType<ForecastBook["look"]> | undefined;
    for (let t = monday + 7 * hour; t <= monday + 11 * hour; t += 60_000) {
      const look = lookAt(t, monday - 6 * hour);
      if (look.prediction?.adviceSuspended) suspendedLook ??= look;
    }
    expect(suspendedLook?.advice).toBeNull();
    expect(suspendedLook?.prediction?.phase).toMatch(/^active/);
    const since = prediction?.adviceSuspended?.since;
    expect(since).toBe(suspendedLook?.prediction?.adviceSuspended?.since);
    expect(prediction?.adviceSuspended?.message).toMatch(/clock decides alone, with spec.idle.window/);
    expect(notices).toEqual(["ForecastAdviceSuspended"]);
    // Restarted: the suspension status shows was announced already.
    book = new ForecastBook();
    lookAt(monday + 11 * hour + 60_000, monday - 6 * hour);
    expect(prediction?.adviceSuspended?.since).toBe(since);
    expect(notices).toEqual(["ForecastAdviceSuspended"]);
    // Activity comes back: the advice resumes, and says so once.
    const notes: string[] = [];
    for (let t = monday + 11 * hour + 2 * 60_000; t <= monday + 12 * hour; t += 60_000) {
      notes.push(...lookAt(t, t).notices.map((n) => n.note));
    }
    expect(prediction?.adviceSuspended).toBeUndefined();
    expect(notices).toEqual(["ForecastAdviceSuspended", "ForecastAdviceResumed"]);
    expect(notes).toEqual([
      `forecast advice resumed: activity came back (in the quarter hour from ${new Date(monday + 11 * hour).toISOString()}); it vetoes pauses and pre-wakes again`,
    ]);
  });

  it.each([
    {
      what: "paused through a Monday, the night after and the Tuesday",
      untilH: 36,
      resumedAtH: Number.POSITIVE_INFINITY,
    },
    { what: "paused until 11:00 on the Monday, then resumed and busy", untilH: 12, resumedAtH: 11 },
  ])(
    "sends no suspension Events for a workload paused by hand, which the forecast leaves alone, but shows it: $what",
    ({ untilH, resumedAtH }) => {
      const { state, monday } = officeUpToMonday();
      const pausedByHand = {
        type: "Paused",
        status: "True" as const,
        reason: "Requested",
        message: "paused from 3 replicas: kubectl napwake pause",
        lastTransitionTime: new Date(monday - 6 * hour).toISOString(),
      };
      const workload = (byHand: boolean, prediction: PredictionStatus | undefined): ManagedWorkload => ({
        ...mw({ forecast: { awakeBudget: "None" } }),
        status: {
          phase: byHand ? "Paused" : "Awake",
          ...(byHand ? { conditions: [pausedByHand] } : {}),
          ...(prediction ? { prediction } : {}),
        },
      });
      const book = new ForecastBook();
      let prediction: PredictionStatus | undefined = { phase: "x", confidence: 0, state };
      const notices: string[] = [];
      let suspended = false;
      for (let t = monday + 7 * hour; t <= monday + untilH * hour; t += 5 * 60_000) {
        const byHand = t < monday + resumedAtH * hour;
        const activity = byHand ? monday - 6 * hour : t;
        const look = book.look("k", workload(byHand, prediction), t, 30 * 60_000, activity);
        prediction = look.prediction;
        suspended ||= prediction?.adviceSuspended !== undefined;
        notices.push(...look.notices.map((n) => n.reason));
        book.sent("k", look.notices);
      }
      expect(suspended).toBe(true);
      expect(prediction?.adviceSuspended).toBeUndefined();
      expect(notices.filter((n) => n.startsWith("ForecastAdvice"))).toEqual([]);
    },
  );

  it("flags activity in a quarter hour it was sure would be quiet, once, and not the missing activity of a holiday", () => {
    const { state, monday } = officeUpToMonday();
    const book = new ForecastBook();
    let prediction: PredictionStatus | undefined = { phase: "x", confidence: 0, state };
    const anomalies: string[] = [];
    // A request at 03:05 on the Monday, and nothing else all morning: a holiday.
    for (let t = monday + 2 * hour; t <= monday + 11 * hour; t += 5 * 60_000) {
      const activity =
        t >= monday + 3 * hour + 5 * 60_000 ? monday + 3 * hour + 5 * 60_000 : monday - 6 * hour;
      const look = book.look(
        "k",
        mw({ forecast: { awakeBudget: "None" } }, prediction),
        t,
        30 * 60_000,
        activity,
      );
      prediction = look.prediction;
      anomalies.push(...look.notices.filter((n) => n.reason === "ActivityAnomaly").map((n) => n.note));
      book.sent("k", look.notices);
    }
    expect(anomalies).toEqual([
      expect.stringMatching(
        new RegExp(
          `^activity in the quarter hour from ${new Date(monday + 3 * hour).toISOString()}, which the forecast ` +
            "expected to be quiet \\(0\\.\\d\\d expected, interval 0\\.\\d\\d\\.\\.0\\.\\d\\d\\): counted as activity; ",
        ),
      ),
    ]);
    expect(prediction?.adviceSuspended).toBeDefined();
  });

  it("shows the same prediction at every look within a slot where activity is forecast, so status is not rewritten", () => {
    const now = Date.parse("2026-11-23T10:05:00Z");
    const book = new ForecastBook();
    const status = mw({}, { phase: "x", confidence: 0, state: dailyPatternState(now, 21) });
    const first = book.look("k", status, now, 30 * 60_000);
    const later = book.look("k", status, now + 30_000, 30 * 60_000);
    expect(first.advice?.vetoPause).toBe(true);
    expect(later.prediction).toEqual(first.prediction);
    expect(later.advice?.reason).toBe(first.advice?.reason);
  });

  it("starts afresh for a ManagedWorkload deleted and made again under the same name", () => {
    const now = Date.parse("2026-11-23T10:05:00Z");
    const book = new ForecastBook();
    const learned = mw({}, { phase: "x", confidence: 0, state: dailyPatternState(now, 21) });
    const first = book.look(
      "k",
      { ...learned, metadata: { ...learned.metadata, uid: "one" } },
      now,
      30 * 60_000,
    );
    expect(first.prediction?.phase).not.toBe("learning");
    const again = book.look(
      "k",
      { ...mw(), metadata: { ...mw().metadata, uid: "two" } },
      now + 60_000,
      30 * 60_000,
    );
    expect(again.prediction?.phase).toBe("learning");
  });

  it("keeps the workload's own window while the forecast is still learning", () => {
    const look = new ForecastBook().look("k", mw({ forecast: { idleWindow: "15m" } }), t0, 30 * 60_000);
    expect(look.advice).toBeNull();
  });

  it("counts activity from just before a slot closed in that slot, when the next decision first learns of it", () => {
    const withActivity = new ForecastBook();
    const without = new ForecastBook();
    for (const book of [withActivity, without]) book.look("k", mw(), t0, 30 * 60_000);
    // A request at 00:14:59, first seen by the decision at 00:15:01.
    withActivity.look("k", mw(), t0 + 15 * 60_000 + 1_000, 30 * 60_000, t0 + 15 * 60_000 - 1_000);
    without.look("k", mw(), t0 + 15 * 60_000 + 1_000, 30 * 60_000, null);
    // The state is saved hourly: an hour on, what each learned is in it.
    const later = (book: ForecastBook) =>
      book.look("k", mw(), t0 + 61 * 60_000, 30 * 60_000).prediction?.state;
    expect(later(withActivity)).not.toBe(later(without));
  });

  it("learns an active slot from the activity it was told of", () => {
    const book = new ForecastBook();
    book.look("k", mw(), t0, 30 * 60_000);
    book.noteActivity("k", t0 + 60_000);
    const later = book.look("k", mw(), t0 + 20 * 60_000, 30 * 60_000);
    const state = JSON.parse(later.prediction?.state ?? "{}") as Record<string, unknown>;
    expect(state).toBeTypeOf("object");
    // The closed slot was learned: the engine is one slot further.
    expect(later.prediction?.phase).toBe("learning");
  });

  describe("restoring a saved state", () => {
    const now = Date.parse("2026-11-23T09:45:00Z");

    it("does not act on a state saved a month ago: discarded, without catching up slot by slot", () => {
      const old = now - 30 * 24 * hour;
      const state = dailyPatternState(old, 21);
      const look = new ForecastBook().look(
        "k",
        mw({}, { phase: "x", confidence: 0, state }),
        now,
        30 * 60_000,
      );
      expect(look.advice).toBeNull();
      expect(look.prediction?.phase).toBe("learning");
      expect(look.notices.map((n) => n.reason)).toEqual(["ForecastStateDiscarded"]);
      expect(look.notices[0]?.note).toMatch(/too long ago to go on from/);
    });

    it.each([
      { after: "the longest gap the engine bridges", extra: 0, discarded: false },
      { after: "one slot more", extra: 1, discarded: true },
    ])(
      "goes on from a state learned up to $after before the slot that just closed and its activity; discarded: $discarded",
      ({ extra, discarded }) => {
        const config = forecastConfig();
        const savedSlot = slotOf(now) - config.maxGapSlots - 1 - extra;
        const state = dailyPatternState(slotStartMs(savedSlot), 21);
        const look = new ForecastBook().look(
          "k",
          mw({ forecast: { history: "None" } }, { phase: "x", confidence: 0, state }),
          now + 30_000,
          30 * 60_000,
          now - 60_000,
        );
        // (The slot that just closed may be news of its own: activity where the pattern had none.)
        expect(look.notices.some((n) => n.reason === "ForecastStateDiscarded")).toBe(discarded);
      },
    );

    it("discards a state learned ahead of this operator's clock, and says so", () => {
      const state = dailyPatternState(now + 2 * 24 * hour, 21);
      const look = new ForecastBook().look(
        "k",
        mw({}, { phase: "x", confidence: 0, state }),
        now,
        30 * 60_000,
      );
      expect(look.prediction?.phase).toBe("learning");
      expect(look.notices.map((n) => n.reason)).toEqual(["ForecastStateDiscarded"]);
      expect(look.notices[0]?.note).toMatch(/ahead of now/);
    });

    it("saves again on the hour when the saved time was ahead of the clock", () => {
      const state = dailyPatternState(now, 21);
      const status = { phase: "x", confidence: 0, state, savedAt: "2099-01-01T00:00:00Z" };
      const book = new ForecastBook();
      book.look("k", mw({}, status), now, 30 * 60_000);
      const later = book.look("k", mw({}, status), now + hour + 60_000, 30 * 60_000);
      expect(later.prediction?.savedAt).toBe(new Date(now + hour + 60_000).toISOString());
    });

    it("takes up a state saved elsewhere since it was restored, rather than overwriting it an hour later", () => {
      const config = forecastConfig();
      const stateUpTo = (untilMs: number) => {
        const encoded = encodeEngine(
          observeAll(createEngine(config), dailyPatternPoints(untilMs, 21), config).engine,
        );
        if (!encoded.ok) throw new Error(encoded.error.message);
        return encoded.value;
      };
      const at = (time: string) => Date.parse(`2026-11-23T${time}Z`);
      const status = (until: string, savedAt: string) => ({
        phase: "active-weekly",
        confidence: 0.9,
        state: stateUpTo(at(until)),
        savedAt: new Date(at(savedAt)).toISOString(),
      });
      const older = status("10:00:00", "10:05:00");
      const newer = status("11:00:00", "11:05:00");
      const book = new ForecastBook();
      // A new leader's first look reads a cache one save behind; the old leader's last save lands after it.
      book.look("k", mw({}, older), at("11:06:00"), 30 * 60_000);
      let shown: PredictionStatus | undefined;
      for (let t = at("11:07:00"); t <= at("12:10:00"); t += 60_000) {
        shown = book.look("k", mw({}, newer), t, 30 * 60_000).prediction;
      }
      const saved = decodeEngine(shown?.state ?? "", config);
      if (!saved.ok) throw new Error(saved.error.message);
      // The newer state learned 10:00-10:45 as active (the daily traffic); overwritten, they would be gaps.
      expect(historyAt(saved.value, slotOf(at("10:15:00")))).toBe(1);
      // Its own save, shown by a cache behind it, is not taken for one made elsewhere.
      const after = book.look("k", mw({}, newer), at("12:11:00"), 30 * 60_000).prediction;
      expect(after?.state).toBe(shown?.state);
    });

    it.each([
      { savedAt: "in the past", given: new Date(now - 2 * 60_000).toISOString() },
      {
        savedAt: "ahead of the clock (a replica whose clock ran ahead)",
        given: new Date(now + 2 * 60_000).toISOString(),
      },
      { savedAt: "unreadable (read as now)", given: "yesterday-ish" },
    ])(
      "does not take its own save, shown by a cache a write behind, for one made elsewhere: restored from a savedAt $savedAt",
      ({ given }) => {
        const book = new ForecastBook();
        const spec = { forecast: { history: "None" as const } };
        let status: PredictionStatus = {
          phase: "x",
          confidence: 0,
          state: dailyPatternState(now, 21),
          savedAt: given,
        };
        status = book.look("k", mw(spec, status), now, 30 * 60_000, now).prediction ?? status;
        // Every minute, status following each look and the workload active, up to the engine's first own save
        // after the slot checked below has closed (a slot learned with an anomaly is saved at once).
        let t = now + 60_000;
        for (; ; t += 60_000) {
          const look = book.look("k", mw(spec, status), t, 30 * 60_000, t);
          if (look.prediction?.savedAt !== status.savedAt && t >= now + 30 * 60_000) break;
          status = look.prediction ?? status;
        }
        // The save's status write has not landed (or failed): the cache shows the status from before it.
        const lagging = book.look("k", mw(spec, status), t + 60_000, 30 * 60_000, t + 60_000).prediction;
        expect(lagging?.savedAt).toBe(new Date(t).toISOString());
        const engine = decodeEngine(lagging?.state ?? "", forecastConfig());
        expect(engine.ok && historyAt(engine.value, slotOf(now + 15 * 60_000))).toBe(1);
      },
    );

    it("reads an unreadable savedAt as now instead of failing every reconcile", () => {
      const state = dailyPatternState(now, 21);
      const status = { phase: "x", confidence: 0, state, savedAt: "yesterday-ish" };
      const book = new ForecastBook();
      const first = book.look("k", mw({}, status), now, 30 * 60_000);
      expect(first.prediction?.savedAt).toBe(new Date(now).toISOString());
      expect(() => book.look("k", mw({}, status), now + 2 * hour, 30 * 60_000)).not.toThrow();
    });
  });
});

describe("the pre-wake status shows", () => {
  const saved = Date.parse("2026-11-23T03:00:00Z");
  it.each([
    {
      what: "none while the forecast is in shadow: it would not be made",
      days: 3,
      phase: "shadow",
      shown: false,
    },
    { what: "the one to come once the forecast is trusted", days: 21, phase: "active-weekly", shown: true },
  ])("$what", ({ days, phase, shown }) => {
    const prediction = {
      phase: "x",
      confidence: 0,
      state: dailyPatternState(saved, days),
      savedAt: new Date(saved).toISOString(),
    };
    const look = new ForecastBook().look("k", mw({}, prediction), saved + 60_000, 30 * 60_000);
    expect(look.prediction?.phase).toBe(phase);
    expect(look.prediction?.nextActivity).toBe("2026-11-23T10:00:00.000Z");
    expect(look.prediction?.nextPrewake).toBe(shown ? "2026-11-23T09:50:00.000Z" : undefined);
  });
});

describe("the slots learned between two looks", () => {
  const open = { openSlot: 100, openWatched: true, active: false, pausedAtLook: false };
  it.each([
    {
      what: "the watched open slot without activity is 0, an unwatched awake stretch a gap",
      entry: open,
      activitySlot: null,
      points: [
        { slot: 100, value: 0 },
        { slot: 103, value: null },
      ],
    },
    {
      what: "activity known in a slot between the looks is counted there",
      entry: open,
      activitySlot: 102,
      points: [
        { slot: 100, value: 0 },
        { slot: 102, value: 1 },
        { slot: 103, value: null },
      ],
    },
    {
      what: "a workload paused at the last look saw no activity until the next",
      entry: { ...open, active: true, pausedAtLook: true },
      activitySlot: null,
      points: [
        { slot: 100, value: 1 },
        { slot: 101, value: 0 },
        { slot: 102, value: 0 },
        { slot: 103, value: 0 },
      ],
    },
    {
      what: "the slots since a restored state was saved are gaps",
      entry: { ...open, openWatched: false },
      activitySlot: null,
      points: [{ slot: 103, value: null }],
    },
  ])("$what", ({ entry, activitySlot, points }) => {
    expect(closedSlots(entry, 104, activitySlot)).toEqual(points);
  });

  it.each([
    {
      what: "a slot only checks that could not measure looked at is a gap, not idle",
      watched: [false, false],
      value: null,
    },
    { what: "one complete measurement in the slot makes it idle", watched: [false, true], value: 0 },
  ])("$what", ({ watched, value }) => {
    const book = new ForecastBook();
    const slotMs = slotStartMs(slotOf(t0) + 1);
    book.look("k", mw(), slotMs - 60_000, 30 * 60_000);
    watched.forEach((w, i) => {
      book.look("k", mw(), slotMs + i * 60_000, 30 * 60_000, null, w);
    });
    const state = book.look("k", mw(), slotMs + 2 * hour, 30 * 60_000).prediction?.state ?? "";
    const engine = decodeEngine(state, forecastConfig());
    if (!engine.ok) throw new Error(engine.error.message);
    const learned = historyAt(engine.value, slotOf(slotMs));
    expect(Number.isNaN(learned) ? null : learned).toBe(value);
  });

  it("learns nothing while the open slot has not closed", () => {
    expect(closedSlots(open, 100, null)).toEqual([]);
  });
});

describe("the awake budget in the forecast book", () => {
  const now = Date.parse("2026-11-23T09:45:00Z");
  const state = dailyPatternState(now, 21);
  const window = 30 * 60_000;
  const budgeted = { forecast: { idleWindow: "15m" } };
  type Phase = NonNullable<ManagedWorkload["status"]>["phase"];

  /** Looks every 30 s for `minutes`, the workload in `phase`, its latest activity `activityAgoMs` before each look. */
  function lookFor(
    spec: Partial<ManagedWorkload["spec"]>,
    phase: Phase,
    minutes: number,
    activityAgoMs: number | null,
    prediction: PredictionStatus = { phase: "x", confidence: 0, state },
    createdAgoMs: number | null = null,
  ) {
    const book = new ForecastBook();
    const base = mw(spec, prediction);
    const created =
      createdAgoMs === null ? {} : { creationTimestamp: new Date(now - createdAgoMs).toISOString() };
    const workload: ManagedWorkload = {
      ...base,
      metadata: { ...base.metadata, ...created },
      status: { phase, prediction },
    };
    let last: PredictionStatus | undefined;
    for (let at = now; at <= now + minutes * 60_000; at += 30_000) {
      last = book.look(
        "k",
        workload,
        at,
        window,
        activityAgoMs === null ? null : at - activityAgoMs,
      ).prediction;
    }
    return last;
  }

  it.each([
    {
      name: "raises the threshold while awake where the idle window alone would not be",
      phase: "Awake",
      ago: 2 * hour,
      moves: "up",
    },
    {
      name: "lowers it while paused where the idle window alone would be awake",
      phase: "Paused",
      ago: 60_000,
      moves: "down",
    },
    {
      name: "keeps it while awake as the idle window alone would be",
      phase: "Awake",
      ago: 60_000,
      moves: "nowhere",
    },
    {
      name: "raises it while awake with no activity known since its adoption, from which the clock alone counts",
      phase: "Awake",
      ago: null,
      created: 2 * hour,
      moves: "up",
    },
    {
      name: "accounts nothing while neither activity nor adoption is known",
      phase: "Awake",
      ago: null,
      moves: "nowhere",
    },
    {
      name: "accounts nothing in a dry run, which never pauses",
      phase: "DryRun",
      ago: 2 * hour,
      moves: "nowhere",
    },
    {
      name: "accounts nothing for a workload it does not manage",
      phase: "Unmanaged",
      ago: 2 * hour,
      moves: "nowhere",
    },
  ] as const)("$name", (row) => {
    const { phase, ago, moves } = row;
    const created = "created" in row ? row.created : null;
    // Two hours and a minute: the threshold shown is refreshed with the hourly save.
    const threshold =
      lookFor(budgeted, phase, 121, ago, { phase: "x", confidence: 0, state }, created)?.activityThreshold ??
      Number.NaN;
    if (moves === "up") expect(threshold).toBeGreaterThan(0.35);
    if (moves === "down") expect(threshold).toBeLessThan(0.35);
    if (moves === "nowhere") expect(threshold).toBe(0.35);
  });

  it("with no activity known, counts the idle window from the workload's return under Napwake's watch", () => {
    // Adopted three hours ago, let go, and back under Napwake's watch as the looks begin (Paused condition Active).
    const run = (returned: boolean) => {
      const book = new ForecastBook();
      const prediction = { phase: "x", confidence: 0, state };
      const base = mw(budgeted, prediction);
      const active = {
        type: "Paused",
        status: "False" as const,
        reason: "Active",
        message: "the workload is awake",
        lastTransitionTime: new Date(returned ? now : now - 3 * hour).toISOString(),
      };
      const workload: ManagedWorkload = {
        ...base,
        metadata: { ...base.metadata, creationTimestamp: new Date(now - 3 * hour).toISOString() },
        status: { phase: "Awake", prediction, conditions: [active] },
      };
      let last: PredictionStatus | undefined;
      for (let at = now; at <= now + 61 * 60_000; at += 30_000)
        last = book.look("k", workload, at, window, null).prediction;
      return last?.activityThreshold ?? Number.NaN;
    };
    expect(run(true)).toBeLessThan(run(false));
  });

  it.each(["ActivityUnknown", "HeldElsewhere", "PauseUndone"])(
    "accounts nothing while a pause is blocked (%s), as it would be for the idle window alone",
    (reason) => {
      const book = new ForecastBook();
      const prediction = { phase: "x", confidence: 0, state };
      const condition = {
        type: "Paused",
        status: "False" as const,
        reason,
        message: "not pausing",
        lastTransitionTime: "",
      };
      const workload: ManagedWorkload = {
        ...mw(budgeted, prediction),
        status: { phase: "Awake", prediction, conditions: [condition] },
      };
      let last: PredictionStatus | undefined;
      for (let at = now; at <= now + 121 * 60_000; at += 30_000) {
        last = book.look("k", workload, at, window, at - 2 * hour).prediction;
      }
      expect(last?.activityThreshold).toBe(0.35);
    },
  );

  it("accounts a stretch once when the clock steps back over it", () => {
    const run = (times: number[]) => {
      const book = new ForecastBook();
      const prediction = { phase: "x", confidence: 0, state };
      const workload: ManagedWorkload = {
        ...mw(budgeted, prediction),
        status: { phase: "Awake", prediction },
      };
      let last: PredictionStatus | undefined;
      for (const at of times) last = book.look("k", workload, at, window, at - 2 * hour).prediction;
      return last?.activityThreshold;
    };
    const looks = (fromMin: number, toMin: number) =>
      Array.from({ length: (toMin - fromMin) * 2 + 1 }, (_, i) => now + fromMin * 60_000 + i * 30_000);
    const steady = run(looks(0, 121));
    const steppedBack = run([...looks(0, 60), ...looks(30, 121)]);
    expect(steady).toBeGreaterThan(0.35);
    expect(steppedBack).toBe(steady);
  });

  it("steers by default: the trusted window is then half the workload's", () => {
    expect(lookFor({}, "Awake", 121, 2 * hour)?.activityThreshold).toBeGreaterThan(0.35);
  });

  it.each(["Pausing", "Resuming"] as const)("counts %s as awake", (phase) => {
    expect(lookFor(budgeted, phase, 121, 2 * hour)?.activityThreshold).toBeGreaterThan(0.35);
  });

  it("shows the threshold with the hourly save, not at every move", () => {
    expect(lookFor(budgeted, "Awake", 50, 2 * hour)?.activityThreshold).toBe(0.35);
    expect(lookFor(budgeted, "Awake", 61, 2 * hour)?.activityThreshold).toBeGreaterThan(0.35);
  });

  it.each([
    {
      name: "when the budget is off",
      spec: { forecast: { idleWindow: "15m", awakeBudget: "None" as const } },
    },
    {
      name: "with a trusted idle window set longer than the workload's",
      spec: { forecast: { idleWindow: "1h" } },
    },
    {
      name: "with a trusted idle window as long as the workload's",
      spec: { forecast: { idleWindow: "30m" } },
    },
  ])("has no threshold to show, and keeps the fixed chance, $name", ({ spec }) => {
    expect(lookFor(spec, "Awake", 121, 2 * hour)?.activityThreshold).toBeUndefined();
    // A threshold left in status from before is not used either: the forecast still vetoes at 35%.
    const half = {
      phase: "x",
      confidence: 0,
      state: dailyPatternState(now, 21, 10, 12, true),
      activityThreshold: 0.9,
    };
    const at = now + 5 * 60_000; // the 10:00 traffic is within even a 15-minute window
    expect(new ForecastBook().look("k", mw(spec, half), at, window, at).advice?.vetoPause).toBe(true);
  });

  it("accounts nothing while the forecast is learning", () => {
    const learning = lookFor(budgeted, "Awake", 121, 2 * hour, { phase: "learning", confidence: 0 });
    expect(learning?.phase).toBe("learning");
    expect(learning?.activityThreshold).toBe(0.35);
  });

  it.each([
    { name: "restores the threshold from status", saved: 0.6, restored: 0.6 },
    { name: "starts from the default when the saved one is out of bounds", saved: 7, restored: 0.35 },
    { name: "starts from the default when the saved one is not a number", saved: "high", restored: 0.35 },
  ])("$name", ({ saved, restored }) => {
    const prediction = { phase: "x", confidence: 0, state, activityThreshold: saved } as PredictionStatus;
    const look = new ForecastBook().look("k", mw(budgeted, prediction), now, window, now);
    expect(look.prediction?.activityThreshold).toBe(restored);
  });

  it("stops vetoing a pause before traffic the forecast is less sure of than the steered threshold", () => {
    const half = { phase: "x", confidence: 0, state: dailyPatternState(now, 21, 10, 12, true) };
    const at = now + 5 * 60_000; // the 10:00 traffic is within the 15-minute window
    const look = (prediction: PredictionStatus) =>
      new ForecastBook().look("k", mw(budgeted, prediction), at, window, at);
    const sure = look(half);
    const doubtful = look({ ...half, activityThreshold: 0.9 });
    expect(sure.advice?.vetoPause).toBe(true);
    expect(doubtful.advice?.vetoPause ?? false).toBe(false);
  });
  it("does not charge the forecast for the idle window after a sync loop set a pause back", () => {
    // Argo CD set a pause back at 09:45: awake since (UndoneByGitOps), then a pause held off (PauseUndone).
    const book = new ForecastBook();
    let prediction: PredictionStatus | undefined = { phase: "x", confidence: 0, state };
    for (let at = now; at <= now + hour; at += 30_000) {
      const reason = at < now + 15 * 60_000 ? "UndoneByGitOps" : "PauseUndone";
      const undone: ManagedWorkload = {
        ...mw(budgeted),
        metadata: { ...mw().metadata, creationTimestamp: new Date(now - 5 * hour).toISOString() },
        status: {
          phase: "Awake",
          ...(prediction ? { prediction } : {}),
          pausesUndone: {
            count: 1,
            lastAt: new Date(now).toISOString(),
            tool: "argocd",
            manager: "argocd-controller",
          },
          conditions: [
            {
              type: "Paused",
              status: "False",
              reason,
              message: "",
              lastTransitionTime: new Date(now).toISOString(),
            },
          ],
        },
      };
      prediction = book.look("k", undone, at, window, now - 2 * hour).prediction;
    }
    expect(prediction?.activityThreshold).toBe(0.35);
  });

  it.each([
    { threshold: 0.35, suspended: true },
    { threshold: 0.6, suspended: true },
  ])(
    "judges a silent morning at the fixed chance, not at the steered $threshold (decision 5)",
    ({ threshold, suspended }) => {
      // A chance of about a half from 10:00 to 12:00, and nothing comes; the workload sits paused.
      const half = { phase: "x", confidence: 0, state: dailyPatternState(now, 21, 10, 12, true) };
      const book = new ForecastBook();
      let prediction: PredictionStatus | undefined = { ...half, activityThreshold: threshold };
      let seen = false;
      for (let t = now; t <= now + 3 * hour; t += 30_000) {
        const paused: ManagedWorkload = {
          ...mw(budgeted),
          status: { phase: "Paused" as const, ...(prediction ? { prediction } : {}) },
        };
        prediction = book.look("k", paused, t, window, now - 12 * hour).prediction;
        seen ||= prediction?.adviceSuspended !== undefined;
      }
      expect(prediction?.activityThreshold).toBe(threshold);
      expect(seen).toBe(suspended);
    },
  );

  it("shows the threshold only with the hourly save, also when the save moved to when the history came", () => {
    const book = new ForecastBook({}, { history: true });
    const awake: ManagedWorkload = {
      ...mw(budgeted),
      metadata: { ...mw().metadata, uid: "u1" },
      status: { phase: "Awake" },
    };
    const start = Date.parse("2026-11-23T12:00:00Z");
    const lastActivity = start - 2 * hour;
    book.look("k", awake, start, window, lastActivity);
    // The history comes 20 minutes later: the saves move to 20 past the hour.
    book.learnHistory("k", awake, dailyPatternPoints(start, 14, 10, 12, true));
    let previous: PredictionStatus | undefined;
    const moves: { threshold: boolean; saved: boolean }[] = [];
    for (let at = start + 20 * 60_000; at <= start + 4 * hour; at += 30_000) {
      // Kept awake long after its last activity: the budget raises the threshold.
      const { prediction } = book.look("k", awake, at, window, lastActivity);
      if (previous) {
        moves.push({
          threshold: prediction?.activityThreshold !== previous.activityThreshold,
          saved: prediction?.savedAt !== previous.savedAt,
        });
      }
      previous = prediction;
    }
    expect(moves.some((m) => m.threshold)).toBe(true);
    expect(moves.filter((m) => m.threshold && !m.saved)).toEqual([]);
  });
});

describe("a new engine started from activity history", () => {
  const now = Date.parse("2026-11-23T09:50:00Z");
  const history = dailyPatternPoints(now, 14);
  /** The book of an operator with a Prometheus to read histories from. */
  const historyBook = () => new ForecastBook({}, { history: true });
  const minute = 60_000;
  const window = 30 * minute;

  it.each([
    { what: "after the history's end", lagging: "no" },
    { what: "where Prometheus had no answer yet", lagging: "unanswered" },
    { what: "where Prometheus saw no activity (a request the doorman held, say)", lagging: "idle" },
  ])("keeps the slots it learned live while the history was on its way, $what", ({ lagging }) => {
    const asked = Date.parse("2026-11-23T10:14:00Z");
    const awake: ManagedWorkload = { ...mw(), metadata: { ...mw().metadata, uid: "u1" } };
    const book = historyBook();
    book.look("k", awake, asked, window, asked - minute);
    // The next look, at 10:16, learns 10:00 live as active. The history ends before it (read up to the slot
    // open when asked) or, read later, holds it without an answer.
    book.look("k", awake, asked + 2 * minute, window, asked - minute);
    const points = dailyPatternPoints(slotStartMs(slotOf(asked)), 14);
    const late = {
      unanswered: [{ slot: slotOf(asked), value: null }],
      idle: [{ slot: slotOf(asked), value: 0 }],
    };
    book.learnHistory(
      "k",
      awake,
      lagging === "no" ? points : [...points, ...late[lagging as keyof typeof late]],
    );
    const saved = book.look("k", awake, asked + 3 * minute, window, asked - minute).prediction?.state ?? "";
    const engine = decodeEngine(saved, forecastConfig());
    if (!engine.ok) throw new Error(engine.error.message);
    expect(historyAt(engine.value, slotOf(asked))).toBe(1);
    expect(historyAt(engine.value, slotOf(asked) - 1)).toBe(0);
  });

  it("learns two weeks of history and is trusted at once: it vetoes a pause before the daily traffic", () => {
    const book = historyBook();
    expect(book.look("k", mw(), now, window).prediction?.phase).toBe("learning");
    expect(book.wantsHistory("k", now)).toBe(true);
    book.learnHistory("k", mw(), history);
    expect(book.wantsHistory("k", now)).toBe(false);
    const look = book.look("k", mw(), now + minute, window);
    expect(look.prediction?.phase).toMatch(/^active/);
    expect(look.advice?.vetoPause).toBe(true);
    expect(look.prediction?.nextActivity).toBe("2026-11-23T10:00:00.000Z");
    expect(look.notices).toEqual([
      expect.objectContaining({
        type: "Normal",
        reason: "ForecastHistoryLearned",
        note: expect.stringMatching(
          /^learned 14\.0 days of activity history \(active in 112 of 1344 15-minute slots\): forecast active-\w+, confidence \d\.\d\d \(trusted from 0\.5\)$/,
        ),
      }),
    ]);
  });

  it.each([
    {
      what: "only the last two days (a workload created since)",
      unknown: (slot: number) => slot < slotOf(now) - 2 * 96,
    },
    {
      what: "nothing in its last eight days (an outage, or pods gone since)",
      unknown: (slot: number) => slot >= slotOf(now) - 8 * 96,
    },
  ])("is learning, not trusted, from a history that holds $what", ({ unknown }) => {
    const book = historyBook();
    book.look("k", mw(), now, window);
    book.learnHistory(
      "k",
      mw(),
      history.map((point) => (unknown(point.slot) ? { slot: point.slot, value: null } : point)),
    );
    const look = book.look("k", mw(), now + minute, window);
    expect(look.prediction?.phase).toBe("learning");
    expect(look.advice).toBeNull();
  });

  it("is not saved while it waits for its history, and saves the learned state with the next look", () => {
    const book = historyBook();
    const first = book.look("k", mw(), now, window);
    expect(first.prediction?.state).toBeUndefined();
    expect(first.prediction?.savedAt).toBeUndefined();
    book.learnHistory("k", mw(), history);
    const next = book.look("k", mw(), now + minute, window);
    expect(next.prediction?.state).toBeDefined();
    expect(next.prediction?.savedAt).toBe(new Date(now + minute).toISOString());
  });

  it("is read again by an operator restarted before the history came: nothing was saved to restore", () => {
    const waiting = historyBook().look("k", mw(), now, window).prediction;
    const restarted = historyBook();
    restarted.look("k", mw({}, waiting), now + 5 * minute, window);
    expect(restarted.wantsHistory("k", now + 5 * minute)).toBe(true);
  });

  it("is saved at once and wants no history without a Prometheus to read it from", () => {
    const book = new ForecastBook();
    expect(book.look("k", mw(), now, window).prediction?.state).toBeDefined();
    expect(book.wantsHistory("k", now)).toBe(false);
  });

  it("wants no history with spec.forecast.history None, or once it is set to None", () => {
    const none = mw({ forecast: { history: "None" } });
    const book = historyBook();
    expect(book.look("k", none, now, window).prediction?.state).toBeDefined();
    expect(book.wantsHistory("k", now)).toBe(false);
    const changed = historyBook();
    changed.look("k", mw(), now, window);
    expect(changed.look("k", none, now + minute, window).prediction?.state).toBeDefined();
    expect(changed.wantsHistory("k", now + minute)).toBe(false);
  });

  it("keeps an engine restored from its saved state: history is only for a new one", () => {
    const book = historyBook();
    const saved = mw({}, { phase: "x", confidence: 0, state: dailyPatternState(now, 21, 14, 16) });
    book.look("k", saved, now, window);
    expect(book.wantsHistory("k", now)).toBe(false);
    book.learnHistory("k", saved, history);
    expect(book.look("k", saved, now + minute, window).prediction?.nextActivity).toBe(
      "2026-11-23T14:00:00.000Z",
    );
  });

  it.each([
    { age: "7 days and 20 minutes", ageMs: 7 * 24 * 60 * minute + 20 * minute },
    { age: "7 days and 35 minutes", ageMs: 7 * 24 * 60 * minute + 35 * minute },
  ])("wants history again for a state saved $age ago, which a gap that long resets", ({ ageMs }) => {
    const savedAt = now - ageMs;
    const book = historyBook();
    const saved = mw({}, { phase: "active-weekly", confidence: 0.8, state: dailyPatternState(savedAt, 14) });
    expect(book.look("k", saved, now, window).prediction?.phase).toBe("learning");
    expect(book.wantsHistory("k", now)).toBe(true);
  });

  it("tells a reset that waits for its history once, with what the history brought, however often the operator restarts meanwhile", () => {
    const ageMs = 7 * 24 * 60 * minute + 20 * minute;
    const saved = mw(
      {},
      { phase: "active-weekly", confidence: 0.8, state: dailyPatternState(now - ageMs, 14) },
    );
    const told: string[] = [];
    // Prometheus is slow: two restarts (a rollout, a leader change) before the history is read.
    for (const [i, book] of [historyBook(), historyBook(), historyBook()].entries()) {
      const look = book.look("k", saved, now + i * minute, window);
      told.push(...look.notices.map((n) => n.reason));
      book.sent("k", look.notices);
      if (i < 2) continue;
      book.learnHistory("k", saved, history);
      const learned = book.look("k", saved, now + i * minute + 1, window).notices;
      told.push(...learned.map((n) => n.reason));
      expect(learned[0]?.note).toMatch(/^forecast active-weekly -> learning: .*; then learned /);
    }
    expect(told).toEqual(["ForecastHistoryLearned"]);
  });

  it("wants history again when a week of unknown activity resets a running engine", () => {
    const book = historyBook();
    const saved = mw({}, { phase: "active-weekly", confidence: 0.8, state: dailyPatternState(now, 14) });
    book.look("k", saved, now, window);
    expect(book.wantsHistory("k", now)).toBe(false);
    let at = now;
    // Hourly looks that could not know the workload's activity (its measurements failed): every slot a gap.
    for (
      ;
      book.look("k", saved, at, window, null, false).prediction?.phase !== "learning";
      at += 60 * minute
    ) {
      expect(at - now).toBeLessThan(8 * 24 * 60 * minute);
    }
    expect(book.wantsHistory("k", at)).toBe(true);
  });

  it("wants history again after discarding a state it cannot read", () => {
    const book = historyBook();
    book.look("k", mw({}, { phase: "active-daily", confidence: 0.9, state: "{not json" }), now, window);
    expect(book.wantsHistory("k", now)).toBe(true);
  });

  it("wants no history for a forecast turned off while its notices wait to be sent", () => {
    const book = historyBook();
    const corrupt = { phase: "active-daily", confidence: 0.9, state: "{not json" };
    book.look("k", mw({}, corrupt), now, window);
    const off = book.look("k", mw({ forecast: { enabled: false } }, corrupt), now + minute, window);
    expect(off.notices.map((n) => n.reason)).toEqual(["ForecastStateDiscarded"]);
    expect(book.wantsHistory("k", now + minute)).toBe(false);
    book.learnHistory("k", mw({ forecast: { enabled: false } }, corrupt), history);
    expect(
      book.look("k", mw({ forecast: { enabled: false } }, corrupt), now + 2 * minute, window).notices,
    ).toEqual(off.notices);
  });

  it("still reads the history of a new engine turned off and on again before its notices went out", () => {
    const book = historyBook();
    const corrupt = { phase: "active-daily", confidence: 0.9, state: "{not json" };
    book.look("k", mw({}, corrupt), now, window);
    book.look("k", mw({ forecast: { enabled: false } }, corrupt), now + minute, window);
    book.look("k", mw({}, corrupt), now + 2 * minute, window);
    expect(book.wantsHistory("k", now + 2 * minute)).toBe(true);
    book.learnHistory("k", mw({}, corrupt), history);
    expect(book.look("k", mw({}, corrupt), now + 3 * minute, window).prediction?.phase).toMatch(/^active/);
  });

  it("says so and learns from now when the history holds nothing known", () => {
    const book = historyBook();
    book.look("k", mw(), now, window);
    book.learnHistory(
      "k",
      mw(),
      history.map((p) => ({ ...p, value: null })),
    );
    const look = book.look("k", mw(), now + minute, window);
    expect(look.prediction?.phase).toBe("learning");
    expect(look.prediction?.state).toBeDefined();
    expect(look.notices.map(({ reason, note }) => ({ reason, note }))).toEqual([
      { reason: "ForecastHistoryEmpty", note: "no activity history found; learning from now" },
    ]);
  });

  it("warns at once when the history cannot be read and would fail again, and ignores a late answer", () => {
    const book = historyBook();
    book.look("k", mw(), now, window);
    book.historyUnavailable("k", mw(), "bad_data: parse error", { retryable: false, nowMs: now });
    book.learnHistory("k", mw(), history);
    const look = book.look("k", mw(), now + minute, window);
    expect(look.prediction?.phase).toBe("learning");
    expect(look.prediction?.state).toBeDefined();
    expect(look.notices).toEqual([
      {
        type: "Warning",
        reason: "ForecastHistoryUnavailable",
        note: "could not read the activity history (bad_data: parse error); learning from now",
      },
    ]);
  });

  it("reads again, silently, after 10, 20 and 40 minutes when Prometheus could not be reached", () => {
    const book = historyBook();
    book.look("k", mw(), now, window);
    let at = now;
    for (const waitMinutes of [10, 20, 40]) {
      book.historyUnavailable("k", mw(), "HTTP 503", { retryable: true, nowMs: at });
      expect(book.wantsHistory("k", at + (waitMinutes - 1) * minute)).toBe(false);
      at += waitMinutes * minute;
      expect(book.wantsHistory("k", at)).toBe(true);
      const look = book.look("k", mw(), at, window);
      expect(look.notices).toEqual([]);
      expect(look.prediction?.state).toBeUndefined();
    }
    book.historyUnavailable("k", mw(), "HTTP 503", { retryable: true, nowMs: at });
    expect(book.wantsHistory("k", at + 24 * hour)).toBe(false);
    expect(book.look("k", mw(), at + minute, window).notices).toEqual([
      {
        type: "Warning",
        reason: "ForecastHistoryUnavailable",
        note: "could not read the activity history in 4 reads (HTTP 503); learning from now",
      },
    ]);
  });

  it("learns a history read again after a failure", () => {
    const book = historyBook();
    book.look("k", mw(), now, window);
    book.historyUnavailable("k", mw(), "HTTP 503", { retryable: true, nowMs: now });
    book.learnHistory("k", mw(), history);
    expect(book.look("k", mw(), now + minute, window).prediction?.phase).toMatch(/^active/);
  });

  it("ignores history read for a ManagedWorkload since deleted and made again under the same name", () => {
    const book = historyBook();
    const old = { ...mw(), metadata: { ...mw().metadata, uid: "old" } };
    const remade = { ...mw(), metadata: { ...mw().metadata, uid: "new" } };
    book.look("k", remade, now, window);
    book.learnHistory("k", old, history);
    book.historyUnavailable("k", old, "HTTP 404", { retryable: false, nowMs: now });
    const look = book.look("k", remade, now + minute, window);
    expect(look.prediction?.phase).toBe("learning");
    expect(look.notices).toEqual([]);
    expect(book.wantsHistory("k", now + minute)).toBe(true);
  });

  it("learns from now, silently, when told to skip the history (no loader to read it)", () => {
    const book = historyBook();
    book.look("k", mw(), now, window);
    book.skipHistory("k");
    book.learnHistory("k", mw(), history);
    const look = book.look("k", mw(), now + minute, window);
    expect(look.prediction?.phase).toBe("learning");
    expect(look.prediction?.state).toBeDefined();
    expect(look.notices).toEqual([]);
  });
});

describe("the prediction status shows", () => {
  const now = Date.parse("2026-11-23T09:45:00Z");
  const prediction: PredictionStatus = {
    phase: "active-daily",
    confidence: 0.8,
    nextPrewake: "2026-11-23T09:50:00.000Z",
  };
  const paused = (reason: string) => ({
    conditions: [{ type: "Paused", status: "True" as const, reason, message: "", lastTransitionTime: "" }],
  });
  it.each([
    {
      what: "a pre-wake to come for a workload the forecast may wake",
      at: now,
      status: paused("Idle"),
      shown: true,
    },
    { what: "no pre-wake for a workload paused by hand", at: now, status: paused("Requested"), shown: false },
    { what: "no pre-wake already due", at: now + 5 * 60_000, status: {}, shown: false },
    { what: "a pre-wake to come for an awake workload", at: now, status: {}, shown: true },
    {
      what: "no pre-wake for a workload Napwake let go (protected, ignored, scaled to zero outside it)",
      at: now,
      status: { phase: "Unmanaged" as const },
      shown: false,
    },
  ])("$what", ({ at, status, shown }) => {
    expect(shownPrediction(prediction, status, at).nextPrewake !== undefined).toBe(shown);
  });
});

describe("a saved state damaged beyond what the codec checks field by field", () => {
  const now = Date.parse("2026-11-23T09:45:00Z");
  const savedAt = new Date(now).toISOString();
  const damaged = (damage: (wire: { acc: number[]; m: { b: number } }) => void) => {
    const wire = JSON.parse(dailyPatternState(now, 21));
    damage(wire);
    return JSON.stringify(wire);
  };
  /** Six hours of looks at a workload whose status shows `state`: the Warnings told, and the prediction shown. */
  const sixHoursFrom = (state: string) => {
    const book = new ForecastBook();
    const warnings: string[] = [];
    let shown: PredictionStatus | undefined;
    for (let t = now; t <= now + 6 * hour; t += 15 * 60_000) {
      const look = book.look(
        "k",
        mw({ forecast: { history: "None" } }, { phase: "x", confidence: 0, state, savedAt }),
        t,
        30 * 60_000,
      );
      warnings.push(...look.notices.filter((n) => n.type === "Warning").map((n) => n.reason));
      book.sent("k", look.notices);
      shown = look.prediction;
    }
    return { warnings, shown };
  };

  it("(a scored count at the most a state holds) is discarded with one Warning once learned on, not kept with a Warning every hour", () => {
    // The next scored slot puts the count past what a state may hold.
    const state = damaged((w) => {
      w.acc[3] = Number.MAX_SAFE_INTEGER;
    });
    expect(decodeEngine(state, forecastConfig()).ok).toBe(true);
    const { warnings, shown } = sixHoursFrom(state);
    expect(warnings).toEqual(["ForecastStateDiscarded"]);
    expect(shown?.phase).toBe("learning");
    // Status no longer shows the damaged state, so a restart does not restore it.
    expect(shown?.state).not.toBe(state);
    expect(decodeEngine(shown?.state ?? "", forecastConfig()).ok).toBe(true);
  });

  it("reads a slope of a billion a quarter hour as none, since the operator keeps no trend: kept, with no Warning", () => {
    const state = damaged((w) => {
      w.m.b = 1e9;
    });
    const { warnings, shown } = sixHoursFrom(state);
    expect(warnings).toEqual([]);
    expect(shown?.phase).toBe(JSON.parse(dailyPatternState(now, 21)).ph);
  });
});
