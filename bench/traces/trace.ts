import type { Interval } from "../../forecast/index.ts";

/** Requests over time, as the replay sees them. */
export type Trace = {
  name: string;
  description: string;
  startMs: number;
  endMs: number;
  /** Sorted request times. */
  requestsMs: number[];
  /** Periods when telemetry was missing: requests still happen, the forecast engine sees gaps. */
  telemetryGaps: Interval[];
};
