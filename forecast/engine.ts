// One forecast engine per workload: feeds grid slots into the model, keeps a short history for
// periodic refits, scores its own forecasts and moves through the phases. Pure: every call takes
// an engine and returns a new one plus the events the caller should surface.

import { type AccuracyRecord, confidenceOf, EMPTY_ACCURACY, recordAccuracy } from "./accuracy.ts";
import { sameCalendar, sameWallClockBefore, UTC_CALENDAR } from "./calendar.ts";
import { type ForecastConfig, historySlots, seasonCalendar } from "./config.ts";
import { type ErrorMoments, fitWindow, hwOptions, varianceScale } from "./fit.ts";
import { DAY_SLOTS, type GridPoint, positiveModulo, slotStartMs, WEEK_SLOTS } from "./grid.ts";
import {
  cloneHwState,
  forecastAt,
  type HwParams,
  type HwState,
  patternForecastAt,
  type Seasonality,
  stepInPlace,
} from "./holt-winters.ts";
import { activityProbability, isActivityExpected, MIN_BURST_SIZE, OCCUPANCY } from "./probability.ts";
import { NO_SILENCE, nextSilence, type Silence } from "./silence.ts";

export const PHASES = ["learning", "shadow", "active-daily", "active-weekly"] as const;
export type Phase = (typeof PHASES)[number];

export const PHASE_REASON_CODES = [
  "insufficient-history",
  "history-sufficient",
  "confidence-high",
  "confidence-low",
  "weekly-season-ready",
  "long-gap-reset",
] as const;

export type PhaseReasonCode = (typeof PHASE_REASON_CODES)[number];

export type Reason<Code extends string> = { code: Code; message: string };

export type ForecastEngine = {
  phase: Phase;
  phaseReason: Reason<PhaseReasonCode>;
  /** null until the first sample arrives. */
  firstSlot: number | null;
  nextSlot: number | null;
  /** The last slot learned with a value (not a gap): how long the engine has gone without data. */
  lastKnownSlot: number | null;
  /** The last slot where activity was seen (as observed, before any anomaly clipping). */
  lastActiveSlot: number | null;
  /**
   * The latest slot kept with activity at least half a day before `lastActiveSlot` (not saved: read from the
   * history). Activity on two occasions that far apart is the least a forecast is trusted on.
   */
  earlierActiveSlot: number | null;
  /** Ring indexed by slot mod history length; NaN marks a gap. Holds the values the model learned. */
  history: Float64Array;
  model: HwState | null;
  params: HwParams | null;
  /** Running averages of squared one-step error and of the variance scale; see `varianceOffset`. */
  errorMoments: ErrorMoments;
  lastRefitSlot: number | null;
  accuracy: AccuracyRecord;
  /** Consecutive anomalies so far: positive above the interval, negative below. */
  anomalyRun: number;
  /** Consecutive slots where activity was forecast and none came. */
  missedRun: number;
  /** The silence up to the last slot learned, weighed by what the forecast expected (see `silence.ts`). */
  silence: Silence;
  /** Requests per burst, calibrated at each refit; turns expected counts into chances of any activity. */
  burstSize: number;
};

export type PhaseChangeEvent = {
  kind: "phase-change";
  atMs: number;
  from: Phase;
  to: Phase;
  reason: Reason<PhaseReasonCode>;
};

export type AnomalyEvent = {
  kind: "anomaly";
  atMs: number;
  observed: number;
  expected: number;
  lower: number;
  upper: number;
  direction: "above" | "below";
  /** What the model learned instead of the observed value (clipped unless the pattern looks changed). */
  learned: number;
};

export type RefitEvent = {
  kind: "refit";
  atMs: number;
  seasonality: Seasonality;
  params: HwParams;
  rmse: number;
  evaluations: number;
};

export type EngineEvent = PhaseChangeEvent | AnomalyEvent | RefitEvent;

export type Observation = { engine: ForecastEngine; events: EngineEvent[] };

