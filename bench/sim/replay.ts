// Replays a trace through the decision logic with a simulated clock (one reconcile per minute):
// the activity clock alone, or the clock advised by the forecast engine fed every 15 minutes.

import { decideClock } from "../../controllers/managedworkload/activity-clock.ts";
import {
  bucketEvents,
  clockAdvice,
  createEngine,
  decide,
  type ForecastConfig,
  type ForecastEngine,
  type GridPoint,
  observe,
  SLOT_MS,
  slotOf,
} from "../../forecast/index.ts";
import type { Trace } from "../traces/trace.ts";

export type Policy = { name: string; idleWindowMs: number; useForecast: boolean };

export type PolicyResult = {
  policy: string;
  requests: number;
  /** Requests that found the workload paused or still waking. */
  coldStarts: number;
  awakeHours: number;
  pauses: number;
  prewakes: number;
  /** Reconciles where a due pause was vetoed by the forecast. */
  vetoedChecks: number;
};

const TICK_MS = 60_000;
/** Time from wake to ready; requests arriving meanwhile wait like a cold start. */
const WAKE_MS = 30_000;

export function gridOf(trace: Trace): GridPoint[] {
  return bucketEvents(trace.requestsMs, slotOf(trace.startMs), slotOf(trace.endMs), trace.telemetryGaps);
}

type SimState = {
  paused: boolean;
  awakeSinceMs: number;
  pausedSinceMs: number | null;
  readyAtMs: number;
  lastActivityMs: number | null;
  awakeMs: number;
};

export function replayPolicy(trace: Trace, policy: Policy, config: ForecastConfig): PolicyResult {
  const grid = gridOf(trace);
  const firstSlot = slotOf(trace.startMs);
  let engine: ForecastEngine = createEngine(config);
  const sim: SimState = {
    paused: false,
    awakeSinceMs: trace.startMs,
    pausedSinceMs: null,
    readyAtMs: trace.startMs,
    lastActivityMs: null,
    awakeMs: 0,
  };
  const result: PolicyResult = {
    policy: policy.name,
    requests: trace.requestsMs.length,
    coldStarts: 0,
    awakeHours: 0,
    pauses: 0,
    prewakes: 0,
    vetoedChecks: 0,
  };
  let next = 0;
  for (let t = trace.startMs; t < trace.endMs; t += TICK_MS) {
    if (policy.useForecast && t % SLOT_MS === 0 && t > trace.startMs) {
      const point = grid[slotOf(t) - 1 - firstSlot];
      if (point) engine = observe(engine, point, config).engine;
    }
    const tickEnd = t + TICK_MS;
    for (; next < trace.requestsMs.length && (trace.requestsMs[next] ?? 0) < tickEnd; next++) {
      serveRequest(sim, result, trace.requestsMs[next] ?? t);
    }
    reconcile(sim, result, policy, engine, config, tickEnd);
  }
  if (!sim.paused) sim.awakeMs += trace.endMs - sim.awakeSinceMs;
  result.awakeHours = sim.awakeMs / 3_600_000;
  return result;
}

function serveRequest(sim: SimState, result: PolicyResult, atMs: number) {
  if (sim.paused) {
    result.coldStarts++;
    sim.paused = false;
    sim.awakeSinceMs = atMs;
    sim.readyAtMs = atMs + WAKE_MS;
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
  const needsForecast = policy.useForecast && (sim.paused || nowMs - idleFrom >= policy.idleWindowMs);
  const forecast = needsForecast
    ? clockAdvice(decide(engine, { nowMs, idleWindowMs: policy.idleWindowMs }, config))
    : null;
  const outcome = decideClock({
    nowMs,
    lastActivityMs: sim.lastActivityMs,
    awakeSinceMs: sim.awakeSinceMs,
    pausedSinceMs: sim.pausedSinceMs,
    paused: sim.paused,
    idleWindowMs: policy.idleWindowMs,
    forecast,
  });
  if (outcome.action === "pause") {
    sim.awakeMs += nowMs - sim.awakeSinceMs;
    sim.paused = true;
    sim.pausedSinceMs = nowMs;
    result.pauses++;
  } else if (outcome.action === "wake") {
    sim.paused = false;
    sim.awakeSinceMs = nowMs;
    sim.readyAtMs = nowMs + WAKE_MS;
    result.prewakes++;
  } else if (outcome.reason.startsWith("pause vetoed")) {
    result.vetoedChecks++;
  }
}
