// The idle clock: from when the workload was last active (or last woken), its idle window, and
// optional forecast advice, decides whether to pause, wake or leave it. Pure; every outcome says why.
import { formatDuration } from "../../forecast/index.ts";

/** What the forecast engine advises; only pass it when the engine's decision is actionable. */
export type ForecastAdvice = {
  /** Do not pause: activity is forecast within the idle window. */
  vetoPause: boolean;
  /** Wake a paused workload at or after this time; null when no activity is forecast. */
  prewakeAtMs: number | null;
  /** Human-readable why, copied into the outcome: of the veto while one holds, else of the pre-wake. */
  reason: string;
  /** Why a paused workload is woken when it is (said with the wake); absent: `reason`. */
  prewakeReason?: string;
  /** The idle window to use while this advice holds (spec.forecast.idleWindow); absent: the workload's own. */
  idleWindowMs?: number;
  /** Why that window is what it is, when it is not simply the spec's: said with the pause it allows. */
  idleWindowNote?: string;
};

export type ClockInput = {
  nowMs: number;
  /** Last observed activity (request, connection, custom signal); null if none seen. */
  lastActivityMs: number | null;
  /** When the workload last became awake (a fresh wake gets a full idle window); null if unknown. */
  awakeSinceMs: number | null;
  /** When the workload was paused, or the last activity that pause knew of if earlier; activity after this wakes it. */
  pausedSinceMs: number | null;
  paused: boolean;
  idleWindowMs: number;
  forecast?: ForecastAdvice | null;
};

export type ClockAction = "pause" | "wake" | "stay";

export type ClockOutcome = {
  action: ClockAction;
  reason: string;
  /** Set when the forecast decided: a pause it vetoed, or a wake ahead of forecast activity. */
  byForecast?: "veto" | "prewake";
  /** When the answer could next change without new input (for requeueing); null if only new input changes it. */
  nextCheckAtMs: number | null;
};

export function decideClock(input: ClockInput): ClockOutcome {
  return input.paused ? decidePaused(input) : decideAwake(input);
}

function decidePaused(input: ClockInput): ClockOutcome {
  const { nowMs, lastActivityMs, pausedSinceMs, forecast } = input;
  if (lastActivityMs !== null && pausedSinceMs !== null && lastActivityMs > pausedSinceMs) {
    return { action: "wake", reason: `activity at ${iso(lastActivityMs)} while paused`, nextCheckAtMs: null };
  }
  if (!forecast) {
    return { action: "stay", reason: "paused; no forecast advice: activity wakes it", nextCheckAtMs: null };
  }
  const prewakeAtMs = forecast.prewakeAtMs;
  if (prewakeAtMs === null) {
    return { action: "stay", reason: "paused; no activity forecast", nextCheckAtMs: null };
  }
  if (prewakeAtMs <= nowMs) {
    return {
      action: "wake",
      reason: `pre-wake: ${forecast.prewakeReason ?? forecast.reason}`,
      nextCheckAtMs: null,
      byForecast: "prewake",
    };
  }
  return {
    action: "stay",
    reason: `paused; pre-wake scheduled at ${iso(prewakeAtMs)}`,
    nextCheckAtMs: prewakeAtMs,
  };
}

function decideAwake(input: ClockInput): ClockOutcome {
  const { nowMs, idleWindowMs, forecast } = input;
  const reference = Math.max(
    input.lastActivityMs ?? Number.NEGATIVE_INFINITY,
    input.awakeSinceMs ?? Number.NEGATIVE_INFINITY,
  );
  if (!Number.isFinite(reference)) {
    return {
      action: "stay",
      reason: "no activity or wake time known yet; idle clock not started",
      nextCheckAtMs: null,
    };
  }
  const idleForMs = nowMs - reference;
  if (idleForMs < idleWindowMs) {
    const pauseAtMs = reference + idleWindowMs;
    return {
      action: "stay",
      reason: `idle for ${formatDuration(idleForMs)} of ${formatDuration(idleWindowMs)}; may pause at ${iso(pauseAtMs)}`,
      nextCheckAtMs: pauseAtMs,
    };
  }
  if (forecast?.vetoPause) {
    return {
      action: "stay",
      reason: `pause vetoed: ${forecast.reason}`,
      nextCheckAtMs: null,
      byForecast: "veto",
    };
  }
  const note = forecast?.idleWindowNote ? ` (${forecast.idleWindowNote})` : "";
  return {
    action: "pause",
    reason: `idle for ${formatDuration(idleForMs)}, at least the idle window of ${formatDuration(idleWindowMs)}${note}`,
    nextCheckAtMs: null,
  };
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
