/**
 * One forecast engine per ManagedWorkload, in memory, fed from the activity clock. No IO: the controller
 * asks for advice before deciding, tells what activity it saw after, and writes `status.prediction` (the
 * phase, confidence, next predicted activity and pre-wake, and the engine's state each hour it learns and when
 * its phase or the suspension of its advice changes, so a restarted or newly elected operator restores it).
 *
 * The series it learns is one value per 15-minute slot: 1 when the workload was active in the slot, else 0.
 * Slots nobody watched are gaps, not idleness: while this operator was not running, and between two looks
 * at an awake workload (a paused one cannot be active without being woken, and a wake is a look).
 *
 * With `spec.forecast.awakeBudget: IdleWindow` (the default) and a trusted idle window shorter than
 * spec.idle.window (by default half of it) each look also accounts the time since the last one: how long the
 * workload was awake, and how long spec.idle.window alone would have kept it awake.
 * The chance at which a slot counts as "activity expected" is steered by the difference (forecast/budget.ts)
 * while the forecast is trusted, so pre-wakes and vetoes move awake time rather than add to it.
 */
import { findCondition } from "../../api/conditions.ts";
import { conditionTypes, type EventReason, eventReasons } from "../../api/keys.ts";
import {
  type ManagedWorkload,
  type ManagedWorkloadStatus,
  parseDuration,
  prewakeLeadMs,
  specDefaults,
} from "../../api/managedworkload.ts";
import { timeOf } from "../../api/meta.ts";
import {
  type AnomalyEvent,
  type AwakeSpend,
  calendarOf,
  clockAdvice,
  confidence,
  createEngine,
  DAY_SLOTS,
  decide,
  decodeEngine,
  type EngineEvent,
  encodeEngine,
  type ForecastConfig,
  type ForecastDecision,
  type ForecastEngine,
  forecastConfig,
  type GridPoint,
  historyAt,
  idleWindowAwakeMs,
  inTimeZone,
  isActive,
  observeAll,
  quietJudgedUntil,
  sameCalendar,
  seasonCalendar,
  shownConfidence,
  slotOf,
  slotStartMs,
  spendBudget,
  trustedIdleWindow,
  unknownZone,
  withThreshold,
} from "../../forecast/index.ts";
import type { ForecastAdvice } from "./activity-clock.ts";
import { PAUSE_BLOCKED_REASONS, PAUSED_BY_HAND, pausedFor } from "./decide.ts";

const hourMs = 3_600_000;

/** What `status.prediction` holds. */
export type PredictionStatus = {
  phase: string;
  phaseReason?: string;
  confidence: number;
  nextActivity?: string;
  nextPrewake?: string;
  /** The time zone whose clock the seasons follow (spec.forecast.timeZone, or the operator's). */
  timeZone?: string;
  /**
   * The chance of activity in a slot at which it counts as "activity expected" (pre-wake, veto), as the
   * awake budget steers it; absent without a budget.
   */
  activityThreshold?: number;
  /**
   * While the forecast is trusted but its advice suspended (forecast activity did not come: a holiday, a changed
   * schedule): since when, and what decides meanwhile. Announced by a ForecastAdviceSuspended Event.
   */
  adviceSuspended?: { since: string; message: string };
  /** The engine's serialised state (forecast/codec.ts), at most 8 KiB. */
  state?: string;
  savedAt?: string;
};

export type ForecastNotice = { type: "Normal" | "Warning"; reason: EventReason; note: string };

type Entry = {
  engine: ForecastEngine;
  /** The slot being filled (not yet learned), whether a look watched it, and whether activity was seen in it. */
  openSlot: number;
  openWatched: boolean;
  active: boolean;
  /** The workload was paused at the last look, which knew its activity: until the next look it saw none. */
  pausedAtLook: boolean;
  /**
   * Until when the last look at the awake workload judged a pause quiet (null: it vetoed one, or could not be
   * acted on): a pause it allowed is not pre-woken for a slot before then. Not saved: a restart pre-wakes as
   * the forecast says.
   */
  quietUntilMs: number | null;
  /** When the state shown was saved, and when the next save is due (null: at the next look). */
  savedAtMs: number | null;
  saveDueAtMs: number | null;
  state: string | undefined;
  /** Notices produced as the engine moved on and not yet confirmed sent: returned by every look until then. */
  unsent: ForecastNotice[];
  /** The chance threshold as the awake budget steers it, and as status last showed it. */
  threshold: number;
  shownThreshold: number;
  /** When the last look was, and the latest activity it knew: where the next look's accounting starts. */
  lastLook: { atMs: number; activityMs: number | null } | null;
  /**
   * A stamp ahead of this clock (another machine's, within the skew allowed) and when a look first knew it: it is
   * activity then, not at every look until this clock reaches it, which would count it in two slots.
   */
  aheadStamp: { stampMs: number; seenAtMs: number } | null;
  /** The ManagedWorkload the engine learned for: one deleted and made again under the same name starts afresh. */
  uid: string | undefined;
  /**
   * The forecast config of the spec as the last look read it: a history read handed over later is learned by it,
   * not by the spec it was asked with (a time zone changed meanwhile would place the seasons twice).
   */
  config: ForecastConfig;
  /**
   * A new engine (nothing saved to restore, or a state discarded) wants the activity history, and is not saved
   * until it is settled (learned, or unavailable for good), so an operator restarted meanwhile reads it again.
   */
  history: "wanted" | "settled";
  /**
   * Turned off by the spec while its notices wait to be sent: it learns and reads nothing, and keeps wanting its
   * history, for when it is turned on again before it is forgotten.
   */
  off: boolean;
  /** Reads of the history that failed, and when the next may start (a retryable failure). */
  historyFailures: number;
  historyRetryAtMs: number;
  /** Since when the trusted forecast's advice is suspended, as status shows it; null while it is not. */
  suspendedSinceMs: number | null;
  /** Whether that suspension's start was announced: only then is its end (a workload paused by hand has neither). */
  suspensionAnnounced: boolean;
  /** Why a long gap reset the engine, told with what its history then brings (the reset is not saved before). */
  resetNote: string | null;
  /**
   * The save times (status.prediction.savedAt) status may show that are not news: the one this engine was
   * restored from as status had it and as this engine shows it (a time ahead of the clock, or unreadable, is shown
   * as the restore's), and those of its own last saves (a save's status write may land late, or fail). A save
   * status shows with any other time was made elsewhere since (an old leader's last write landing late; the
   * cache only moves forward), and this engine would overwrite it: it is restored from instead.
   */
  restoredSaves: string[];
  ownSaves: string[];
};

