/** Whether a ManagedWorkload is in dry-run, as the plugin can tell. Pure. */
import { findCondition } from "../api/conditions.ts";
import { conditionTypes } from "../api/keys.ts";
import type { ManagedWorkload } from "../api/managedworkload.ts";

/**
 * In dry-run by its own spec, or by the operator's `--dry-run`, which the spec does not show: then the status
 * does (phase DryRun while awake, or the DryRun condition True while it would pause).
 */
export function inDryRun(mw: ManagedWorkload): boolean {
  if (mw.spec.dryRun === true || mw.status?.phase === "DryRun") return true;
  return findCondition(mw.status?.conditions, conditionTypes.dryRun)?.status === "True";
}