export function createEngine(config: ForecastConfig): ForecastEngine {
  return {
    phase: "learning",
    phaseReason: learningReason(config),
    firstSlot: null,
    nextSlot: null,
    lastKnownSlot: null,
    lastActiveSlot: null,
    earlierActiveSlot: null,
    history: new Float64Array(historySlots(config)).fill(Number.NaN),
    model: null,
    params: null,
    errorMoments: { squaredError: 0, scale: 1 },
    lastRefitSlot: null,
    accuracy: EMPTY_ACCURACY,
    anomalyRun: 0,
    missedRun: 0,
    silence: NO_SILENCE,
    burstSize: MIN_BURST_SIZE,
  };
}

function learningReason(config: ForecastConfig): Reason<PhaseReasonCode> {
  return {
    code: "insufficient-history",
    message: `fewer than ${config.learningDays} days of activity history; the activity clock decides alone`,
  };
}

export function confidence(engine: ForecastEngine): number {
  return engine.phase === "learning" || !activityKept(engine) ? 0 : confidenceOf(engine.accuracy);
}

/**
 * Whether the history kept holds activity on two occasions at least half a day apart. Without, model and
 * seasonal-naive are both right about nothing, or both wrong about the same one burst: their record scores "as
 * good as seasonal-naive", which is no reason to trust a forecast that covers no hour. One burst is not yet a
 * pattern, whatever the time zone it falls across midnight in.
 */
function activityKept(engine: ForecastEngine): boolean {
  return activeOccasionsKept(engine) === 2;
}

/** Occasions of activity the history kept holds, half a day apart, counted up to two. */
function activeOccasionsKept(engine: ForecastEngine): 0 | 1 | 2 {
  const { lastActiveSlot, earlierActiveSlot, nextSlot } = engine;
  if (lastActiveSlot === null || nextSlot === null) return 0;
  const oldest = nextSlot - engine.history.length;
  if (lastActiveSlot < oldest) return 0;
  return earlierActiveSlot !== null && earlierActiveSlot >= oldest ? 2 : 1;
}

/** Why a forecast without activity on two occasions in its history is not trusted. */
function noPatternMessage(engine: ForecastEngine, config: ForecastConfig): string {
  const days = config.historyDays;
  return activeOccasionsKept(engine) === 0
    ? `no activity in the last ${days} days: nothing to forecast`
    : `all activity of the last ${days} days within half a day: no pattern to forecast yet`;
}

/** Activity this far apart is two occasions, not one burst. */
const OCCASIONS_APART_SLOTS = DAY_SLOTS / 2;

/** The latest slot kept with activity at least half a day before the last one, read from the history. */
export function earlierActiveSlotOf(engine: ForecastEngine): number | null {
  if (engine.lastActiveSlot === null || engine.nextSlot === null) return null;
  const oldest = engine.nextSlot - engine.history.length;
  return latestActiveIn(engine, oldest, engine.lastActiveSlot - OCCASIONS_APART_SLOTS);
}

/** The latest slot within [fromSlot, toSlot] the history holds activity in, or null. */
function latestActiveIn(engine: ForecastEngine, fromSlot: number, toSlot: number): number | null {
  for (let slot = toSlot; slot >= fromSlot; slot--) if (historyAt(engine, slot) > 0) return slot;
  return null;
}

export function isActive(phase: Phase): boolean {
  return phase === "active-daily" || phase === "active-weekly";
}

/** Standard deviation of the one-step error for a slot forecast at `expected`, floored. */
export function oneStepSigma(engine: ForecastEngine, expected: number, config: ForecastConfig): number {
  const { squaredError, scale } = engine.errorMoments;
  const dispersion = scale > 0 ? squaredError / scale : 0;
  const sigma = Math.sqrt(dispersion * varianceScale(expected, config));
  return Number.isFinite(sigma) ? Math.max(config.minSigma, sigma) : config.minSigma;
}

/** The learned value of `slot`, or NaN when it is a gap or no longer (or not yet) in the history. */
export function historyAt(engine: ForecastEngine, slot: number): number {
  const length = engine.history.length;
  if (engine.firstSlot === null || engine.nextSlot === null) return Number.NaN;
  if (slot < engine.firstSlot || slot >= engine.nextSlot || slot < engine.nextSlot - length)
    return Number.NaN;
  return engine.history[positiveModulo(slot, length)] ?? Number.NaN;
}