/** Own saves remembered: a day of hourly saves whose status writes could all have failed. */
const OWN_SAVES_SEEN = 24;

const SUSPENDED_MESSAGE =
  "forecast activity did not come: the clock decides alone, with spec.idle.window, until activity returns " +
  "or an hour passes that the forecast calls quiet";

/** When the suspension status shows began (a time ahead of the clock counts as now), or null. */
function suspendedSince(prediction: PredictionStatus | undefined, nowMs: number): number | null {
  const since = timeOf(prediction?.adviceSuspended?.since);
  return since === null ? null : Math.min(since, nowMs);
}

/**
 * Why a suspension that began at `sinceMs` ended: activity came back (learned in a quarter hour since it began,
 * or the one it began in), or hours the forecast calls quiet passed without any, which ends a silence too.
 */
function resumedBecause(engine: ForecastEngine, sinceMs: number): string {
  const active = engine.lastActiveSlot;
  return active !== null && active >= slotOf(sinceMs)
    ? `activity came back (in the quarter hour from ${iso(slotStartMs(active))})`
    : "an hour the forecast calls quiet passed without activity, so the silence no longer speaks against it";
}

/** Looks further apart than this (the operator was down) are not accounted: nobody saw what happened. */
const MAX_ACCOUNTED_MS = hourMs;

/** Bound on notices kept while Events cannot be sent; the oldest go first. */
const MAX_UNSENT = 20;

/**
 * Reads of the activity history made when Prometheus could not be reached or was overloaded: the first, then
 * after 10, 20 and 40 minutes. The engine learns from now meanwhile.
 */
const HISTORY_ATTEMPTS = 4;
const HISTORY_RETRY_MS = 10 * 60_000;

export type ForecastBookOptions = {
  /**
   * Whether new engines start from the activity history (the operator has a Prometheus to read it from).
   * Without, or with spec.forecast.history None, a new engine learns from now.
   */
  history?: boolean;
};

export type ForecastLook = {
  /** Null when the forecast is off or may not be acted on: the clock decides alone. */
  advice: ForecastAdvice | null;
  prediction: PredictionStatus | undefined;
  /**
   * Phase changes, anomalies and a discarded state, new or not yet confirmed sent: the engine has moved on
   * and would not produce them again, so they are kept until `sent` is called.
   */
  notices: ForecastNotice[];
};

export class ForecastBook {
  readonly #entries = new Map<string, Entry>();
  /**
   * The unknown spec.forecast.timeZone last warned of, per workload: told once per value while this operator runs,
   * though the workload's engine is restored again (a save made elsewhere); forgotten with the workload's engine.
   */
  readonly #unknownZonesTold = new Map<string, { uid: string | undefined; zone: string }>();
  readonly #base: Partial<ForecastConfig>;
  readonly #history: boolean;

  constructor(base: Partial<ForecastConfig> = {}, options: ForecastBookOptions = {}) {
    // Refused here, at start, rather than at every look.
    forecastConfig(base);
    this.#base = base;
    this.#history = options.history ?? false;
  }

