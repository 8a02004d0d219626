/** What counts as activity under a ManagedWorkload's idle rules, read the same way live and from history. */
import { type ActivityQuery, type ManagedWorkload, specDefaults } from "../../api/managedworkload.ts";
import { parseQuantity } from "../../kube/quantity.ts";

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