function cloneEngine(engine: ForecastEngine): ForecastEngine {
  return {
    ...engine,
    history: engine.history.slice(),
    model: engine.model ? cloneHwState(engine.model) : null,
  };
}

/**
 * Learns one grid slot. Slots skipped since the last call are gaps, as is a point without a value; a slot at
 * or before the last one learned is ignored (late or duplicate data). Learning starts at the first point with a
 * value (gaps before it are no history), and starts again when more than `maxGapSlots` have passed without one,
 * whether they came as gaps or were skipped.
 */
export function observe(engine: ForecastEngine, given: GridPoint, config: ForecastConfig): Observation {
  if (engine.nextSlot !== null && given.slot < engine.nextSlot) return { engine, events: [] };
  const point = knownValue(given);
  const started = engine.nextSlot !== null;
  // Slots without a value since the last one with: this point's own too when it has none.
  const unknownRun = started ? point.slot - lastKnownSlot(engine) - (point.value === null ? 0 : 1) : 0;
  const longGap = unknownRun > config.maxGapSlots;
  const reset = longGap ? resetAfterLongGap(engine, point.slot, config) : null;
  if (point.value === null && (!started || reset)) return reset ?? { engine, events: [] };
  const draft = reset ? reset.engine : cloneEngine(engine);
  const events: EngineEvent[] = reset ? reset.events : [];
  if (draft.nextSlot === null) {
    draft.firstSlot = point.slot;
    draft.nextSlot = point.slot;
  }
  while ((draft.nextSlot as number) < point.slot) learnSlot(draft, Number.NaN, config, events);
  learnSlot(draft, point.value ?? Number.NaN, config, events);
  advanceLifecycle(draft, config, events);
  return { engine: draft, events };
}

/**
 * A value no activity can have (negative, NaN, infinite) is no measurement: a gap, not a number that would
 * turn the model and its record into NaN for good.
 */
function knownValue(point: GridPoint): GridPoint {
  const { value } = point;
  return value === null || (Number.isFinite(value) && value >= 0) ? point : { slot: point.slot, value: null };
}

/** `observe` over many points, in order. */
export function observeAll(
  engine: ForecastEngine,
  points: readonly GridPoint[],
  config: ForecastConfig,
): Observation {
  let current = engine;
  const events: EngineEvent[] = [];
  for (const point of points) {
    const step = observe(current, point, config);
    current = step.engine;
    events.push(...step.events);
  }
  return { engine: current, events };
}

/** A fresh engine that says why: what was learned before the gap is discarded. */
function resetAfterLongGap(engine: ForecastEngine, slot: number, config: ForecastConfig): Observation {
  const reason: Reason<PhaseReasonCode> = {
    code: "long-gap-reset",
    message: `no data for more than ${config.maxGapSlots / DAY_SLOTS} days; history discarded, learning again`,
  };
  const events: EngineEvent[] =
    engine.phase === "learning"
      ? []
      : [{ kind: "phase-change", atMs: slotStartMs(slot), from: engine.phase, to: "learning", reason }];
  return { engine: { ...createEngine(config), phaseReason: reason }, events };
}

/** Nothing known since it started (it starts on a value, so only a damaged state): none since its first slot. */
function lastKnownSlot(engine: ForecastEngine): number {
  return engine.lastKnownSlot ?? (engine.firstSlot ?? (engine.nextSlot as number)) - 1;
}

function learnSlot(draft: ForecastEngine, value: number, config: ForecastConfig, events: EngineEvent[]) {
  const slot = draft.nextSlot as number;
  let learned = value;
  if (draft.model && draft.params) {
    // The silence is weighed by what the learned pattern expects, as decisions are: the one-step correction
    // for the last slot's miss would call each slot of a missed morning unexpected, and the silence would
    // never build up while the pattern goes on vetoing pauses.
    const pattern = patternForecastAt(draft.model, hwOptions(config), 1);
    draft.silence = nextSilence(draft.silence, value, pattern, draft.burstSize, config);
    if (!Number.isNaN(value)) learned = scoreAndClip(draft, slot, value, config, events);
    stepInPlace(draft.model, draft.params, hwOptions(config), learned);
  }
  draft.history[positiveModulo(slot, draft.history.length)] = learned;
  if (!Number.isNaN(value)) draft.lastKnownSlot = slot;
  draft.nextSlot = slot + 1;
  if (value > 0) followActivity(draft, slot);
  const oldest = draft.nextSlot - draft.history.length;
  // Every earlier occasion is older still: none is kept.
  if (draft.earlierActiveSlot !== null && draft.earlierActiveSlot < oldest) draft.earlierActiveSlot = null;
}