  /**
   * Brings the workload's engine up to `nowMs`, learning the slots that closed, and returns its advice and
   * the prediction to show.
   */
  look(
    key: string,
    mw: ManagedWorkload,
    nowMs: number,
    idleWindowMs: number,
    /** The latest activity known before this decision (status, annotations): counted before its slot closes. */
    knownActivityMs: number | null = null,
    /**
     * This check knew the workload's activity (a complete measurement): a slot no such check watched is a gap,
     * not idle, unless activity was seen in it.
     */
    activityWatched = true,
  ): ForecastLook {
    if (mw.spec.forecast?.enabled === false) {
      // Notices not yet sent go out first; the engine is forgotten once they have. Kept meanwhile, it watches
      // nothing: turned on again, the time it was off is a gap, not idleness.
      // Notices of a ManagedWorkload since deleted are not this one's to send.
      const found = this.#entries.get(key);
      const kept = found?.uid === mw.metadata.uid ? found : undefined;
      if (kept?.unsent.length) {
        kept.off = true;
        kept.pausedAtLook = false;
        kept.openWatched = false;
        kept.lastLook = null;
      } else this.#entries.delete(key);
      // Its engine forgotten, an unknown zone is news again when forecasting is turned back on.
      this.#unknownZonesTold.delete(key);
      return { advice: null, prediction: undefined, notices: kept?.unsent ?? [] };
    }
    const config = this.#config(mw);
    const known = this.#entries.get(key);
    const shown = mw.status?.prediction as PredictionStatus | undefined;
    const ours = known && known.uid === mw.metadata.uid ? known : undefined;
    const savedElsewhere =
      ours !== undefined &&
      shown?.state !== undefined &&
      shown.savedAt !== undefined &&
      !ours.restoredSaves.includes(shown.savedAt) &&
      !ours.ownSaves.includes(shown.savedAt);
    const entry = ours && !savedElsewhere ? ours : this.#restore(mw, nowMs, config, ours?.unsent ?? []);
    this.#entries.set(key, entry);
    entry.off = false;
    entry.config = config;
    const activityMs = seenAt(entry, knownActivityMs, nowMs);
    const rezoned = this.#followTimeZone(key, entry, mw, config);
    if (!this.#historyAsked(mw) && entry.history === "wanted") this.#settleHistory(entry, null);
    const nowSlot = slotOf(nowMs);
    // While the forecast is trusted its own idle window applies, to the veto as to the clock.
    const trustedWindowMs = trustedIdleWindowMs(mw, idleWindowMs);
    const budgeted = hasAwakeBudget(mw, trustedWindowMs, idleWindowMs);
    const phaseBefore = entry.engine.phase;
    let learnedNews = false;
    if (nowSlot > entry.openSlot) {
      const activitySlot = activityMs === null ? null : slotOf(activityMs);
      // The silence that suspends advice is judged at the fixed chance, not the budget's (decision 5).
      const learned = observeAll(entry.engine, closedSlots(entry, nowSlot, activitySlot), config);
      // Reset by a gap longer than it bridges (a state restored about a week old, or a week of unknown activity):
      // what it knew is gone, and the activity history may hold what it missed.
      // Not saved until that history settles, the reset would be made again, and announced again, by every
      // restart meanwhile: its phase change is told once, with what the history brings.
      const reset = startedAgain(entry.engine, learned.engine) && this.#historyAsked(mw);
      const notices = learned.events.flatMap(noticeOf);
      const phaseChanged = (n: ForecastNotice) => n.reason === eventReasons.forecastPhaseChanged;
      if (reset) {
        entry.history = "wanted";
        entry.historyFailures = 0;
        entry.historyRetryAtMs = Number.NEGATIVE_INFINITY;
        entry.resetNote = notices.find(phaseChanged)?.note ?? null;
      }
      entry.engine = learned.engine;
      const told = reset ? notices.filter((n) => !phaseChanged(n)) : notices;
      entry.unsent = [...entry.unsent, ...told].slice(-MAX_UNSENT);
      learnedNews = told.length > 0;
      entry.openSlot = nowSlot;
      entry.openWatched = false;
      entry.active = false;
    }
    this.noteActivity(key, activityMs);
    if (entry.openSlot === nowSlot && activityWatched) entry.openWatched = true;
    if (budgeted && isActive(entry.engine.phase)) {
      const spend = spentSince(entry, mw, nowMs, idleWindowMs, activityMs);
      entry.threshold = spendBudget(entry.threshold, spend, config);
    }
    // Never back: a clock stepped back would otherwise have the stretch since accounted twice.
    entry.lastLook = { atMs: Math.max(nowMs, entry.lastLook?.atMs ?? nowMs), activityMs };
    // A paused workload whose activity this look could not know (its queries failed) is not known to be idle.
    entry.pausedAtLook = mw.status?.phase === "Paused" && activityWatched;
    const windowMs = lookIdleWindowMs(entry.engine, mw, nowMs, { idleWindowMs, trustedWindowMs }, config);
    const decisionConfig = budgeted ? withThreshold(config, entry.threshold) : config;
    const paused = mw.status?.phase === "Paused";
    const input = {
      nowMs,
      idleWindowMs: windowMs,
      ...(paused && entry.quietUntilMs !== null ? { searchFromMs: entry.quietUntilMs } : {}),
    };
    const decision = decide(entry.engine, input, decisionConfig);
    const advice = clockAdvice(decision);
    if (!paused) entry.quietUntilMs = quietJudgedUntil(advice, input, decisionConfig);
    // A workload paused by hand is left alone by the forecast: whether its advice holds is news to nobody.
    const byHand = pausedFor(mw.status, "True", PAUSED_BY_HAND);
    const suspensionFlipped = this.#followSuspension(entry, decision, nowMs, byHand);
    // An engine waiting for its history is not saved: restarted, the operator reads the history again. The
    // threshold is shown (and so restored) with the save: one status write an hour, not one per move. A restart
    // goes back to the last one shown, up to an hour of steering. A phase change, and a suspension that starts or
    // ends, is saved with the status that shows it (no extra write), as is a slot learned with news (an anomaly):
    // restored from the state before, a restart would undo it or learn it again, and announce it again.
    const flipped = suspensionFlipped || rezoned || learnedNews || entry.engine.phase !== phaseBefore;
    const saveDue = entry.saveDueAtMs === null || nowMs >= entry.saveDueAtMs || flipped;
    if (entry.history === "settled" && saveDue) {
      const encoded = encodeEngine(entry.engine);
      if (encoded.ok) {
        entry.state = encoded.value;
        entry.savedAtMs = nowMs;
        entry.ownSaves = [...entry.ownSaves, iso(nowMs)].slice(-OWN_SAVES_SEEN);
      } else if (encoded.error.code !== "oversized" && entry.savedAtMs !== null) {
        // Read, but what it learned since cannot be written back (values that overflowed): a saved state damaged
        // beyond what the codec checks field by field. Kept, it would warn every hour, and status would keep the
        // state it came from for every restart to restore. This look is made again on a new engine (which has
        // saved nothing, so it is not discarded in turn).
        const fresh = this.#fresh(mw, nowMs, config, restoredThreshold(entry.shownThreshold, config));
        const why = `could not be learned on (${encoded.error.message})`;
        const { restoredSaves, ownSaves } = entry;
        const replaced = { ...fresh, unsent: entry.unsent, restoredSaves, ownSaves };
        this.#entries.set(key, discarded(replaced, why));
        return this.look(key, mw, nowMs, idleWindowMs, knownActivityMs, activityWatched);
      } else {
        this.#notify(
          entry,
          "Warning",
          eventReasons.forecastStateNotSaved,
          `the forecast state could not be saved (${encoded.error.message}); a restart goes back to the last ` +
            "state saved, and saving is tried again in an hour",
        );
      }
      entry.saveDueAtMs = nowMs + hourMs;
      entry.shownThreshold = Math.round(entry.threshold * 100) / 100;
    }
    const prediction: PredictionStatus = {
      phase: entry.engine.phase,
      phaseReason: entry.engine.phaseReason.message,
      confidence: shownConfidence(decision.confidence),
      timeZone: config.timeZone,
      ...(budgeted ? { activityThreshold: entry.shownThreshold } : {}),
      ...(decision.nextActivityAtMs !== null ? { nextActivity: iso(decision.nextActivityAtMs) } : {}),
      // A pre-wake the forecast may not act on (shadow, advice suspended) will not come: not shown.
      ...(advice?.prewakeAtMs != null ? { nextPrewake: iso(advice.prewakeAtMs) } : {}),
      ...(entry.suspendedSinceMs !== null
        ? { adviceSuspended: { since: iso(entry.suspendedSinceMs), message: SUSPENDED_MESSAGE } }
        : {}),
      ...(entry.state !== undefined ? { state: entry.state } : {}),
      ...(entry.savedAtMs !== null ? { savedAt: iso(entry.savedAtMs) } : {}),
    };
    const note = windowNote(windowMs, trustedWindowMs, idleWindowMs);
    return {
      advice: advice
        ? { ...advice, idleWindowMs: windowMs, ...(note ? { idleWindowNote: note } : {}) }
        : advice,
      prediction,
      notices: entry.unsent,
    };
  }

