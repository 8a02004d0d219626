import type { ManagedWorkload, TargetRef } from "./managedworkload.ts";

/** A ManagedWorkload that targets a workload, as the owner rule sees it. */
export interface OwnerCandidate {
  name: string;
  /** metadata.creationTimestamp as the API server writes it; absent or unreadable counts as newest. */
  creationTimestamp: string | undefined;
  /** metadata.deletionTimestamp is set: a ManagedWorkload being deleted owns nothing. */
  deleting: boolean;
}

/**
 * Which of the ManagedWorkloads targeting one workload owns it: the oldest not being deleted (creation time, then
 * name). The admission webhook and the ManagedWorkload controller both use this rule, so every replica and both
 * of them name the same owner; a let-go is not undone by a fresh stamp, and a younger ManagedWorkload takes over
 * as soon as an older one starts to be deleted.
 */
export function owningCandidate(candidates: Iterable<OwnerCandidate>): string | undefined {
  let best: OwnerCandidate | undefined;
  for (const candidate of candidates) {
    if (candidate.deleting) continue;
    if (!best || older(candidate, best)) best = candidate;
  }
  return best?.name;
}

function older(a: OwnerCandidate, b: OwnerCandidate): boolean {
  const ta = Date.parse(a.creationTimestamp ?? "");
  const tb = Date.parse(b.creationTimestamp ?? "");
  // Without a creation time, one is not older than one with; two without tie, and the name decides (NaN is
  // unequal to itself, so comparing the times first would let the list's order decide).
  if (Number.isNaN(ta) !== Number.isNaN(tb)) return Number.isNaN(tb);
  if (!Number.isNaN(ta) && ta !== tb) return ta < tb;
  return a.name < b.name;
}

/** The ManagedWorkload among `mws` that owns the workload `target` by the rule above, if any targets it. */
export function owningManagedWorkload(
  target: Pick<TargetRef, "kind" | "name">,
  mws: readonly ManagedWorkload[],
): ManagedWorkload | undefined {
  const targeting = mws.filter(
    (m) => m.spec.targetRef.kind === target.kind && m.spec.targetRef.name === target.name,
  );
  const name = owningCandidate(
    targeting.map((m) => ({
      name: m.metadata.name,
      creationTimestamp: m.metadata.creationTimestamp,
      deleting: m.metadata.deletionTimestamp !== undefined,
    })),
  );
  return targeting.find((m) => m.metadata.name === name);
}
