// How a workload's controller names its pods. Prometheus series carry a pod's name, not its owner, so the
// pods of a workload are told apart from a sibling's (`web` and `web-admin`) by the shape of the name alone.
import type { WorkloadKind } from "../api/rightsizingpolicy.ts";

/** A literal for a regex, RE2 and JavaScript alike. */
export const escapeRegex = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/**
 * Longest generateName base the API server keeps: a generated name is at most 63 characters, five of them
 * random. A Deployment's pods are generated from `<replicaset>-`, so a long Deployment name is cut short.
 */
export const MAX_GENERATED_BASE = 58;
/** The ReplicaSet's pod-template-hash suffix: a 32-bit hash, encoded in at most 10 characters. */
const MAX_TEMPLATE_HASH = 10;
/**
 * Fewest characters an uncut pod-template hash is read with: one per decimal digit of the hash, and a hash under
 * 100000 (five digits or fewer) comes once in about 43,000 ReplicaSets. Shorter, a Job `<name>-db` or
 * `<name>-5` would pass for the Deployment (its pods `<job>-<5 random>`); the rare Deployment missed is read for
 * nothing rather than from another workload's usage.
 */
const MIN_TEMPLATE_HASH = 6;
/**
 * The alphabet the API server draws generated names from (no vowels, no 0, 1 or 3): the five random characters.
 * The pod-template hash is the same encoding of the hash's decimal digits, so it uses only the ten characters
 * those digits map to. Together they keep the pods of a Job `<name>-migrate` or of a CronJob `<name>` (Jobs
 * named by the minute, `<name>-29456789-…`) from passing for a Deployment's.
 */
const RANDOM_SUFFIX = "[bcdfghjklmnpqrstvwxz2456789]{5}";
const HASH = "[4-9bcdf]";

/** What every pod name of a workload called `name` starts with, whatever its kind. */
export function podNamePrefix(name: string): string {
  return `${name}-`.slice(0, MAX_GENERATED_BASE);
}

/**
 * A regex (RE2 and JavaScript alike, to be matched in full) for the names of a workload's pods:
 * `<statefulset>-<ordinal>`, or `<deployment>-<template hash>-<5 random>` with the part before the random
 * characters cut to 58 when longer.
 */
export function podNameRegex(kind: WorkloadKind, name: string): string {
  if (kind === "StatefulSet") return `${escapeRegex(name)}-[0-9]+`;
  const base = `${name}-`;
  // Room left for the hash and the dash after it before the API server cuts the name.
  const hashRoom = MAX_GENERATED_BASE - base.length - 1;
  const forms: string[] = [];
  // Too little room for the fewest characters a hash is read with, a hash is read only as cut (below): read uncut
  // with fewer, a Job `<name>-db` would pass for the Deployment.
  if (hashRoom >= MIN_TEMPLATE_HASH) {
    const most = Math.min(MAX_TEMPLATE_HASH, hashRoom);
    forms.push(`${escapeRegex(base)}${HASH}{${MIN_TEMPLATE_HASH},${most}}-${RANDOM_SUFFIX}`);
  }
  if (hashRoom < MAX_TEMPLATE_HASH) {
    const kept = cutHashKept(name);
    const hash = kept > 0 ? `${HASH}{${kept}}` : "";
    forms.push(`${escapeRegex(base.slice(0, MAX_GENERATED_BASE))}${hash}${RANDOM_SUFFIX}`);
  }
  return forms.join("|");
}

/**
 * How many characters of their pod-template hash a Deployment's pods keep when the API server cut their names
 * below the fewest an uncut hash is read with (a name over 51 characters), or null. Then the pods of another
 * workload named `<name>-…` (a Job `<name>-migrate`) can have names its own could, and are counted with them.
 */
export function templateHashCutTo(kind: WorkloadKind, name: string): number | null {
  if (kind !== "Deployment") return null;
  const kept = cutHashKept(name);
  return kept < MIN_TEMPLATE_HASH ? kept : null;
}

/**
 * The characters of its pod-template hash a Deployment's pod keeps where the hash is too long for the room before
 * the API server cuts the name: the hash is cut, its dash with it, so exactly the room's length of it is kept.
 */
function cutHashKept(name: string): number {
  return Math.max(0, MAX_GENERATED_BASE - `${name}-`.length);
}

/** Whether a pod name is one the workload's controller would give its pods. */
export function podNameMatcher(kind: WorkloadKind, name: string): (pod: string) => boolean {
  const regex = new RegExp(`^(?:${podNameRegex(kind, name)})$`);
  return (pod) => regex.test(pod);
}