/**
 * Activity in `slot`: the last active slot moves on, and the earlier occasion with it, found among the slots
 * between the previous last active one and half a day before this (the ones before were looked at already).
 */
function followActivity(draft: ForecastEngine, slot: number) {
  const previous = draft.lastActiveSlot;
  const oldest = (draft.nextSlot as number) - draft.history.length;
  const from = previous === null ? oldest : Math.max(oldest, previous - OCCASIONS_APART_SLOTS + 1);
  draft.earlierActiveSlot =
    latestActiveIn(draft, from, slot - OCCASIONS_APART_SLOTS) ?? draft.earlierActiveSlot;
  draft.lastActiveSlot = slot;
}

/** Scores the forecast for this slot, flags an anomaly, and returns the value the model should learn. */
function scoreAndClip(
  draft: ForecastEngine,
  slot: number,
  value: number,
  config: ForecastConfig,
  events: EngineEvent[],
): number {
  const model = draft.model as HwState;
  const params = draft.params as HwParams;
  const expected = forecastAt(model, params, hwOptions(config), 1);
  const sigma = oneStepSigma(draft, expected, config);
  const error = value - expected;
  const lower = Math.max(0, expected - config.intervalZ * sigma);
  const upper = expected + config.intervalZ * sigma;

  const forecastActivity = isActivityExpected(expected, draft.burstSize, config);
  draft.missedRun = forecastActivity && value === 0 ? draft.missedRun + 1 : 0;

  // What the learned pattern expects, as decisions read it: the one-step correction for the last slot's miss,
  // which no decision uses, would count a stray burst's echo in the next slots against the forecast.
  const pattern = patternForecastAt(model, hwOptions(config), 1);
  const naive = seasonalNaive(draft, slot);
  if (!Number.isNaN(naive)) {
    // Both errors are capped alike, so a burst neither could foresee does not swing the comparison.
    const cap = config.anomalyZ * sigma;
    const capped = (e: number) => Math.max(-cap, Math.min(cap, e));
    const outcome = {
      modelError: capped(value - Math.max(0, pattern)),
      naiveError: capped(value - naive),
      covered: value >= lower && value <= upper,
    };
    draft.accuracy = recordAccuracy(draft.accuracy, outcome, config);
  }

  // In a series calibrated as 0/1 the model's values are chances, and a count there (a burst of requests) is
  // activity: it is judged as a count, so a burst is flagged, but learned as 1, or one burst, or an hour of them,
  // would teach every hour of the day to expect activity.
  const occupancy = draft.burstSize === OCCUPANCY;
  const zeroOne = occupancy && value <= 1;
  let learned = occupancy ? Math.min(1, value) : value;
  // A 0/1 sample is judged by the chance decisions read, so activity in a slot they vetoed a pause for is never
  // called unexpected. Counts are clipped towards the one-step forecast, which knows the burst going on.
  const judged = zeroOne ? Math.max(0, pattern) : expected;
  const isAnomaly = isAnomalous(value, judged, sigma, zeroOne, config);
  if (isAnomaly) {
    const direction = value > judged ? "above" : "below";
    const run = direction === "above" ? Math.max(0, draft.anomalyRun) + 1 : Math.min(0, draft.anomalyRun) - 1;
    draft.anomalyRun = run;
    const patternChanged = Math.abs(run) >= config.anomalyRunToAccept;
    const reach = config.anomalyClipZ * sigma;
    // A 0/1 sample is bounded already, and clipping it slowed learning changed hours (decision 4).
    if (!occupancy && !patternChanged) {
      learned = Math.max(0, Math.min(expected + reach, Math.max(expected - reach, value)));
    }
    // Never negative, as forecasts are shown.
    events.push({
      kind: "anomaly",
      atMs: slotStartMs(slot),
      observed: value,
      expected: Math.max(0, judged),
      lower: Math.max(0, judged - config.intervalZ * sigma),
      upper: Math.max(0, judged + config.intervalZ * sigma),
      direction,
      learned,
    });
  } else {
    draft.anomalyRun = 0;
  }
  // The variance learns from the bounded error so one burst cannot blow the intervals open for days.
  const boundedError = Math.max(-config.anomalyZ * sigma, Math.min(config.anomalyZ * sigma, error));
  const decay = 2 ** (-1 / config.accuracyHalfLifeSlots);
  draft.errorMoments = {
    squaredError: decay * draft.errorMoments.squaredError + (1 - decay) * boundedError * boundedError,
    scale: decay * draft.errorMoments.scale + (1 - decay) * varianceScale(expected, config),
  };
  return learned;
}

