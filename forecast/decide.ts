// Turns the forecast into the two decisions the reconciler needs: when to pre-wake a paused
// workload, and whether to veto a pause. Only active phases may be acted on; in `shadow` the same
// decision is returned with `actionable: false` so the caller can record what it would have done.

import type { ForecastConfig } from "./config.ts";
import { formatDuration } from "./duration.ts";
import {
  confidence,
  type ForecastEngine,
  isActive,
  type Phase,
  type Reason,
  shownConfidence,
} from "./engine.ts";
import { patternMean } from "./forecast.ts";
import { SLOT_MS, slotOf, slotStartMs } from "./grid.ts";
import { activityProbability, isActivityExpected } from "./probability.ts";
import { silenceLikelihood } from "./silence.ts";

export type VetoCode =
  | "activity-forecast-in-idle-window"
  | "quiet-forecast-in-idle-window"
  | "no-forecast"
  | "forecast-missed";
export type PrewakeCode =
  | "activity-forecast-ahead"
  | "no-activity-in-search-horizon"
  | "no-forecast"
  | "forecast-missed";
export type ActionableCode = "active" | "shadow" | "learning";

export type ForecastDecision = {
  phase: Phase;
  /** True only in active phases; otherwise the decision is for the record. */
  actionable: boolean;
  actionableReason: Reason<ActionableCode>;
  confidence: number;
  /**
   * Start of the first slot where activity is expected, the current slot included (so up to 15 minutes in the
   * past): the same at every look within a slot, so the status it is shown in does not change on each one.
   */
  nextActivityAtMs: number | null;
  /** When to wake a paused workload (may be in the past: then wake now). */
  prewakeAtMs: number | null;
  prewakeReason: Reason<PrewakeCode>;
  /** Do not pause: activity is expected within the idle window (plus the pre-wake lead). */
  vetoPause: boolean;
  vetoReason: Reason<VetoCode>;
};

export type DecisionInput = {
  nowMs: number;
  idleWindowMs: number;
  /**
   * For a paused workload, when what its pause was judged on ends (`quietJudgedUntil` at the pause): the slots
   * before were judged quiet then, so its pre-wake is for a slot after them. Steered since by the awake budget, a
   * lower threshold would otherwise wake it, minutes after the pause, for a slot the pause was allowed over.
   */
  searchFromMs?: number;
};

/**
 * The first slot a pre-wake is searched from: the current one, or for a paused workload the first after those its
 * pause was judged on (`searchFromMs`; a judgement that ended mid-slot covered that slot).
 */
export function firstSearchedSlot(input: DecisionInput): number {
  const firstSlot = slotOf(input.nowMs);
  return input.searchFromMs === undefined
    ? firstSlot
    : Math.max(firstSlot, slotOf(input.searchFromMs - 1) + 1);
}

/**
 * Until when a pause the advice (`clockAdvice` of a decision on `input`) allows is judged quiet: the idle window
 * and the pre-wake lead from now. Null when there is no advice to act on, or it vetoes the pause.
 */
export function quietJudgedUntil(
  advice: { vetoPause: boolean } | null,
  input: DecisionInput,
  config: ForecastConfig,
): number | null {
  if (advice === null || advice.vetoPause) return null;
  return input.nowMs + input.idleWindowMs + config.prewakeLeadMs;
}

