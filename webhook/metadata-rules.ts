import { annotations, group, labels } from "../api/keys.ts";
import { CLOCK_SKEW_MS, farAhead, isPositiveReplicaCount, isRfc3339 } from "../api/meta.ts";
import { quotedValue } from "../api/text.ts";

/**
 * What a valid value of each `napwake.dev/` annotation and label looks like. A problem message names the
 * key, the bad value and the fix, because it is shown as-is by kubectl.
 */

interface Rule {
  valid: (value: string) => boolean;
  /** "must be …", completing the sentence "it must be …". */
  expected: string;
  example: string;
}

const prefix = `${group}/`;

/** A time something happened or was asked for (every annotation that takes a time): never one far ahead. */
const rfc3339: Rule = {
  valid: isRfc3339,
  expected: "an RFC 3339 time, to the nanosecond at most",
  example: "2026-01-31T09:30:00Z",
};

const rightsizingMode: Rule = {
  valid: (v) => v === "off" || v === "audit" || v === "auto-patch",
  expected: "one of off, audit, auto-patch",
  example: "audit",
};

const annotationRules: Record<string, Rule> = {
  [annotations.managedBy]: {
    valid: isDnsSubdomain,
    expected: "the name of a ManagedWorkload in the same namespace (a DNS-1123 name)",
    example: "my-app",
  },
  [annotations.pausedFrom]: {
    valid: isPositiveReplicaCount,
    expected: "a positive integer up to 2147483647 (the replica count to restore on resume)",
    example: "3",
  },
  [annotations.protected]: {
    valid: (v) => v === "true" || v === "false",
    expected: '"true" or "false"',
    example: "true",
  },
  [annotations.lastRequest]: rfc3339,
  [annotations.activity]: rfc3339,
  [annotations.pauseRequested]: rfc3339,
  [annotations.resumeRequested]: rfc3339,
  [annotations.cpuMode]: rightsizingMode,
  [annotations.memoryMode]: rightsizingMode,
};

export const knownAnnotations: readonly string[] = Object.values(annotations);

/** The kinds of object Napwake reads `napwake.dev/` annotations on. */
export type AnnotatedKind = "workload" | "ManagedWorkload";

/** Annotations read on a ManagedWorkload (kubectl napwake pause|resume); every other one, on the workload. */
const managedWorkloadAnnotations: readonly string[] = [
  annotations.pauseRequested,
  annotations.resumeRequested,
];

function readOn(key: string): AnnotatedKind {
  return managedWorkloadAnnotations.includes(key) ? "ManagedWorkload" : "workload";
}

/** What to do instead of setting `key` on the kind Napwake does not read it on. */
const elsewhereFix: Record<AnnotatedKind, (key: string) => string> = {
  ManagedWorkload: () =>
    "run kubectl napwake pause or resume, which sets it on the workload's ManagedWorkload",
  workload: (key) =>
    key === annotations.protected
      ? "set spec.protected: true here, or annotate the workload"
      : "set it on the target workload",
};

export interface Metadata {
  annotations?: Record<string, string>;
  labels?: Record<string, string>;
}

/**
 * Problems with the `napwake.dev/` annotations and the `napwake.dev/managed` label of `meta`. With `old`
 * (an UPDATE), only keys added or changed are checked: a bad value already stored (written while the webhook
 * was down) must not block unrelated writes, such as a rollout or the removal of a finalizer.
 */
export function metadataProblems(
  meta: Metadata | undefined,
  old?: Metadata,
  on: AnnotatedKind = "workload",
  nowMs?: number,
): string[] {
  return [
    ...changedNapwakeKeys(meta, old, "annotations").map(([key, value]) =>
      annotationProblem(key, value, on, nowMs),
    ),
    ...changedNapwakeKeys(meta, old, "labels").map(([key, value]) => labelProblem(key, value, on)),
  ].filter((problem) => problem !== undefined);
}

/** The `napwake.dev/` annotations or labels of `meta` that `old` (an UPDATE's stored object) did not hold as they are. */
function changedNapwakeKeys(
  meta: Metadata | undefined,
  old: Metadata | undefined,
  field: keyof Metadata,
): [key: string, value: string][] {
  return Object.entries(meta?.[field] ?? {}).filter(
    ([key, value]) => key.startsWith(prefix) && old?.[field]?.[key] !== value,
  );
}

