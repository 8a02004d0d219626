// A reference no real policy can match: the workload is kept awake exactly when it is worth it under the
// rates the synthetic trace was drawn from. In each minute the expected first requests of new bursts
// (sessions, jobs) plus the chance that the current session goes on are weighed against a price per
// awake minute; the price is set so the awake time matches a baseline's. It shows how far a policy that
// decides from chances could go if its chances were the true ones.

import type { FirstRequestRates } from "../traces/synthetic.ts";
import type { Trace } from "../traces/trace.ts";
import { awakeHoursUntil, pauseAt, serveRequest, startSim, wakeAt } from "./replay.ts";

export type KnownRates = {
  /** Expected first requests of new bursts per minute, from the trace's start. */
  firstRequests: FirstRequestRates;
  /** Chance the session goes on within the next minute, by whole minutes of quiet since its last request. */
  followUp: Float64Array;
};

export type IdealResult = { coldStarts: number; awakeHours: number };

/** Minutes a wake is started ahead of a minute worth being awake for. */
const LEAD_MINUTES = 2;

/** The policy decides minute by minute, as its rates are per minute. */
const MINUTE_MS = 60_000;

/** Replays `trace` awake in each minute where the expected activity reaches `threshold`. */
export function replayKnownRates(trace: Trace, known: KnownRates, threshold: number): IdealResult {
  const sim = startSim(trace.startMs);
  const result = { coldStarts: 0, coldWakes: 0 };
  const rateAt = (minute: number) => known.firstRequests[minute] ?? 0;
  let next = 0;
  for (let minute = 0; trace.startMs + minute * MINUTE_MS < trace.endMs; minute++) {
    const tickEnd = trace.startMs + (minute + 1) * MINUTE_MS;
    for (; next < trace.requestsMs.length && (trace.requestsMs[next] ?? 0) < tickEnd; next++) {
      serveRequest(sim, result, trace.requestsMs[next] ?? tickEnd);
    }
    const quietMinutes =
      sim.lastActivityMs === null
        ? Number.POSITIVE_INFINITY
        : Math.floor((tickEnd - sim.lastActivityMs) / MINUTE_MS);
    let worth = rateAt(minute + 1) + (known.followUp[quietMinutes] ?? 0) >= threshold;
    for (let ahead = 2; ahead <= LEAD_MINUTES + 1 && !worth; ahead++)
      worth = rateAt(minute + ahead) >= threshold;
    if (worth && sim.paused) wakeAt(sim, tickEnd);
    else if (!worth && !sim.paused) pauseAt(sim, tickEnd);
  }
  return { coldStarts: result.coldStarts, awakeHours: awakeHoursUntil(sim, trace.endMs) };
}

/** Prices per awake minute tried, from nearly free to one burst a minute. */
export const THRESHOLDS = Array.from({ length: 49 }, (_, i) => 10 ** (-4 + i / 12));

/**
 * The reference at `awakeHours`: between the two prices whose awake time brackets it, shared in time
 * (some days at one, the rest at the other), so cold starts and awake time interpolate linearly.
 * Null when no price keeps the workload awake that little.
 */
export function knownRatesAtBudget(
  trace: Trace,
  known: KnownRates,
  awakeHours: number,
  thresholds: readonly number[] = THRESHOLDS,
): IdealResult | null {
  const runs = thresholds.map((threshold) => replayKnownRates(trace, known, threshold));
  let best: IdealResult | null = null;
  for (let i = 0; i < runs.length; i++) {
    const low = runs[i] as IdealResult;
    if (low.awakeHours <= awakeHours && (best === null || low.coldStarts < best.coldStarts)) best = low;
    for (let j = 0; j < runs.length; j++) {
      const high = runs[j] as IdealResult;
      if (!(low.awakeHours < awakeHours && high.awakeHours > awakeHours)) continue;
      const share = (awakeHours - low.awakeHours) / (high.awakeHours - low.awakeHours);
      const mixed = { coldStarts: low.coldStarts + share * (high.coldStarts - low.coldStarts), awakeHours };
      if (best === null || mixed.coldStarts < best.coldStarts) best = mixed;
    }
  }
  return best;
}
