// Replays a trace through the decision logic with a simulated clock (one reconcile per check, every 30 s, as
// the operator checks an awake workload): the activity clock alone, or the clock advised by the forecast engine
// fed every 15 minutes.

import { decideClock, type ForecastAdvice } from "../../controllers/managedworkload/activity-clock.ts";
import {
  type AwakeSpend,
  adviceSuspended,
  bucketEvents,
  clockAdvice,
  createEngine,
  type DecisionInput,
  decide,
  type ForecastConfig,
  type ForecastEngine,
  firstSearchedSlot,
  type GridPoint,
  idleWindowAwakeMs,
  isActive,
  observe,
  observeAll,
  quietAwareIdleWindow,
  quietJudgedUntil,
  SLOT_MS,
  slotOf,
  slotStartMs,
  spendBudget,
  trustedIdleWindow,
  withThreshold,
} from "../../forecast/index.ts";
import type { Trace } from "../traces/trace.ts";

/**
 * What the engine learns per slot: the number of requests, or (as the operator records it) whether any
 * activity was seen in the slot at all.
 */
export type Signal = "requests" | "occupancy";

/** Chance of any request in a grid slot, known in advance: only for reference rows, no policy can know it. */
export type ChanceOf = (slot: number) => number;

export type Policy = {
  name: string;
  idleWindowMs: number;
  /** Run the forecast engine; its advice is passed to the clock once the engine is trusted (active). */
  useForecast: boolean;
  /** Idle window while the forecast is not trusted (learning, shadow); default `idleWindowMs`. */
  untrustedIdleWindowMs?: number;
  /** Keep the engine running for its phase (and so the idle window) but pass none of its advice. */
  ignoreAdvice?: boolean;
  /**
   * Replace the engine's advice with the same rule applied to these chances (the engine still runs, so
   * the trust timeline, and with it the idle windows, stay those of the real policy).
   */
  oracle?: ChanceOf;
  /** What the engine is fed; default "occupancy", as the operator does. */
  signal?: Signal;
  /** Slots the engine learns before the trace starts, as the operator learns a new workload's Prometheus history. */
  history?: readonly GridPoint[];
  /**
   * Steer the chance threshold so the workload is awake no longer than the untrusted idle window alone
   * would keep it (see forecast/budget.ts), as the operator does by default when the trusted window is the
   * shorter one; otherwise the chance stays fixed.
   */
  awakeBudget?: boolean;
};

export type PolicyResult = {
  policy: string;
  requests: number;
  /** Requests that found the workload paused or still waking. */
  coldStarts: number;
  /** Wakes a request started: the requests that found the workload paused, not those that came while it woke. */
  coldWakes: number;
  /** The same, per week from the trace's start. */
  coldStartsByWeek: number[];
  awakeHours: number;
  pauses: number;
  prewakes: number;
  /** Reconciles where a due pause was vetoed by the forecast. */
  vetoedChecks: number;
};

/** The operator's check of an awake workload: every policy is looked at this often, as the operator would. */
export const TICK_MS = 30_000;
/** Time from wake to ready; requests arriving meanwhile wait like a cold start. */
export const WAKE_MS = 30_000;

export function gridOf(trace: Trace, signal: Signal = "requests"): GridPoint[] {
  const counts = bucketEvents(
    trace.requestsMs,
    slotOf(trace.startMs),
    slotOf(trace.endMs),
    trace.telemetryGaps,
  );
  if (signal === "requests") return counts;
  return counts.map(({ slot, value }) => ({ slot, value: value === null ? null : Math.min(1, value) }));
}

/** A workload as the simulator sees it. */
export type SimState = {
  paused: boolean;
  awakeSinceMs: number;
  pausedSinceMs: number | null;
  readyAtMs: number;
  lastActivityMs: number | null;
  awakeMs: number;
  /** As the operator keeps it: until when the last advice on the awake workload judged a pause quiet. */
  quietUntilMs: number | null;
};

