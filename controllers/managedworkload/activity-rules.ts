/** What counts as activity under a ManagedWorkload's idle rules, read the same way live and from history. */
import { type ActivityQuery, type ManagedWorkload, specDefaults } from "../../api/managedworkload.ts";
import { parseQuantity } from "../../kube/quantity.ts";
import { parseSampleValue } from "../../rightsizing/prometheus-client.ts";

/** Whether an activity query's value means activity (`activeWhen`, by default Above its threshold). */
export function isQueryActive(query: ActivityQuery, value: number): boolean {
  return (query.activeWhen ?? specDefaults.activeWhen) === "Above"
    ? value > query.threshold
    : value < query.threshold;
}

/** spec.idle.cpuThreshold in cores: the workload's pods together at or above it are active. */
export function cpuThresholdCores(mw: ManagedWorkload): number {
  return parseQuantity(mw.spec.idle?.cpuThreshold ?? specDefaults.cpuThreshold);
}

/**
 * The data of an instant query's answer, as sent: `result` is a vector of series (`{ value: [t, "v"] }`), or
 * for a scalar (`scalar(...)`) the one `[t, "v"]`.
 */
export type InstantAnswer = { resultType?: string; result?: unknown };

/**
 * The value an activity query gives the clock: a scalar's, or the first series with a number (a NaN, 0/0,
 * is no value), as the history reads the first series with a value at each step; null when there is none.
 * `+Inf` and `-Inf` are values: above and below any threshold.
 */
export function firstValue(answer: InstantAnswer | undefined): number | null {
  if (answer?.resultType === "scalar") {
    const value = parseSampleValue((answer.result as [number, string] | undefined)?.[1]);
    return Number.isNaN(value) ? null : value;
  }
  const series = Array.isArray(answer?.result) ? (answer.result as { value?: [number, string] }[]) : [];
  for (const item of series) {
    const value = parseSampleValue(item?.value?.[1]);
    if (!Number.isNaN(value)) return value;
  }
  return null;
}