const knownLabels: readonly string[] = Object.values(labels);

/**
 * Problems with the `napwake.dev/` metadata of a Namespace, which Napwake reads two keys of: the label
 * `napwake.dev/managed` (opt its workloads in or out) and the annotation `napwake.dev/protected`. Any other
 * would do nothing there, and a bad `managed` value reads as an opt-out that lets go of every workload in it.
 * With `old` (an UPDATE), only keys added or changed are checked, as for workloads.
 */
export function namespaceMetadataProblems(meta: Metadata | undefined, old?: Metadata): string[] {
  const onNamespace = `a Namespace takes the label ${labels.managed} and the annotation ${annotations.protected}`;
  return [
    ...changedNapwakeKeys(meta, old, "labels").map(([key, value]) =>
      key === labels.managed
        ? labelProblem(key, value)
        : `label ${key} is not read on a Namespace. Fix: remove it; ${onNamespace}.`,
    ),
    ...changedNapwakeKeys(meta, old, "annotations").map(([key, value]) =>
      key === annotations.protected
        ? annotationProblem(key, value)
        : `annotation ${key} is not read on a Namespace. Fix: remove it; ${onNamespace}.`,
    ),
  ].filter((problem) => problem !== undefined);
}

/**
 * A `napwake.dev/` label Napwake does not read (a typo, an annotation given as a label, or a workload's label on
 * a ManagedWorkload) would do nothing.
 */
function labelProblem(key: string, value: string, on: AnnotatedKind = "workload"): string | undefined {
  if (on === "ManagedWorkload" && knownLabels.includes(key)) {
    return `label ${key} does nothing on a ManagedWorkload: Napwake reads it on the workload. Fix: ${labelOnTheWorkload(key)}.`;
  }
  if (key === labels.managed && !isBoolean(value)) {
    return (
      `label ${labels.managed}=${JSON.stringify(value)} is invalid: it must be "true" (opt in) or "false" (opt out). ` +
      `Fix: set it to "true" or "false", or remove it.`
    );
  }
  if (key === labels.ignore) return ignoreProblem(value);
  if (knownLabels.includes(key)) return undefined;
  if (knownAnnotations.includes(key)) return annotationAsLabel(key, on);
  // Only keys read here are suggested: a workload's label on a ManagedWorkload would be refused again.
  if (on === "ManagedWorkload") {
    return `label ${key} is not a Napwake label, and Napwake reads no napwake.dev/ label on a ManagedWorkload. Fix: remove it.`;
  }
  return `label ${key} is not a Napwake label.${didYouMean(key, knownLabels)} Fix: remove it, or use one of ${knownLabels.join(", ")}.`;
}

/** An annotation given as a label: set as an annotation, on the kind Napwake reads it on. */
function annotationAsLabel(key: string, on: AnnotatedKind): string {
  const where = readOn(key);
  if (where === on) {
    return `label ${key} does nothing: Napwake reads ${key} as an annotation. Fix: set it as an annotation instead.`;
  }
  const there = where === "workload" ? "the workload (Deployment or StatefulSet)" : "a ManagedWorkload";
  return `label ${key} does nothing on a ${on}: Napwake reads it as an annotation on ${there}. Fix: ${elsewhereFix[where](key)}.`;
}

/** Napwake lets a workload go while it carries the ignore label, whatever its value: one that says "no" misleads. */
function ignoreProblem(value: string): string | undefined {
  if (!/^(false|no|off|0)$/i.test(value.trim())) return undefined;
  return (
    `label ${labels.ignore}=${JSON.stringify(value)} would have Napwake let the workload go: the label ignores a ` +
    `workload by being there, whatever its value. Fix: remove it to have Napwake manage the workload, or set it ` +
    `to "true" to keep Napwake away.`
  );
}

/**
 * What is wrong with the `napwake.dev/` annotation `key`=`value` on an object of kind `on`, or undefined. A key
 * Napwake reads on the other kind, or as a label, would do nothing here; an unknown one is likely a typo.
 */