  /** The notices a look returned were sent as Events: drop them (those produced since stay). */
  sent(key: string, notices: readonly ForecastNotice[]): void {
    const entry = this.#entries.get(key);
    if (entry) entry.unsent = entry.unsent.filter((n) => !notices.includes(n));
  }

  /**
   * Activity the clock saw (its latest time): marks the open slot active when it falls in it. A stamp ahead of
   * this clock that a look knew counts when that look first knew it.
   */
  noteActivity(key: string, activityMs: number | null): void {
    const entry = this.#entries.get(key);
    const atMs =
      activityMs !== null && entry?.aheadStamp?.stampMs === activityMs
        ? entry.aheadStamp.seenAtMs
        : activityMs;
    if (entry && atMs !== null && slotOf(atMs) === entry.openSlot) entry.active = true;
  }

  forget(key: string): void {
    this.#entries.delete(key);
    this.#unknownZonesTold.delete(key);
  }

  /**
   * Whether the workload's engine is new (nothing saved to restore, or a state discarded) and its activity
   * history should be read now (not before the retry after a failed read).
   */
  wantsHistory(key: string, nowMs: number): boolean {
    const entry = this.#entries.get(key);
    return entry?.history === "wanted" && !entry.off && nowMs >= entry.historyRetryAtMs;
  }