export function replayPolicy(
  trace: Trace,
  policy: Policy,
  config: ForecastConfig,
  /** Sees each check as it decides: its time and the engine it decides with. */
  onCheck?: (checkMs: number, engine: ForecastEngine) => void,
): PolicyResult {
  const grid = gridOf(trace, policy.signal ?? "occupancy");
  const firstSlot = slotOf(trace.startMs);
  let engine: ForecastEngine = policy.history
    ? observeAll(createEngine(config), policy.history, config).engine
    : createEngine(config);
  const sim = startSim(trace.startMs);
  const result: PolicyResult = {
    policy: policy.name,
    requests: trace.requestsMs.length,
    coldStarts: 0,
    coldWakes: 0,
    coldStartsByWeek: [],
    awakeHours: 0,
    pauses: 0,
    prewakes: 0,
    vetoedChecks: 0,
  };
  let next = 0;
  let threshold = config.activityProbability;
  const baselineWindowMs = policy.untrustedIdleWindowMs ?? policy.idleWindowMs;
  // As in the operator: only a shorter trusted window gives the budget something to spend.
  const budgeted = !!policy.awakeBudget && !policy.oracle && policy.idleWindowMs < baselineWindowMs;
  for (let t = trace.startMs; t < trace.endMs; t += TICK_MS) {
    const tickEnd = t + TICK_MS;
    const activityBefore = sim.lastActivityMs;
    const pausedAtLook = sim.paused;
    for (; next < trace.requestsMs.length && (trace.requestsMs[next] ?? 0) < tickEnd; next++) {
      const atMs = trace.requestsMs[next] ?? t;
      const before = result.coldStarts;
      serveRequest(sim, result, atMs);
      if (result.coldStarts > before) countInWeek(result.coldStartsByWeek, atMs - trace.startMs);
    }
    const closed = policy.useForecast ? slotClosedAt(tickEnd) : null;
    const point = closed === null ? undefined : grid[closed - firstSlot];
    if (point) engine = observe(engine, point, config).engine;
    if (budgeted && isActive(engine.phase) && sim.lastActivityMs !== null) {
      const spend = bookedSpend(
        t,
        tickEnd,
        pausedAtLook,
        [activityBefore, sim.lastActivityMs],
        baselineWindowMs,
      );
      threshold = spendBudget(threshold, spend, config);
    }
    onCheck?.(tickEnd, engine);
    reconcile(sim, result, policy, engine, withThreshold(config, threshold), tickEnd);
  }
  result.awakeHours = awakeHoursUntil(sim, trace.endMs);
  return result;
}

/**
 * The slot that closes at a check at `checkMs`, or null: as the operator's look, a check on a slot's end learns
 * that slot before it decides anything.
 */
function slotClosedAt(checkMs: number): number | null {
  return checkMs % SLOT_MS === 0 ? slotOf(checkMs) - 1 : null;
}

/**
 * The awake time a check books between `fromMs` and `toMs`, as the operator books it (forecasting.ts
 * spentSince): by the phase the previous check left, so a stretch a request woke the workload in is not
 * charged, against the idle window alone counted in continuous time from the activity known.
 */
export function bookedSpend(
  fromMs: number,
  toMs: number,
  pausedAtLook: boolean,
  activityMs: readonly (number | null)[],
  idleWindowMs: number,
): AwakeSpend {
  return {
    awakeMs: pausedAtLook ? 0 : toMs - fromMs,
    baselineAwakeMs: idleWindowAwakeMs(fromMs, toMs, activityMs, idleWindowMs),
  };
}

const WEEK_MS = 7 * 24 * 3_600_000;

function countInWeek(byWeek: number[], sinceStartMs: number) {
  const week = Math.floor(sinceStartMs / WEEK_MS);
  for (let w = byWeek.length; w <= week; w++) byWeek.push(0);
  byWeek[week] = (byWeek[week] ?? 0) + 1;
}

/** A workload awake and ready at `startMs`, with no activity seen yet. */
export function startSim(startMs: number): SimState {
  return {
    paused: false,
    awakeSinceMs: startMs,
    pausedSinceMs: null,
    readyAtMs: startMs,
    lastActivityMs: null,
    awakeMs: 0,
    quietUntilMs: null,
  };
}

/** Wakes a paused workload at `atMs`; it is ready WAKE_MS later. */
export function wakeAt(sim: SimState, atMs: number) {
  sim.paused = false;
  sim.awakeSinceMs = atMs;
  sim.readyAtMs = atMs + WAKE_MS;
}

/** Pauses an awake workload at `atMs`, counting the awake stretch that ends. */
export function pauseAt(sim: SimState, atMs: number) {
  sim.awakeMs += atMs - sim.awakeSinceMs;
  sim.paused = true;
  sim.pausedSinceMs = atMs;
}

/** Hours awake up to `endMs`, a stretch still open included. */
export function awakeHoursUntil(sim: SimState, endMs: number): number {
  return (sim.awakeMs + (sim.paused ? 0 : endMs - sim.awakeSinceMs)) / 3_600_000;
}

