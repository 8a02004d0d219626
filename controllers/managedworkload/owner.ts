import type { ManagedWorkload } from "../../api/managedworkload.ts";
import { owningCandidate } from "../../api/owners.ts";

/**
 * The other ManagedWorkload that manages `mw`'s target instead of it, by the owner rule the admission webhook
 * follows: an older one, or, while `mw` is being deleted, any that is not. `all` is the namespace's
 * ManagedWorkloads, `mw` among them or not.
 */
export function otherOwner(mw: ManagedWorkload, all: readonly ManagedWorkload[]): string | null {
  const { kind, name } = mw.spec.targetRef;
  const sameTarget = all.filter(
    (m) =>
      m.metadata.name !== mw.metadata.name &&
      m.spec.targetRef.kind === kind &&
      m.spec.targetRef.name === name,
  );
  const owner = owningCandidate([mw, ...sameTarget].map(candidate));
  return owner === undefined || owner === mw.metadata.name ? null : owner;
}

function candidate(mw: ManagedWorkload) {
  return {
    name: mw.metadata.name,
    creationTimestamp: mw.metadata.creationTimestamp,
    deleting: mw.metadata.deletionTimestamp !== undefined,
  };
}