  /** Slots of history a new engine learns at once: the window its engine keeps for refits. */
  historyWindowSlots(): number {
    return forecastConfig(this.#base).historyDays * DAY_SLOTS;
  }

  /**
   * Starts a new engine from activity history: a fresh engine learns the points before the open slot, in
   * place of what the engine learned since it was made (the history holds that too, except where Prometheus
   * had no answer yet or saw no activity the engine saw: those slots are learned as the engine learned them),
   * then the slots the engine learned live after the history's end, and is saved with the next look. One notice
   * says what it learned; its phase changes and anomalies on the way are not news.
   */
  learnHistory(key: string, mw: ManagedWorkload, points: readonly GridPoint[]): void {
    const entry = this.#entries.get(key);
    if (!this.#readsHistory(entry, mw)) return;
    const before = points.filter((point) => point.slot < entry.openSlot);
    const known = before.filter((point) => point.value !== null);
    if (known.length === 0) {
      this.#settleHistory(entry, {
        type: "Normal",
        reason: eventReasons.forecastHistoryEmpty,
        note: "no activity history found; learning from now",
      });
      return;
    }
    const config = entry.config;
    const learned = [...before.map((point) => orLive(entry, point)), ...liveSince(entry, before)];
    entry.engine = observeAll(createEngine(config), learned, config).engine;
    const activeSlots = known.filter((point) => (point.value ?? 0) > 0).length;
    const days = known.length / DAY_SLOTS;
    this.#settleHistory(entry, {
      type: "Normal",
      reason: eventReasons.forecastHistoryLearned,
      note:
        `learned ${days.toFixed(1)} days of activity history (active in ${activeSlots} of ${known.length} ` +
        `15-minute slots): forecast ${entry.engine.phase}, confidence ` +
        `${shownConfidence(confidence(entry.engine)).toFixed(2)} (trusted from ${config.activateAt})`,
    });
  }

  /** The engine learns from now, without history (no Prometheus to read it from). */
  skipHistory(key: string): void {
    const entry = this.#entries.get(key);
    if (entry?.history === "wanted") this.#settleHistory(entry, null);
  }

  /**
   * The history could not be read for the ManagedWorkload `mw`. A retryable failure (Prometheus unreachable
   * or overloaded) is read again later, up to HISTORY_ATTEMPTS reads, silently; once it is given up, or at
   * once for a failure that would fail again, the engine learns from now and says why (one Event).
   */
  historyUnavailable(
    key: string,
    mw: ManagedWorkload,
    why: string,
    { retryable, nowMs }: { retryable: boolean; nowMs: number },
  ): void {
    const entry = this.#entries.get(key);
    if (!this.#readsHistory(entry, mw)) return;
    entry.historyFailures += 1;
    if (retryable && entry.historyFailures < HISTORY_ATTEMPTS) {
      entry.historyRetryAtMs = nowMs + HISTORY_RETRY_MS * 2 ** (entry.historyFailures - 1);
      return;
    }
    const reads = entry.historyFailures > 1 ? ` in ${entry.historyFailures} reads` : "";
    this.#settleHistory(entry, {
      type: "Warning",
      reason: eventReasons.forecastHistoryUnavailable,
      note: `could not read the activity history${reads} (${why}); learning from now`,
    });
  }

  /** Whether `entry` is the engine of `mw` and waits for its history, forecasting on. */
  #readsHistory(entry: Entry | undefined, mw: ManagedWorkload): entry is Entry {
    return entry?.history === "wanted" && !entry.off && entry.uid === mw.metadata.uid;
  }

  /** Whether a new engine of this ManagedWorkload starts from its activity history. */
  #historyAsked(mw: ManagedWorkload): boolean {
    return this.#history && (mw.spec.forecast?.history ?? specDefaults.forecastHistory) !== "None";
  }

  /**
   * A trusted forecast whose advice is suspended says so, in status and with one Event when the suspension starts
   * and one when it ends: its phase and confidence alone read as "trusted, nothing coming" while the clock decides
   * alone with the workload's own, longer, idle window. `silent`: status only, no Event. Returns whether the
   * suspension started or ended.
   */
  #followSuspension(entry: Entry, decision: ForecastDecision, nowMs: number, silent: boolean): boolean {
    const suspended = decision.actionable && decision.prewakeReason.code === "forecast-missed";
    if (suspended === (entry.suspendedSinceMs !== null)) return false;
    if (suspended) {
      entry.suspendedSinceMs = nowMs;
      entry.suspensionAnnounced = !silent;
      if (!silent) {
        this.#notify(
          entry,
          "Normal",
          eventReasons.forecastAdviceSuspended,
          `forecast advice suspended: ${decision.prewakeReason.message}`,
        );
      }
    } else {
      const sinceMs = entry.suspendedSinceMs ?? nowMs;
      entry.suspendedSinceMs = null;
      // A forecast no longer trusted says so with its phase change.
      if (decision.actionable && entry.suspensionAnnounced) {
        this.#notify(
          entry,
          "Normal",
          eventReasons.forecastAdviceResumed,
          `forecast advice resumed: ${resumedBecause(entry.engine, sinceMs)}; it vetoes pauses and pre-wakes again`,
        );
      }
    }
    return true;
  }

  #notify(entry: Entry, type: ForecastNotice["type"], reason: EventReason, note: string): void {
    entry.unsent = [...entry.unsent, { type, reason, note }].slice(-MAX_UNSENT);
  }

  /**
   * The engine waits for its history no more: it is saved with the next look (a restart would otherwise read the
   * history again, and tell a reset again), and `told` (what came of the read) is told, after the phase change of
   * the reset that asked for it; without `told` (no read made), that phase change is told alone.
   */
  #settleHistory(entry: Entry, told: ForecastNotice | null): void {
    entry.history = "settled";
    entry.saveDueAtMs = null;
    const { resetNote } = entry;
    entry.resetNote = null;
    if (told)
      this.#notify(entry, told.type, told.reason, resetNote ? `${resetNote}; then ${told.note}` : told.note);
    else if (resetNote) this.#notify(entry, "Normal", eventReasons.forecastPhaseChanged, resetNote);
  }

  #config(mw: ManagedWorkload): ForecastConfig {
    return forecastConfig({
      ...this.#base,
      prewakeLeadMs: prewakeLeadMs(mw.spec),
      timeZone: this.#timeZone(mw),
    });
  }

  /**
   * spec.forecast.timeZone, or the operator's. A zone this runtime does not know (stored before the webhook
   * checked it, or by an operator with a newer time-zone database) gives way to the operator's, and is warned of.
   */
  #timeZone(mw: ManagedWorkload): string {
    const asked = mw.spec.forecast?.timeZone;
    return asked !== undefined && calendarOf(asked).ok ? asked : (this.#base.timeZone ?? "UTC");
  }

  /**
   * Places the engine's seasons by the zone `config` follows, from the history it keeps, when they were placed by
   * another (the spec's zone changed, or a state saved before it did was restored); warns once of an unknown zone
   * asked for. True when the seasons moved: the change is saved with this look's status.
   */
  #followTimeZone(key: string, entry: Entry, mw: ManagedWorkload, config: ForecastConfig): boolean {
    const asked = mw.spec.forecast?.timeZone;
    const told = this.#unknownZonesTold.get(key);
    const uid = mw.metadata.uid;
    // `config` follows another zone than the one asked for only where that one is unknown (see #timeZone).
    if (asked === undefined || asked === config.timeZone) this.#unknownZonesTold.delete(key);
    // A ManagedWorkload made again under the name is told anew: Events are its uid's.
    else if (told?.zone !== asked || told.uid !== uid) {
      this.#unknownZonesTold.set(key, { uid, zone: asked });
      this.#notify(
        entry,
        "Warning",
        eventReasons.forecastTimeZoneUnknown,
        `spec.forecast.timeZone: ${unknownZone(asked)}; the seasons follow ${config.timeZone} meanwhile`,
      );
    }
    const from = entry.engine.model?.calendar.timeZone;
    const placed = inTimeZone(entry.engine, config);
    if (placed === entry.engine) return false;
    entry.engine = placed;
    const to = seasonCalendar(config);
    if (!placed.model || !sameCalendar(placed.model.calendar, to)) return false;
    this.#notify(
      entry,
      "Normal",
      eventReasons.forecastTimeZoneChanged,
      `the forecast's seasons now follow the clock of ${to.timeZone}, not ${from}: placed anew from the history kept`,
    );
    return true;
  }

  /** A new engine for `mw`, learning from now (from its activity history first, where that is asked for). */
  #fresh(mw: ManagedWorkload, nowMs: number, config: ForecastConfig, threshold: number): Entry {
    return {
      engine: createEngine(config),
      openSlot: slotOf(nowMs),
      openWatched: false,
      active: false,
      pausedAtLook: false,
      quietUntilMs: null,
      savedAtMs: null,
      saveDueAtMs: null,
      state: undefined,
      unsent: [],
      threshold,
      shownThreshold: threshold,
      lastLook: null,
      aheadStamp: null,
      uid: mw.metadata.uid,
      config,
      history: this.#historyAsked(mw) ? "wanted" : "settled",
      off: false,
      historyFailures: 0,
      historyRetryAtMs: Number.NEGATIVE_INFINITY,
      suspendedSinceMs: null,
      suspensionAnnounced: false,
      resetNote: null,
      restoredSaves: [],
      ownSaves: [],
    };
  }

  /** The engine of `mw` from the state status shows, after `unsent`, the notices of the one it replaces. */
  #restore(mw: ManagedWorkload, nowMs: number, config: ForecastConfig, unsent: ForecastNotice[]): Entry {
    const prediction = mw.status?.prediction as PredictionStatus | undefined;
    const saved = prediction?.state;
    const nowSlot = slotOf(nowMs);
    const threshold = restoredThreshold(prediction?.activityThreshold, config);
    const fresh = (): Entry => ({
      ...this.#fresh(mw, nowMs, config, threshold),
      unsent: [...unsent],
      restoredSaves: prediction?.savedAt === undefined ? [] : [prediction.savedAt],
    });
    const discard = (why: string) => discarded(fresh(), why);
    if (saved === undefined) return fresh();
    const decoded = decodeEngine(saved, config);
    if (!decoded.ok) return discard(`could not be read (${decoded.error.message})`);
    const engine = decoded.value;
    const nextSlot = engine.nextSlot ?? nowSlot;
    // One slot of clock skew between replicas is tolerated; more means a state from the future.
    if (nextSlot > nowSlot + 1)
      return discard(`was learned up to ${iso(slotStartMs(nextSlot))}, ahead of now`);
    // Older than the longest gap the engine bridges: it would be reset anyway, and catching up slot by slot
    // from a damaged, far-past slot could take the process for ever. The slot that just closed may hold
    // activity, which ends the gap: up to maxGapSlots slots before it, the engine goes on.
    if (nextSlot < nowSlot - 1 - config.maxGapSlots)
      return discard(`was learned up to ${iso(slotStartMs(nextSlot))}, too long ago to go on from`);
    // A save time ahead of the clock (a damaged status, a replica whose clock ran ahead) would hold off the
    // next save until then; an unreadable one counts as now.
    const savedAtMs = Math.min(timeOf(prediction?.savedAt) ?? nowMs, nowMs);
    const suspendedSinceMs = suspendedSince(prediction, nowMs);
    const base = fresh();
    return {
      ...base,
      engine,
      // The slots since the state was saved were not watched: learned as gaps at once (a long gap resets
      // the engine before its advice is used), not when the next slot closes.
      openSlot: nextSlot,
      openWatched: false,
      savedAtMs,
      saveDueAtMs: savedAtMs + hourMs,
      restoredSaves: [...base.restoredSaves, iso(savedAtMs)],
      state: saved,
      history: "settled",
      off: false,
      // A suspension status shows was announced: a restart does not announce it again.
      suspendedSinceMs,
      // Status cannot tell whether it was announced: its end is, rather than a suspension left without one.
      suspensionAnnounced: suspendedSinceMs !== null,
    };
  }
}

