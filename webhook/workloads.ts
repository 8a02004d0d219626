import { annotations } from "../api/keys.ts";
import {
  type AdmissionDecision,
  type AdmissionRequest,
  type KubeObject,
  mutationPatch,
} from "./admission.ts";
import { metadataProblems } from "./metadata-rules.ts";

export type WorkloadKind = "Deployment" | "StatefulSet";

/**
 * Read-only lookups from informer caches the caller keeps: no API call on the admission hot path.
 *
 * `ownerOf` answers which ManagedWorkload (its name, same namespace) targets a workload. It must:
 * - leave out ManagedWorkloads being deleted (else a let-go would be undone by a fresh stamp);
 * - pick one deterministically when several target the same workload (e.g. the oldest);
 * - throw while its cache has not synced: the handler then fails open (no stamp added or removed) instead
 *   of stripping every stamp because the cache is still empty.
 */
export interface OwnerLookup {
  ownerOf(namespace: string, kind: WorkloadKind, name: string): string | undefined;
}

export interface WorkloadStampOptions {
  /** The username the operator writes as, e.g. `system:serviceaccount:napwake-system:napwake-operator`. */
  operatorUsername: string;
}

export function workloadKind(request: AdmissionRequest): WorkloadKind | undefined {
  if (request.kind.group !== "apps") return undefined;
  const kind = request.kind.kind;
  return kind === "Deployment" || kind === "StatefulSet" ? kind : undefined;
}

/**
 * Mutating: stamps the facts later decisions are made from, in the same write as the change.
 *
 * - `napwake.dev/managed-by`: the ManagedWorkload targeting this workload, removed when none does.
 * - `napwake.dev/paused-from: N`: when the operator itself scales the workload from N > 0 to 0 through the
 *   main resource and did not say where from, so "scaled to zero" and "remembered N" land atomically.
 *
 * Writes through the scale subresource are admitted as autoscaling/v1 Scale objects, which carry no
 * annotations, and this webhook does not see them (its rules name `deployments`, not `deployments/scale`).
 * A controller scaling through the subresource must order its writes itself:
 *   pause:  1. write paused-from=N on the workload   2. scale to 0
 *   resume: 1. scale to N                            2. remove paused-from
 * so a crash between the two writes always leaves paused-from on a workload at 0 (finish the pause) or on
 * one at N (finish the resume), never a workload at 0 without the count to restore.
 */
export function stampWorkload(
  request: AdmissionRequest,
  lookup: OwnerLookup,
  options: WorkloadStampOptions,
): AdmissionDecision {
  const kind = workloadKind(request);
  const object = request.object;
  if (!kind || !object || (request.operation !== "CREATE" && request.operation !== "UPDATE")) {
    return { allowed: true };
  }
  const mutated = structuredClone(object);
  const name = object.metadata?.name || request.name;
  const owner = name && request.namespace ? lookup.ownerOf(request.namespace, kind, name) : undefined;
  if (owner) setAnnotation(mutated, annotations.managedBy, owner);
  else deleteAnnotation(mutated, annotations.managedBy);

  const pausedFrom = pausedFromToStamp(request, options);
  if (pausedFrom !== undefined) setAnnotation(mutated, annotations.pausedFrom, String(pausedFrom));

  return { allowed: true, patch: mutationPatch(object, mutated) };
}

/** N when the operator scales N > 0 to 0 through the main resource without setting paused-from itself. */
export function pausedFromToStamp(
  request: AdmissionRequest,
  options: WorkloadStampOptions,
): number | undefined {
  if (request.operation !== "UPDATE" || request.userInfo.username !== options.operatorUsername) {
    return undefined;
  }
  const before = replicas(request.oldObject);
  const after = replicas(request.object);
  if (before === undefined || before <= 0 || after !== 0) return undefined;
  if (request.object?.metadata?.annotations?.[annotations.pausedFrom] !== undefined) return undefined;
  return before;
}

/** Validating: malformed `napwake.dev/` annotations and labels are refused with a message that says the fix. */
export function validateWorkload(request: AdmissionRequest, nowMs?: number): AdmissionDecision {
  const kind = workloadKind(request);
  if (!kind || !request.object) return { allowed: true };
  const old = request.operation === "UPDATE" ? request.oldObject?.metadata : undefined;
  const problems = metadataProblems(request.object.metadata, old, "workload", nowMs);
  if (!problems.length) return { allowed: true };
  return { allowed: false, code: 422, message: refusal(kind, request, problems) };
}

export function refusal(kind: string, request: AdmissionRequest, problems: readonly string[]): string {
  const name = request.object?.metadata?.name || request.name || "(generated name)";
  return `Napwake refuses ${kind} ${request.namespace ?? ""}/${name}: ${problems.join("; ")}`;
}

function replicas(object: KubeObject | null | undefined): number | undefined {
  const spec = object?.spec as { replicas?: unknown } | undefined;
  if (!spec) return undefined;
  // Defaulting runs before admission, so replicas is set; an absent value means the API default of 1.
  return typeof spec.replicas === "number" ? spec.replicas : 1;
}

function setAnnotation(object: KubeObject, key: string, value: string): void {
  object.metadata ??= {};
  object.metadata.annotations ??= {};
  object.metadata.annotations[key] = value;
}

function deleteAnnotation(object: KubeObject, key: string): void {
  if (object.metadata?.annotations) delete object.metadata.annotations[key];
}