/**
 * A sample far outside what the forecast allowed: for counts, further than anomalyZ standard deviations (and
 * anomalyMinAbs) from it; for a 0/1 sample of a 0/1 series, whose values never lie that far from a forecast (the
 * deviation has a floor of minSigma), activity where its chance was below anomalyChance, or none where it was
 * above 1 minus that.
 */
function isAnomalous(
  value: number,
  expected: number,
  sigma: number,
  zeroOne: boolean,
  config: ForecastConfig,
): boolean {
  if (zeroOne) {
    const chance = activityProbability(expected, OCCUPANCY);
    return value > 0 ? chance < config.anomalyChance : chance > 1 - config.anomalyChance;
  }
  const error = Math.abs(value - expected);
  return error > config.anomalyZ * sigma && error >= config.anomalyMinAbs;
}

/**
 * Same time last week if known, else same time yesterday, else NaN; by the wall clock the seasons are kept on, so
 * that the week after a daylight-saving change the baseline is not an hour off and the model's record too good.
 */
export function seasonalNaive(engine: ForecastEngine, slot: number): number {
  const calendar = engine.model?.calendar ?? UTC_CALENDAR;
  const lastWeek = historyAt(engine, sameWallClockBefore(calendar, slot, WEEK_SLOTS));
  return Number.isNaN(lastWeek)
    ? historyAt(engine, sameWallClockBefore(calendar, slot, DAY_SLOTS))
    : lastWeek;
}

function observedCount(engine: ForecastEngine): number {
  let count = 0;
  for (const value of engine.history) if (!Number.isNaN(value)) count++;
  return count;
}

function advanceLifecycle(draft: ForecastEngine, config: ForecastConfig, events: EngineEvent[]) {
  const nextSlot = draft.nextSlot as number;
  const span = nextSlot - (draft.firstSlot as number);
  const learningSlots = config.learningDays * DAY_SLOTS;
  const weeklySlots = config.weeklyAfterDays * DAY_SLOTS;

  if (draft.phase === "learning") {
    if (span < learningSlots || observedCount(draft) < learningSlots / 2) return;
    if (!refit(draft, "daily", config, events)) return;
    draft.accuracy = EMPTY_ACCURACY;
    setPhase(draft, "shadow", { code: "history-sufficient", message: historyMessage(span) }, events);
    return;
  }

  const model = draft.model as HwState;
  const weeklyReady = model.seasonality === "daily" && span >= weeklySlots;
  // A model without a refit on record (a damaged state) is refitted at once rather than never, and so is one
  // whose seasons are placed by another time zone than the config's.
  const refitDue =
    draft.lastRefitSlot === null ||
    nextSlot - draft.lastRefitSlot >= config.refitEverySlots ||
    !sameCalendar(model.calendar, seasonCalendar(config));
  if (weeklyReady || refitDue) refit(draft, span >= weeklySlots ? "daily+weekly" : "daily", config, events);

  const score = confidence(draft);
  const activePhase: Phase = draft.model?.seasonality === "daily+weekly" ? "active-weekly" : "active-daily";
  if (
    draft.phase === "shadow" &&
    draft.accuracy.scored >= config.minScoredSlots &&
    score >= config.activateAt
  ) {
    setPhase(
      draft,
      activePhase,
      { code: "confidence-high", message: confidenceMessage(score, ">=", config.activateAt) },
      events,
    );
  } else if (isActive(draft.phase) && score < config.deactivateBelow) {
    const message = activityKept(draft)
      ? confidenceMessage(score, "<", config.deactivateBelow)
      : noPatternMessage(draft, config);
    setPhase(draft, "shadow", { code: "confidence-low", message }, events);
  } else if (draft.phase === "active-daily" && activePhase === "active-weekly") {
    setPhase(
      draft,
      "active-weekly",
      {
        code: "weekly-season-ready",
        message: `${config.weeklyAfterDays} days of history: weekly season fitted`,
      },
      events,
    );
  }
}

