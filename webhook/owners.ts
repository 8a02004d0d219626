import { type OwnerCandidate, owningCandidate } from "../api/owners.ts";
import type { KubeObject } from "./admission.ts";
import { specTargetRef, type TargetOf } from "./managedworkloads.ts";
import type { OwnerLookup, WorkloadKind } from "./workloads.ts";

/**
 * The ManagedWorkload (by name) that owns `kind/name` in `namespace`, among `managedWorkloads`, by the owner rule
 * the controller also follows (`owningCandidate`).
 */
export function ownerAmong(
  managedWorkloads: readonly KubeObject[],
  namespace: string,
  kind: WorkloadKind,
  name: string,
  targetOf: TargetOf = specTargetRef,
): string | undefined {
  const candidates: OwnerCandidate[] = [];
  for (const mw of managedWorkloads) {
    const meta = mw.metadata;
    if (!meta?.name || meta.namespace !== namespace) continue;
    const target = targetOf(mw);
    if (target?.kind !== kind || target.name !== name) continue;
    candidates.push({
      name: meta.name,
      creationTimestamp: meta.creationTimestamp === undefined ? undefined : String(meta.creationTimestamp),
      deleting: Boolean(meta.deletionTimestamp),
    });
  }
  return owningCandidate(candidates);
}

/**
 * An OwnerLookup over an informer cache. `list(namespace)` returns undefined until the cache has synced:
 * the lookup then throws, so the handlers fail open instead of stripping every stamp from an empty cache.
 */
export function cachedOwnerLookup(
  list: (namespace: string) => readonly KubeObject[] | undefined,
): OwnerLookup {
  return {
    ownerOf(namespace, kind, name) {
      const managedWorkloads = list(namespace);
      if (!managedWorkloads) throw new Error("the ManagedWorkload cache has not synced yet");
      return ownerAmong(managedWorkloads, namespace, kind, name);
    },
  };
}
