// A forecast started from history, as the operator starts a new engine from Prometheus: the first days of a
// trace are learned at once, and the policies are compared on the days after them only.

import type { GridPoint } from "../../forecast/index.ts";
import type { TraceProfile } from "../traces/synthetic.ts";
import type { Trace } from "../traces/trace.ts";
import { gridOf } from "./replay.ts";

const DAY_MS = 86_400_000;

/**
 * The same profile drawn `days` earlier and that much longer, its change and holidays as many days later, so the
 * days after the first `days` follow the original calendar. `days` must be whole weeks (weekdays stay aligned).
 */
export function extendedBack(profile: TraceProfile, days: number): TraceProfile {
  if (days % 7 !== 0) throw new RangeError(`history must be whole weeks, got ${days} days`);
  return {
    ...profile,
    startMs: profile.startMs - days * DAY_MS,
    days: profile.days + days,
    changeAtDay: profile.changeAtDay + days,
    holidays: profile.holidays.map((day) => day + days),
  };
}

/** `trace` split `days` after its start: the occupancy grid before (what Prometheus would hold) and the trace after. */
export function splitHistory(trace: Trace, days: number): { history: GridPoint[]; rest: Trace } {
  const splitMs = trace.startMs + days * DAY_MS;
  const before: Trace = {
    ...trace,
    endMs: splitMs,
    requestsMs: trace.requestsMs.filter((t) => t < splitMs),
    telemetryGaps: trace.telemetryGaps.filter((gap) => gap.fromMs < splitMs),
  };
  const rest: Trace = {
    ...trace,
    startMs: splitMs,
    requestsMs: trace.requestsMs.filter((t) => t >= splitMs),
    telemetryGaps: trace.telemetryGaps.filter((gap) => gap.toMs > splitMs),
  };
  return { history: gridOf(before, "occupancy"), rest };
}
