/**
 * One forecast engine per ManagedWorkload, in memory, fed from the activity clock. No IO: the controller
 * asks for advice before deciding, tells what activity it saw after, and writes `status.prediction` (the
 * phase, confidence, next predicted activity and pre-wake, and each hour it learns the engine's state, so a
 * restarted or newly elected operator restores it).
 *
 * The series it learns is one value per 15-minute slot: 1 when the workload was active in the slot, else 0.
 * Slots while this operator was not running are gaps, not idleness.
 */
import { type EventReason, eventReasons } from "../../api/keys.ts";
import { type ManagedWorkload, parseDuration, specDefaults } from "../../api/managedworkload.ts";
import {
  clockAdvice,
  createEngine,
  decide,
  decodeEngine,
  type EngineEvent,
  encodeEngine,
  type ForecastConfig,
  type ForecastEngine,
  forecastConfig,
  type GridPoint,
  isActive,
  observeAll,
  slotOf,
} from "../../forecast/index.ts";
import type { ForecastAdvice } from "./activity-clock.ts";

const hourMs = 3_600_000;

/** What `status.prediction` holds. */
export type PredictionStatus = {
  phase: string;
  phaseReason?: string;
  confidence: number;
  nextActivity?: string;
  nextPrewake?: string;
  /** The engine's serialised state (forecast/codec.ts), at most 8 KiB. */
  state?: string;
  savedAt?: string;
};

export type ForecastNotice = { type: "Normal" | "Warning"; reason: EventReason; note: string };

type Entry = {
  engine: ForecastEngine;
  /** The slot being filled (not yet learned) and whether activity was seen in it. */
  openSlot: number;
  active: boolean;
  savedAtMs: number | null;
  state: string | undefined;
  /** Notices produced as the engine moved on and not yet confirmed sent: returned by every look until then. */
  unsent: ForecastNotice[];
};

/** Bound on notices kept while Events cannot be sent; the oldest go first. */
const MAX_UNSENT = 20;

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
  readonly #base: Partial<ForecastConfig>;

  constructor(base: Partial<ForecastConfig> = {}) {
    this.#base = base;
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
  ): ForecastLook {
    if (mw.spec.forecast?.enabled === false) {
      this.#entries.delete(key);
      return { advice: null, prediction: undefined, notices: [] };
    }
    const config = this.#config(mw);
    const entry = this.#entries.get(key) ?? this.#restore(mw, nowMs, config);
    this.#entries.set(key, entry);
    const nowSlot = slotOf(nowMs);
    this.noteActivity(key, knownActivityMs);
    if (nowSlot > entry.openSlot) {
      const points: GridPoint[] = [];
      for (let slot = entry.openSlot; slot < nowSlot; slot++) {
        points.push({ slot, value: slot === entry.openSlot && entry.active ? 1 : 0 });
      }
      const learned = observeAll(entry.engine, points, config);
      entry.engine = learned.engine;
      entry.unsent = [...entry.unsent, ...learned.events.flatMap(noticeOf)].slice(-MAX_UNSENT);
      entry.openSlot = nowSlot;
      entry.active = false;
    }
    if (entry.savedAtMs === null || nowMs - entry.savedAtMs >= hourMs) {
      const encoded = encodeEngine(entry.engine);
      if (encoded.ok) {
        entry.state = encoded.value;
        entry.savedAtMs = nowMs;
      }
    }
    // While the forecast is trusted its own idle window applies, to the veto as to the clock.
    const trustedWindowMs = mw.spec.forecast?.idleWindow ? parseDuration(mw.spec.forecast.idleWindow) : null;
    const windowMs =
      trustedWindowMs !== null && isActive(entry.engine.phase) ? trustedWindowMs : idleWindowMs;
    const decision = decide(entry.engine, { nowMs, idleWindowMs: windowMs }, config);
    const prediction: PredictionStatus = {
      phase: entry.engine.phase,
      phaseReason: entry.engine.phaseReason.message,
      confidence: Math.round(decision.confidence * 100) / 100,
      ...(decision.nextActivityAtMs !== null ? { nextActivity: iso(decision.nextActivityAtMs) } : {}),
      ...(decision.prewakeAtMs !== null ? { nextPrewake: iso(decision.prewakeAtMs) } : {}),
      ...(entry.state !== undefined ? { state: entry.state } : {}),
      ...(entry.savedAtMs !== null ? { savedAt: iso(entry.savedAtMs) } : {}),
    };
    const advice = clockAdvice(decision);
    return {
      advice: advice && trustedWindowMs !== null ? { ...advice, idleWindowMs: trustedWindowMs } : advice,
      prediction,
      notices: entry.unsent,
    };
  }

  /** The notices a look returned were sent as Events: drop them (those produced since stay). */
  sent(key: string, notices: readonly ForecastNotice[]): void {
    const entry = this.#entries.get(key);
    if (entry) entry.unsent = entry.unsent.filter((n) => !notices.includes(n));
  }

  /** Activity the clock saw (its latest time): marks the open slot active when it falls in it. */
  noteActivity(key: string, activityMs: number | null): void {
    const entry = this.#entries.get(key);
    if (entry && activityMs !== null && slotOf(activityMs) === entry.openSlot) entry.active = true;
  }

  forget(key: string): void {
    this.#entries.delete(key);
  }

  #config(mw: ManagedWorkload): ForecastConfig {
    return forecastConfig({
      ...this.#base,
      prewakeLeadMs: parseDuration(mw.spec.forecast?.prewake ?? specDefaults.prewake),
    });
  }

  /** From status.prediction.state, or a fresh engine; a state that cannot be read is discarded and said so. */
  #restore(mw: ManagedWorkload, nowMs: number, config: ForecastConfig): Entry {
    const saved = (mw.status?.prediction as PredictionStatus | undefined)?.state;
    const fresh = (): Entry => ({
      engine: createEngine(config),
      openSlot: slotOf(nowMs),
      active: false,
      savedAtMs: null,
      state: undefined,
      unsent: [],
    });
    if (saved === undefined) return fresh();
    const decoded = decodeEngine(saved, config);
    if (!decoded.ok) {
      const discarded: ForecastNotice = {
        type: "Warning",
        reason: eventReasons.forecastStateDiscarded,
        note: `the saved forecast state could not be read (${decoded.error.message}); learning again from now`,
      };
      return { ...fresh(), unsent: [discarded] };
    }
    const engine = decoded.value;
    // Slots between the saved state and now were not watched: gaps, learned as such when the next slot closes.
    const openSlot = Math.max(engine.nextSlot ?? slotOf(nowMs), slotOf(nowMs));
    const savedAt = (mw.status?.prediction as PredictionStatus | undefined)?.savedAt;
    return {
      engine,
      openSlot,
      active: false,
      savedAtMs: savedAt ? Date.parse(savedAt) : nowMs,
      state: saved,
      unsent: [],
    };
  }
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
  if (e.kind === "anomaly") {
    return [
      {
        type: "Normal",
        reason: eventReasons.activityAnomaly,
        note: `activity ${e.observed} at ${iso(e.atMs)} is ${e.direction} the forecast interval ${e.lower.toFixed(2)}..${e.upper.toFixed(2)}; counted as activity, learned as ${e.learned.toFixed(2)}`,
      },
    ];
  }
  return [];
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