export function decide(
  engine: ForecastEngine,
  input: DecisionInput,
  config: ForecastConfig,
): ForecastDecision {
  const score = confidence(engine);
  const actionableReason = actionableReasonOf(engine.phase, score);
  const base = {
    phase: engine.phase,
    actionable: isActive(engine.phase),
    actionableReason,
    confidence: score,
  };
  const firstSlot = slotOf(input.nowMs);
  // A pause is vetoed when the forecast would wake the workload again within the idle window: when activity
  // is expected within the idle window plus the pre-wake lead. A pause whose pre-wake is due at once would
  // be a wake, and perhaps a cold start, for nothing.
  const vetoHorizonMs = input.idleWindowMs + config.prewakeLeadMs;
  const vetoSlots = slotOf(input.nowMs + Math.max(0, vetoHorizonMs - 1)) - firstSlot + 1;
  // Activity is searched for the pre-wake lead and a day beyond it: a pre-wake must be known before it is due.
  const searchSlots = Math.max(
    vetoSlots,
    config.prewakeSearchSlots + Math.ceil(config.prewakeLeadMs / SLOT_MS),
  );

  const missed = missedReason(engine, config);
  if (missed) {
    return {
      ...base,
      nextActivityAtMs: null,
      prewakeAtMs: null,
      prewakeReason: missed,
      vetoPause: false,
      vetoReason: missed,
    };
  }
  const fromSlot = firstSearchedSlot(input);
  const activeSlot = firstSlotWithActivity(
    engine,
    fromSlot,
    Math.max(0, firstSlot + searchSlots - fromSlot),
    config,
  );
  if (activeSlot === undefined) {
    const none = { code: "no-forecast" as const, message: `no forecast yet (phase ${engine.phase})` };
    return {
      ...base,
      nextActivityAtMs: null,
      prewakeAtMs: null,
      prewakeReason: none,
      vetoPause: false,
      vetoReason: none,
    };
  }
  if (activeSlot === null) {
    const hours = Math.floor((searchSlots * SLOT_MS) / 3_600_000);
    return {
      ...base,
      nextActivityAtMs: null,
      prewakeAtMs: null,
      prewakeReason: {
        code: "no-activity-in-search-horizon",
        message: `no activity forecast in the next ${hours} h`,
      },
      vetoPause: false,
      vetoReason: quietReason(input.idleWindowMs),
    };
  }
  const activityAtMs = slotStartMs(activeSlot);
  const prewakeAtMs = slotStartMs(activeSlot) - config.prewakeLeadMs;
  const vetoPause = activeSlot < firstSlot + vetoSlots;
  const chance = Math.round(
    100 * activityProbability(patternMean(engine, activeSlot, config) ?? 0, engine.burstSize),
  );
  const when = forecastWhen(activityAtMs, activeSlot === firstSlot, chance);
  return {
    ...base,
    nextActivityAtMs: activityAtMs,
    prewakeAtMs,
    prewakeReason: {
      code: "activity-forecast-ahead",
      message: `activity forecast ${when}; ${wokenHow(input.nowMs, prewakeAtMs, activityAtMs)}`,
    },
    vetoPause,
    vetoReason: vetoPause
      ? {
          code: "activity-forecast-in-idle-window",
          message: `activity forecast ${when}, within the idle window and the pre-wake lead`,
        }
      : quietReason(input.idleWindowMs),
  };
}

/** A pre-wake is on time within this of when it was due (a check a little late). */
const ON_TIME_MS = 60_000;

/**
 * How a pre-wake made now stands to the activity it is for: the lead as planned, or, made late (the operator was
 * down when it was due, the forecast was just turned on or learned), the lead that was left, or none.
 */
function wokenHow(nowMs: number, prewakeAtMs: number, activityAtMs: number): string {
  const leadMs = activityAtMs - prewakeAtMs;
  if (nowMs <= prewakeAtMs + ON_TIME_MS) return `woken ${formatDuration(leadMs)} before it`;
  const leftMs = activityAtMs - nowMs;
  const late = `late for the ${formatDuration(leadMs)} lead`;
  if (leftMs <= 0) return `woken late, after it began (the ${formatDuration(leadMs)} lead was missed)`;
  if (leftMs < 60_000) return `woken under a minute before it, ${late}`;
  return `woken ${formatDuration(Math.floor(leftMs / 60_000) * 60_000)} before it, ${late}`;
}

/**
 * When activity is forecast, for a message. The current quarter hour is named as such: its start, up to 15
 * minutes ago, read alone would look like a forecast of the past.
 */
function forecastWhen(slotStartAtMs: number, current: boolean, chance: number): string {
  const at = new Date(slotStartAtMs).toISOString();
  return current
    ? `in the current quarter hour (${chance}% chance in the 15 min from ${at})`
    : `from ${at} (${chance}% chance in 15 min)`;
}

function quietReason(idleWindowMs: number): Reason<VetoCode> {
  return {
    code: "quiet-forecast-in-idle-window",
    message: `no activity forecast in the next ${formatDuration(idleWindowMs)}`,
  };
}

function actionableReasonOf(phase: Phase, score: number): Reason<ActionableCode> {
  const shown = shownConfidence(score).toFixed(2);
  if (isActive(phase)) return { code: "active", message: `forecast trusted (confidence ${shown})` };
  if (phase === "shadow") {
    return { code: "shadow", message: `forecast recorded, not acted on (confidence ${shown})` };
  }
  return { code: "learning", message: "too little history: the activity clock decides alone" };
}

