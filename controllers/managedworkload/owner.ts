import type { ManagedWorkload } from "../../api/managedworkload.ts";
import { owningManagedWorkload } from "../../api/owners.ts";

/**
 * The other ManagedWorkload that manages `mw`'s target instead of it, by the owner rule the admission webhook
 * follows: an older one, or, while `mw` is being deleted, any that is not. `all` is the namespace's
 * ManagedWorkloads, `mw` among them or not.
 */
export function otherOwner(mw: ManagedWorkload, all: readonly ManagedWorkload[]): string | null {
  const others = all.filter((m) => m.metadata.name !== mw.metadata.name);
  const owner = owningManagedWorkload(mw.spec.targetRef, [mw, ...others]);
  return owner === undefined || owner.metadata.name === mw.metadata.name ? null : owner.metadata.name;
}