function historyMessage(span: number): string {
  return `${(span / DAY_SLOTS).toFixed(1)} days of history: model fitted, forecasts are scored but not acted on`;
}

export function confidenceMessage(score: number, comparison: string, threshold: number): string {
  const shown = shownConfidence(score).toFixed(2);
  return `confidence ${shown} ${comparison} ${threshold} (one-step error vs seasonal-naive and interval coverage)`;
}

/**
 * A confidence to two decimals, rounded down so the figure shown keeps to the thresholds it is compared with:
 * 0.449 is "0.44 < 0.45", not "0.45 < 0.45", and a forecast still in shadow at 0.4996 does not show 0.50.
 */
export function shownConfidence(score: number): number {
  return Math.floor(score * 100 + 1e-9) / 100;
}

function setPhase(draft: ForecastEngine, to: Phase, reason: Reason<PhaseReasonCode>, events: EngineEvent[]) {
  const atMs = slotStartMs(draft.nextSlot as number);
  events.push({ kind: "phase-change", atMs, from: draft.phase, to, reason });
  draft.phase = to;
  draft.phaseReason = reason;
}

/** Refits now on the kept history (the engine does this itself every `refitEverySlots`). */
export function refitEngine(engine: ForecastEngine, config: ForecastConfig): ForecastEngine {
  if (engine.phase === "learning" || !engine.model) return engine;
  const draft = cloneEngine(engine);
  refit(draft, draft.model?.seasonality ?? "daily", config, []);
  return draft;
}

/**
 * The engine with its seasons placed by `config.timeZone`: refitted on the kept history when they were placed by
 * another zone (the spec's zone changed), the same engine otherwise. The history is kept by UTC slot, so the
 * seasons are placed anew at once rather than relearned.
 */
export function inTimeZone(engine: ForecastEngine, config: ForecastConfig): ForecastEngine {
  if (!engine.model || sameCalendar(engine.model.calendar, seasonCalendar(config))) return engine;
  return refitEngine(engine, config);
}

/**
 * Refits on the kept history; returns false (the model untouched) when the window has no data. Either way a
 * refit the clock made due is next due `refitEverySlots` later, not tried again at every slot.
 */
function refit(
  draft: ForecastEngine,
  seasonality: Seasonality,
  config: ForecastConfig,
  events: EngineEvent[],
): boolean {
  const nextSlot = draft.nextSlot as number;
  const length = Math.min(nextSlot - (draft.firstSlot as number), draft.history.length);
  const startSlot = nextSlot - length;
  const values = new Float64Array(length);
  for (let i = 0; i < length; i++) values[i] = historyAt(draft, startSlot + i);
  const fit = fitWindow({ startSlot, values }, seasonality, config);
  draft.lastRefitSlot = nextSlot;
  if (!fit) {
    // Nothing to place the seasons by: they are kept as they are, under the zone asked for, rather than tried
    // again at every slot until data comes.
    if (draft.model) draft.model = { ...draft.model, calendar: seasonCalendar(config) };
    return false;
  }
  draft.model = fit.state;
  draft.params = fit.params;
  draft.errorMoments = fit.errorMoments;
  draft.burstSize = fit.burstSize;
  events.push({
    kind: "refit",
    atMs: slotStartMs(nextSlot),
    seasonality,
    params: fit.params,
    rmse: Math.sqrt(fit.meanSquaredError),
    evaluations: fit.evaluations,
  });
  return true;
}