/** A request: a cold start when it finds the workload paused (it wakes) or still waking. */
export function serveRequest(
  sim: SimState,
  result: Pick<PolicyResult, "coldStarts" | "coldWakes">,
  atMs: number,
) {
  if (sim.paused) {
    result.coldStarts++;
    result.coldWakes++;
    wakeAt(sim, atMs);
  } else if (atMs < sim.readyAtMs) {
    result.coldStarts++;
  }
  sim.lastActivityMs = atMs;
}

function reconcile(
  sim: SimState,
  result: PolicyResult,
  policy: Policy,
  engine: ForecastEngine,
  config: ForecastConfig,
  nowMs: number,
) {
  const idleFrom = Math.max(sim.lastActivityMs ?? sim.awakeSinceMs, sim.awakeSinceMs);
  // As in the operator: suspended advice (the forecast missed) leaves the clock alone, with the full window.
  const trusted = policy.useForecast && isActive(engine.phase) && !adviceSuspended(engine, config);
  const idleWindowMs = trusted
    ? trustedWindow(policy, engine, nowMs, config)
    : (policy.untrustedIdleWindowMs ?? policy.idleWindowMs);
  const needsAdvice = trusted && !policy.ignoreAdvice && (sim.paused || nowMs - idleFrom >= idleWindowMs);
  const input = {
    nowMs,
    idleWindowMs,
    ...(sim.paused && sim.quietUntilMs !== null ? { searchFromMs: sim.quietUntilMs } : {}),
  };
  const forecast = needsAdvice ? adviceFor(policy, engine, input, config) : null;
  // As the operator: a pause allowed is judged quiet over the idle window and the lead from this check.
  if (needsAdvice && !sim.paused) sim.quietUntilMs = quietJudgedUntil(forecast, input, config);
  const outcome = decideClock({
    nowMs,
    lastActivityMs: sim.lastActivityMs,
    awakeSinceMs: sim.awakeSinceMs,
    pausedSinceMs: sim.pausedSinceMs,
    paused: sim.paused,
    idleWindowMs,
    forecast,
  });
  if (outcome.action === "pause") {
    pauseAt(sim, nowMs);
    result.pauses++;
  } else if (outcome.action === "wake") {
    wakeAt(sim, nowMs);
    result.prewakes++;
  } else if (outcome.reason.startsWith("pause vetoed")) {
    result.vetoedChecks++;
  }
}

/** The trusted idle window, shortened where the forecast (or the oracle's chances) calls the next slots quiet. */
function trustedWindow(
  policy: Policy,
  engine: ForecastEngine,
  nowMs: number,
  config: ForecastConfig,
): number {
  if (policy.ignoreAdvice) return policy.idleWindowMs;
  if (!policy.oracle) return trustedIdleWindow(engine, nowMs, policy.idleWindowMs, config);
  return quietAwareIdleWindow(policy.oracle, nowMs, policy.idleWindowMs, config);
}

function adviceFor(
  policy: Policy,
  engine: ForecastEngine,
  input: DecisionInput,
  config: ForecastConfig,
): ForecastAdvice | null {
  if (policy.oracle) return oracleAdvice(policy.oracle, input, config);
  return clockAdvice(decide(engine, input, config));
}

/**
 * The engine's rule (pre-wake before, and no pause within the idle window and the pre-wake lead of, a likely slot)
 * on known chances.
 */
export function oracleAdvice(
  chanceOf: ChanceOf,
  input: DecisionInput,
  config: ForecastConfig,
): ForecastAdvice {
  const { nowMs, idleWindowMs } = input;
  const firstSlot = slotOf(nowMs);
  // As the engine's rule: a pause whose pre-wake would be due within the idle window is vetoed too, and a
  // paused workload is pre-woken for no slot its pause was judged on.
  const vetoUntilSlot = slotOf(nowMs + Math.max(0, idleWindowMs + config.prewakeLeadMs - 1));
  for (let slot = firstSearchedSlot(input); slot < firstSlot + config.prewakeSearchSlots; slot++) {
    if (chanceOf(slot) < config.activityProbability) continue;
    return {
      vetoPause: slot <= vetoUntilSlot,
      prewakeAtMs: slotStartMs(slot) - config.prewakeLeadMs,
      reason: "known chance of activity",
    };
  }
  return { vetoPause: false, prewakeAtMs: null, reason: "no activity known ahead" };
}