/** The engine had started and learning it more started it again: a long gap reset it. */
function startedAgain(before: ForecastEngine, after: ForecastEngine): boolean {
  return before.firstSlot !== null && after.firstSlot !== before.firstSlot;
}

/**
 * A history slot as the live engine learned it too, if it did: active when either saw activity. Prometheus had
 * no answer for some (not yet scraped, say), and sees no activity it does not scrape: a request the doorman held,
 * the activity annotation, a resume, a burst its five-minute rates average away.
 */
function orLive(entry: Entry, point: GridPoint): GridPoint {
  const live = historyAt(entry.engine, point.slot);
  if (Number.isNaN(live)) return point;
  return { slot: point.slot, value: Math.max(point.value ?? 0, live) };
}

/**
 * The slots after the history's last one up to the open slot, as the live engine learned them (a look that
 * came before the history's answer): a gap where it learned none. The slot before the open one is always
 * among them, as a look would leave it.
 */
function liveSince(entry: Entry, history: readonly GridPoint[]): GridPoint[] {
  const after = history.at(-1)?.slot ?? entry.openSlot - 2;
  const points: GridPoint[] = [];
  for (let slot = after + 1; slot < entry.openSlot; slot++) {
    const value = historyAt(entry.engine, slot);
    points.push({ slot, value: Number.isNaN(value) ? null : value });
  }
  return points;
}