/** Slots, the current one first, whose chance decides whether the forecast calls the time ahead quiet. */
const QUIET_SLOTS = 2;

/**
 * The idle window while the forecast is trusted: `trustedWindowMs`, shortened to the config's
 * `quietIdleWindowShare` of it where `chanceOf` gives each of the current slot and the next a chance of activity
 * below `quietProbability` (not without a chance, or with the rule off).
 */
export function quietAwareIdleWindow(
  chanceOf: (slot: number) => number | null,
  nowMs: number,
  trustedWindowMs: number,
  config: ForecastConfig,
): number {
  if (!(config.quietProbability > 0)) return trustedWindowMs;
  const first = slotOf(nowMs);
  for (let slot = first; slot < first + QUIET_SLOTS; slot++) {
    const chance = chanceOf(slot);
    if (chance === null || chance >= config.quietProbability) return trustedWindowMs;
  }
  return Math.round(trustedWindowMs * config.quietIdleWindowShare);
}

/**
 * `quietAwareIdleWindow` on the learned pattern's chances, as for decisions: the activity just seen is the idle
 * window's business.
 */
export function trustedIdleWindow(
  engine: ForecastEngine,
  nowMs: number,
  trustedWindowMs: number,
  config: ForecastConfig,
): number {
  const chanceOf = (slot: number) => {
    const mean = patternMean(engine, slot, config);
    return mean === null ? null : activityProbability(mean, engine.burstSize);
  };
  return quietAwareIdleWindow(chanceOf, nowMs, trustedWindowMs, config);
}

/** undefined: no model; null: nothing above threshold in range; else the first slot above it. */
function firstSlotWithActivity(
  engine: ForecastEngine,
  fromSlot: number,
  count: number,
  config: ForecastConfig,
): number | null | undefined {
  for (let slot = fromSlot; slot < fromSlot + count; slot++) {
    const mean = patternMean(engine, slot, config);
    if (mean === null) return undefined;
    if (isActivityExpected(mean, engine.burstSize, config)) return slot;
  }
  return null;
}

/** Whether pre-wake and veto are suspended because forecast activity did not come (see `missedReason`). */
export function adviceSuspended(engine: ForecastEngine, config: ForecastConfig): boolean {
  return missedReason(engine, config) !== null;
}

/**
 * Why pre-wake and veto are suspended, or null. Either the legacy run of missed slots reached its
 * limit, or the current silence had less than `missedLikelihood` chance under the forecasts made as
 * it went (see `silence.ts`).
 */
function missedReason(engine: ForecastEngine, config: ForecastConfig): Reason<"forecast-missed"> | null {
  if (engine.missedRun >= config.suspendAfterMissedSlots) {
    return {
      code: "forecast-missed",
      message: `forecast activity did not come for ${engine.missedRun} slots; the clock decides until it does`,
    };
  }
  const { slots } = engine.silence;
  const likelihood = silenceLikelihood(engine.silence);
  if (slots === 0 || likelihood >= config.missedLikelihood) return null;
  return {
    code: "forecast-missed",
    message:
      `no activity in ${slots} quarter hours where it was expected (a ${(likelihood * 100).toFixed(2)}% chance ` +
      "under the forecast); the clock decides until activity returns or an hour passes that the forecast calls quiet",
  };
}

/**
 * Advice for the activity clock: the decision when it may be acted on, else null (the clock decides alone,
 * with the workload's own idle window). Suspended advice (the forecast missed) is none: the shorter idle window
 * is granted because the forecast covers the hours where traffic is expected, and just now it does not.
 */
export function clockAdvice(decision: ForecastDecision): {
  vetoPause: boolean;
  prewakeAtMs: number | null;
  reason: string;
  prewakeReason: string;
} | null {
  if (!decision.actionable || decision.prewakeReason.code === "forecast-missed") return null;
  const reason = decision.vetoPause ? decision.vetoReason.message : decision.prewakeReason.message;
  return {
    vetoPause: decision.vetoPause,
    prewakeAtMs: decision.prewakeAtMs,
    reason,
    prewakeReason: decision.prewakeReason.message,
  };
}