export function annotationProblem(
  key: string,
  value: string,
  on: AnnotatedKind = "workload",
  /** The cluster's time, when known: a stamp further ahead of it than clocks drift apart is refused. */
  nowMs?: number,
): string | undefined {
  const rule = annotationRules[key];
  if (!rule) {
    if (knownLabels.includes(key)) {
      const fix = on === "ManagedWorkload" ? labelOnTheWorkload(key) : "set it as a label instead";
      return `annotation ${key} does nothing: Napwake reads ${key} as a label. Fix: ${fix}.`;
    }
    const here = knownAnnotations.filter((known) => readOn(known) === on);
    return (
      // Only keys read here are suggested: one read on the other kind would be refused again.
      `annotation ${key} is not a Napwake annotation.${didYouMean(key, here)} Fix: remove it, or use ` +
      `one of ${here.join(", ")}.`
    );
  }
  const where = readOn(key);
  if (where !== on) {
    const there = where === "workload" ? "the workload (Deployment or StatefulSet)" : "a ManagedWorkload";
    return `annotation ${key} does nothing on a ${on}: Napwake reads it on ${there}. Fix: ${elsewhereFix[where](key)}.`;
  }
  if (!rule.valid(value)) return invalid(key, value, rule);
  return nowMs === undefined || rule !== rfc3339 ? undefined : stampAhead(key, value, nowMs);
}

/** The fix for a workload's label written on a ManagedWorkload. */
function labelOnTheWorkload(key: string): string {
  return `remove it here and set it as a label on the target workload (Deployment or StatefulSet): kubectl label <kind>/<name> ${key}=...`;
}

function invalid(key: string, value: string, rule: Rule): string {
  return (
    `annotation ${key}=${quotedValue(value)} is invalid: it must be ${rule.expected}. ` +
    `Fix: set it to a value like "${rule.example}", or remove it.`
  );
}

/**
 * A time stamp further ahead of the cluster's clock than clocks drift apart: Napwake would ignore it until it
 * comes near, then act on it as now, so the writer (a doorman, a hook, a laptop) hears of its clock at once.
 */
function stampAhead(key: string, value: string, nowMs: number): string | undefined {
  if (!farAhead(Date.parse(value), nowMs)) return undefined;
  const now = new Date(Math.floor(nowMs / 1_000) * 1_000).toISOString().replace(".000Z", "Z");
  return (
    `annotation ${key}=${JSON.stringify(value)} is more than ${CLOCK_SKEW_MS / 60_000} minutes ahead of the ` +
    `cluster's clock (${now}): it must be when the activity was seen or the request made, not a time to come. ` +
    `Fix: set it to a time no later than now, like "${now}", and check the clock of whatever wrote it.`
  );
}

function isBoolean(value: string): boolean {
  return value === "true" || value === "false";
}

/** A DNS-1123 subdomain, the form of every object name (ManagedWorkload names included). */
export function isDnsSubdomain(value: string): boolean {
  return (
    value.length <= 253 && /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/.test(value)
  );
}

/** " Did you mean <k>?" for the known key closest to a misspelt `key` (a few edits away), or "". */
function didYouMean(key: string, known: readonly string[]): string {
  const name = key.slice(prefix.length);
  let best: { key: string; distance: number } | undefined;
  for (const candidate of known) {
    const distance = editDistance(name, candidate.slice(prefix.length));
    if (!best || distance < best.distance) best = { key: candidate, distance };
  }
  const close = best !== undefined && best.distance <= Math.max(1, Math.floor(name.length / 3));
  return close ? ` Did you mean ${best?.key}?` : "";
}

/** Levenshtein distance: the fewest single-character insertions, deletions and substitutions from a to b. */
export function editDistance(a: string, b: string): number {
  let previous = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) {
      const substitution = (previous[j - 1] ?? 0) + (a[i - 1] === b[j - 1] ? 0 : 1);
      current.push(Math.min((previous[j] ?? 0) + 1, (current[j - 1] ?? 0) + 1, substitution));
    }
    previous = current;
  }
  return previous[b.length] ?? 0;
}