/** A threshold read back from status, if it is a chance within the budget's bounds; else the default. */
function restoredThreshold(value: unknown, config: ForecastConfig): number {
  const [low, high] = config.activityProbabilityBounds;
  return typeof value === "number" && value >= low && value <= high ? value : config.activityProbability;
}

/**
 * The idle window while the forecast is trusted: spec.forecast.idleWindow, by default half of
 * spec.idle.window, and never longer than it (a trusted forecast only shortens the wait).
 */
function trustedIdleWindowMs(mw: ManagedWorkload, idleWindowMs: number): number {
  const set = mw.spec.forecast?.idleWindow;
  return Math.min(idleWindowMs, set ? parseDuration(set) : Math.max(MIN_DEFAULT_WINDOW_MS, idleWindowMs / 2));
}

/**
 * The shortest window the spec takes (spec.idle.window's and spec.forecast.idleWindow's minimum), and so the
 * shortest a default one shortens to: a shorter one would pause a workload between ordinary requests.
 */
const MIN_DEFAULT_WINDOW_MS = 60_000;

/**
 * The window a look decides with: the workload's own until the forecast is trusted; then the trusted one, which
 * by default is shorter still where the forecast calls this slot and the next quiet (see `quietAwareIdleWindow`).
 * A window the spec sets is kept as set.
 */
function lookIdleWindowMs(
  engine: ForecastEngine,
  mw: ManagedWorkload,
  nowMs: number,
  windows: { idleWindowMs: number; trustedWindowMs: number },
  config: ForecastConfig,
): number {
  if (!isActive(engine.phase)) return windows.idleWindowMs;
  if (mw.spec.forecast?.idleWindow !== undefined) return windows.trustedWindowMs;
  const quietAware = trustedIdleWindow(engine, nowMs, windows.trustedWindowMs, config);
  return Math.max(Math.min(MIN_DEFAULT_WINDOW_MS, windows.trustedWindowMs), quietAware);
}

const QUIET_WINDOW_NOTE = "shortened: the forecast expects no activity in this quarter hour or the next";
const TRUSTED_WINDOW_NOTE =
  "the trusted forecast's: spec.forecast.idleWindow, by default half of spec.idle.window and never under a minute";

/** Why the window a look decides with is shorter than spec.idle.window, for the pause's message; none if it is not. */
function windowNote(windowMs: number, trustedWindowMs: number, idleWindowMs: number): string | undefined {
  if (windowMs < trustedWindowMs) return QUIET_WINDOW_NOTE;
  return windowMs < idleWindowMs ? TRUSTED_WINDOW_NOTE : undefined;
}

/**
 * Whether the awake budget steers the threshold: asked for, and with a trusted idle window shorter than
 * spec.idle.window (the default). With an equal one the forecast can only add awake time to what the idle
 * window spends, so there is nothing to move and the fixed chance applies.
 */
function hasAwakeBudget(mw: ManagedWorkload, trustedWindowMs: number, idleWindowMs: number): boolean {
  const asked = (mw.spec.forecast?.awakeBudget ?? specDefaults.awakeBudget) === "IdleWindow";
  return asked && trustedWindowMs < idleWindowMs;
}

/** Phases where the operator pauses and wakes the workload: the only ones whose awake time is its doing. */
const ACCOUNTED_PHASES: ReadonlySet<string> = new Set(["Awake", "Pausing", "Paused", "Resuming"]);

/**
 * Awake time since the last look, as the workload spent it and as spec.idle.window alone would have: the
 * state seen now is taken for the whole stretch (looks come every check interval). Nothing is accounted for
 * the first look, after a long absence, or in a phase where the operator does not scale the workload (dry run,
 * unmanaged). With no activity known, the idle window alone counts from the workload's adoption, as the clock
 * does. A workload woken by hand without activity counts as the forecast's spending until its idle window passes.
 */
function spentSince(
  entry: Pick<Entry, "lastLook">,
  mw: ManagedWorkload,
  nowMs: number,
  idleWindowMs: number,
  knownActivityMs: number | null,
): AwakeSpend {
  const last = entry.lastLook;
  const none = { awakeMs: 0, baselineAwakeMs: 0 };
  if (!last || nowMs <= last.atMs || nowMs - last.atMs > MAX_ACCOUNTED_MS) return none;
  // The clock counts its window from the later of the activity known and the workload's adoption or return.
  const startMs = clockStartMs(mw);
  if ((knownActivityMs === null && startMs === null) || !ACCOUNTED_PHASES.has(mw.status?.phase ?? ""))
    return none;
  // A pause by hand: the idle window alone would have paused at the request too, so the forecast saved nothing.
  if (pauseBlocked(mw.status) || pausedFor(mw.status, "True", PAUSED_BY_HAND)) return none;
  // A sync loop's wake (it set a pause back) starts the idle window as activity would: it is not the forecast's.
  const undoneAtMs = timeOf(mw.status?.pausesUndone?.lastAt);
  return {
    awakeMs: mw.status?.phase === "Paused" ? 0 : nowMs - last.atMs,
    baselineAwakeMs: idleWindowAwakeMs(
      last.atMs,
      nowMs,
      [last.activityMs, knownActivityMs, startMs, undoneAtMs],
      idleWindowMs,
    ),
  };
}

