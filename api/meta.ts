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
 * refuses it). A count above int32 is malformed too: no scale write could restore it.
 */
export function pausedFromOf(target: {
  readonly annotations: Readonly<Record<string, string>>;
}): number | null {
  const raw = target.annotations[annotations.pausedFrom];
  return raw !== undefined && isPositiveReplicaCount(raw) ? Number(raw) : null;
}

/** The largest spec.replicas the API server takes (an int32). */
export const maxReplicas = 2 ** 31 - 1;

/** A replica count Napwake could scale to: a whole number from 1 to int32's largest, written without a sign. */
export function isPositiveReplicaCount(value: string): boolean {
  return /^[1-9]\d{0,9}$/.test(value) && Number(value) <= maxReplicas;
}

/** An RFC 3339 time (a metadata or status timestamp) in ms, or null when absent or unreadable. */
export function timeOf(value: string | undefined | null): number | null {
  if (!value) return null;
  const ms = Date.parse(value);
  return Number.isNaN(ms) ? null : ms;
}

// Fractions to the nanosecond at most, as Kubernetes writes times: the status that records a stamp (such as
// lastHandledPauseRequest) has room for no more, and a stamp it could not record would block every status write.
const rfc3339Pattern =
  /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(\.\d{1,9})?([Zz]|([+-])(\d{2}):(\d{2}))$/;

/** RFC 3339 date-time. Strict about the calendar: `Date.parse` alone accepts February 30th. */
export function isRfc3339(value: string): boolean {
  const m = rfc3339Pattern.exec(value);
  if (!m) return false;
  const [year, month, day, hour, minute, second] = m.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const daysInMonth = new Date(Date.UTC(year, month, 0)).getUTCDate();
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth) return false;
  if (hour > 23 || minute > 59 || second > 59) return false;
  if (m[10] !== undefined && (Number(m[10]) > 23 || Number(m[11]) > 59)) return false;
  return true;
}

/**
 * A stamp's time (an annotation such as napwake.dev/pause-requested) in ms, or null when absent or not a time the
 * webhook admits: one stored before the webhook checked it, or while it was off, is not acted on, so what status
 * records of it always fits.
 */
export function stampTimeOf(value: string | undefined): number | null {
  return value !== undefined && isRfc3339(value) ? timeOf(value) : null;
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
