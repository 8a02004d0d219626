/**
 * Pauses a sync loop undoes. Argo CD with self-heal, or Flux, sets spec.replicas back to the value in Git
 * shortly after a pause; pausing again after every idle window would restart the pods over and over and save
 * nothing. So an undone pause is recorded, and Napwake holds off pausing for an hour, doubling with each
 * pause undone in a row, up to a day. A pause that holds an hour or more until Napwake wakes the workload
 * clears the record, and one undone more than a week after the last starts the count again. Pure.
 *
 * Who undid it comes from managedFields: Napwake's scale to zero takes `spec.replicas` over, so a sync loop
 * that owns it again while the pause is recorded has set it since.
 */
import type { GitOpsTool, ManagedWorkloadStatus } from "../../api/managedworkload.ts";
import type { ReplicasOwner } from "./gitops.ts";

export type PausesUndone = NonNullable<ManagedWorkloadStatus["pausesUndone"]>;

/** Tools that re-apply spec.replicas on their own, on every sync; helm and kubectl apply only when run. */
const syncLoops: readonly GitOpsTool[] = ["argocd", "flux", "other"];

export const FIRST_HOLD_OFF_MS = 3_600_000;
export const MAX_HOLD_OFF_MS = 24 * 3_600_000;
/** An undone pause this long after the last one starts the count again. */
export const RECORD_EXPIRES_MS = 7 * 24 * 3_600_000;

/** The sync loop that set spec.replicas back while a pause was recorded, or null. */
export function undoneBy(owner: ReplicasOwner | null, pauseRecorded: boolean): ReplicasOwner | null {
  return pauseRecorded && owner && syncLoops.includes(owner.tool) ? owner : null;
}

/** The record after one more pause undone by `owner` at `nowMs`. */
export function recordUndo(
  previous: PausesUndone | undefined,
  owner: ReplicasOwner,
  nowMs: number,
): PausesUndone {
  const lastMs = Date.parse(previous?.lastAt ?? "");
  const inARow = Number.isFinite(lastMs) && nowMs - lastMs < RECORD_EXPIRES_MS;
  return {
    count: (inARow ? (previous?.count ?? 0) : 0) + 1,
    lastAt: new Date(nowMs).toISOString(),
    tool: owner.tool,
    manager: owner.manager,
  };
}

/** How long pausing is held off after `count` pauses undone in a row. */
export function holdOffMs(count: number): number {
  return Math.min(MAX_HOLD_OFF_MS, FIRST_HOLD_OFF_MS * 2 ** Math.max(0, count - 1));
}

/**
 * Until when pausing is held off, or null when it is not (no record, or a record that cannot be read). A record
 * ahead of now (a former leader's fast clock, or this one before it was set back) counts from now, so the hold-off
 * never outlasts its cap.
 */
export function holdOffUntilMs(undone: PausesUndone | undefined, nowMs: number): number | null {
  const lastMs = Date.parse(undone?.lastAt ?? "");
  if (!undone || !Number.isFinite(lastMs) || !(undone.count >= 1)) return null;
  return Math.min(lastMs, nowMs) + holdOffMs(undone.count);
}

/**
 * The record as status should keep it: one stamped ahead of now (a former leader's fast clock, or this one before
 * it was set back) is written back as now, or every check would count the hold-off from that time again.
 */
export function undoneRecordNotAhead(
  undone: PausesUndone | undefined,
  nowMs: number,
): { pausesUndone?: PausesUndone } {
  const lastMs = Date.parse(undone?.lastAt ?? "");
  if (!undone || !(lastMs > nowMs)) return {};
  return { pausesUndone: { ...undone, lastAt: new Date(nowMs).toISOString() } };
}

/** Why a pause due now is held off, or null when it may go ahead. */
export function pauseHeldOff(
  undone: PausesUndone | undefined,
  nowMs: number,
): { untilMs: number; reason: string } | null {
  const untilMs = holdOffUntilMs(undone, nowMs);
  if (!undone || untilMs === null || nowMs >= untilMs) return null;
  const times = undone.count === 1 ? "the last pause" : `the last ${undone.count} pauses`;
  return {
    untilMs,
    reason:
      `${undone.manager ?? undone.tool ?? "a sync loop"} set spec.replicas back after ${times}; not pausing until ` +
      `${new Date(untilMs).toISOString()} (see the GitOpsReplicas condition for the setting that stops it)`,
  };
}

/** The Event note for a pause `owner` undid: what happened, how long Napwake holds off, and the fix. */
export function undoneNote(owner: ReplicasOwner, undone: PausesUndone, replicas: number): string {
  const hours = holdOffMs(undone.count) / 3_600_000;
  return (
    `${owner.manager} set spec.replicas back to ${replicas} while paused (${undone.count} in a row); ` +
    `Napwake holds off pausing for ${hours} h, doubling with each pause undone, up to 24 h. ${owner.message}`
  );
}
