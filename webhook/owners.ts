import type { KubeObject } from "./admission.ts";
import { specTargetRef, type TargetOf } from "./managedworkloads.ts";
import type { OwnerLookup, WorkloadKind } from "./workloads.ts";

/**
 * The ManagedWorkload (by name) that owns `kind/name` in `namespace`, among `managedWorkloads`: those being
 * deleted are left out (a let-go must not be undone by a fresh stamp), and when several target the same
 * workload the oldest wins (creationTimestamp, then name), so every replica answers the same.
 */
export function ownerAmong(
  managedWorkloads: readonly KubeObject[],
  namespace: string,
  kind: WorkloadKind,
  name: string,
  targetOf: TargetOf = specTargetRef,
): string | undefined {
  let best: { name: string; created: string } | undefined;
  for (const mw of managedWorkloads) {
    const meta = mw.metadata;
    if (!meta?.name || meta.namespace !== namespace || meta.deletionTimestamp) continue;
    const target = targetOf(mw);
    if (target?.kind !== kind || target.name !== name) continue;
    const candidate = { name: meta.name, created: String(meta.creationTimestamp ?? "") };
    if (!best || older(candidate, best)) best = candidate;
  }
  return best?.name;
}

function older(a: { name: string; created: string }, b: { name: string; created: string }): boolean {
  const ta = Date.parse(a.created);
  const tb = Date.parse(b.created);
  // Without a creation time, one is not older than one with; two without tie, and the name decides (NaN is
  // unequal to itself, so comparing the times first would let the list's order decide).
  if (Number.isNaN(ta) !== Number.isNaN(tb)) return Number.isNaN(tb);
  if (!Number.isNaN(ta) && ta !== tb) return ta < tb;
  return a.name < b.name;
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