/**
 * Where the clock counts the idle window from, besides the activity known: the workload's adoption, or its return
 * under Napwake's watch since (an awake workload's Paused condition says Active from then). A pre-wake is the
 * forecast's spending, not a start of the clock (though one later vetoed reads Active too, from the pre-wake's
 * time: what is left of its first window once the veto ends goes uncharged).
 */
function clockStartMs(mw: ManagedWorkload): number | null {
  const adopted = timeOf(mw.metadata.creationTimestamp);
  const paused = findCondition(mw.status?.conditions, conditionTypes.paused);
  const returned =
    paused?.status === "False" && paused.reason === "Active" ? timeOf(paused.lastTransitionTime) : null;
  return returned !== null && (adopted === null || returned > adopted) ? returned : adopted;
}

/** The last decision could not pause for a reason outside the forecast, which the idle window alone meets too. */
function pauseBlocked(status: ManagedWorkload["status"]): boolean {
  return pausedFor(status, "False", PAUSE_BLOCKED_REASONS);
}

/**
 * The prediction as status shows it after the decision: without a pre-wake that will not be made, one already
 * due (the decision made it, or the workload is awake), one for a workload paused by hand, which the forecast
 * leaves alone, or one for a workload Napwake does not manage now (let go, protected, scaled to zero outside it).
 */
export function shownPrediction(
  prediction: PredictionStatus,
  decided: Pick<ManagedWorkloadStatus, "conditions" | "phase">,
  nowMs: number,
): PredictionStatus {
  if (prediction.nextPrewake === undefined) return prediction;
  const byHand = pausedFor(decided, "True", PAUSED_BY_HAND);
  const due = (timeOf(prediction.nextPrewake) ?? nowMs) <= nowMs;
  if (!byHand && !due && decided.phase !== "Unmanaged") return prediction;
  const { nextPrewake: _, ...rest } = prediction;
  return rest;
}

/**
 * The slots from the open one up to `nowSlot` (excluded) as the engine learns them: 1 where activity was
 * seen, 0 where a look watched without seeing any (or the workload sat paused since the last look), left out
 * (a gap) where nobody watched. The last closed slot is always present, so the engine moves up to now.
 */
export function closedSlots(
  entry: Pick<Entry, "openSlot" | "openWatched" | "active" | "pausedAtLook">,
  nowSlot: number,
  activitySlot: number | null,
): GridPoint[] {
  const points: GridPoint[] = [];
  for (let slot = entry.openSlot; slot < nowSlot; slot++) {
    const open = slot === entry.openSlot;
    if (slot === activitySlot || (open && entry.active)) points.push({ slot, value: 1 });
    else if ((open && entry.openWatched) || entry.pausedAtLook) points.push({ slot, value: 0 });
  }
  if (nowSlot > entry.openSlot && points.at(-1)?.slot !== nowSlot - 1) {
    points.push({ slot: nowSlot - 1, value: null });
  }
  return points;
}

function noticeOf(e: EngineEvent): ForecastNotice[] {
  if (e.kind === "phase-change") {
    return [
      {
        type: "Normal",
        reason: eventReasons.forecastPhaseChanged,
        note: `forecast ${e.from} -> ${e.to}: ${e.reason.message}`,
      },
    ];
  }
  // Activity where the forecast was sure of quiet. Missing activity where it was sure of some is the silence
  // that suspends the advice, which has Events of its own.
  if (e.kind === "anomaly" && e.direction === "above") {
    return [{ type: "Normal", reason: eventReasons.activityAnomaly, note: anomalyNote(e) }];
  }
  return [];
}

/** The engine learns each slot's activity as 0 or 1 (quiet or active), so its figures read as shares of a slot. */
function anomalyNote(e: AnomalyEvent): string {
  const learned =
    e.learned < e.observed
      ? `learned as ${e.learned.toFixed(2)} of an active slot, so one burst does not make a pattern`
      : "learned as it came";
  return (
    `activity in the quarter hour from ${iso(e.atMs)}, which the forecast expected to be quiet ` +
    `(${e.expected.toFixed(2)} expected, interval ${e.lower.toFixed(2)}..${e.upper.toFixed(2)}): ` +
    `counted as activity; ${learned}`
  );
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}

/** `entry` in place of a saved state that could not be used, saying why (one Warning). */
function discarded(entry: Entry, why: string): Entry {
  const note = `the saved forecast state ${why}; learning again from now`;
  return {
    ...entry,
    unsent: [...entry.unsent, { type: "Warning", reason: eventReasons.forecastStateDiscarded, note }],
  };
}

/**
 * Activity known at `nowMs`. A stamp ahead of it is activity when a look first knew it, then and after this clock
 * passes it (Entry.aheadStamp).
 */
function seenAt(entry: Entry, activityMs: number | null, nowMs: number): number | null {
  if (activityMs !== null && entry.aheadStamp?.stampMs === activityMs) return entry.aheadStamp.seenAtMs;
  if (activityMs === null || activityMs <= nowMs) return activityMs;
  entry.aheadStamp = { stampMs: activityMs, seenAtMs: nowMs };
  return nowMs;
}
