import { annotations } from "./keys.ts";

/** metav1.ObjectMeta of a namespaced object, as our custom resources are read and written. */
export interface NamespacedObjectMeta {
  name: string;
  namespace: string;
  uid?: string;
  generation?: number;
  resourceVersion?: string;
  creationTimestamp?: string;
  deletionTimestamp?: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  ownerReferences?: {
    apiVersion: string;
    kind: string;
    name: string;
    uid: string;
    controller?: boolean;
    blockOwnerDeletion?: boolean;
  }[];
}

/**
 * napwake.dev/paused-from on a workload as a count; a malformed value counts as absent (the validating webhook
 * refuses it).
 */
export function pausedFromOf(target: {
  readonly annotations: Readonly<Record<string, string>>;
}): number | null {
  const raw = target.annotations[annotations.pausedFrom];
  return raw !== undefined && /^[1-9]\d*$/.test(raw) ? Number(raw) : null;
}

/** An RFC 3339 time (a metadata or status timestamp) in ms, or null when absent or unreadable. */
export function timeOf(value: string | undefined | null): number | null {
  if (!value) return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : ms;
}

/**
 * Stamps from other clocks (a laptop's `kubectl napwake pause|resume`, the doorman's host) may be a little
 * ahead of this one: up to this much they count as now rather than being ignored until a later check. Further
 * ahead, the webhook refuses them.
 */
export const CLOCK_SKEW_MS = 5 * 60_000;

/** A stamp further ahead of `nowMs` than clocks may drift apart. */
export function farAhead(stampMs: number, nowMs: number): boolean {
  return stampMs > nowMs + CLOCK_SKEW_MS;
}
