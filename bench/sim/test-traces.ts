// Small hand-made traces shared by the simulator's tests.

import type { Trace } from "../traces/trace.ts";

const MINUTE_MS = 60_000;

/** One request every two hours, on the hour plus one, for a day from `startMs`. */
export function everyTwoHours(startMs: number): Trace {
  return {
    name: "every-two-hours",
    description: "",
    startMs,
    endMs: startMs + 24 * 60 * MINUTE_MS,
    requestsMs: Array.from({ length: 12 }, (_, i) => startMs + (i * 120 + 60) * MINUTE_MS),
    telemetryGaps: [],
  };
}
