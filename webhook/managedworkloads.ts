import { group } from "../api/keys.ts";
import { calendarOf } from "../forecast/calendar.ts";
import type { AdmissionDecision, AdmissionRequest, KubeObject } from "./admission.ts";
import { metadataProblems } from "./metadata-rules.ts";
import { type OwnerLookup, refusal, type WorkloadKind } from "./workloads.ts";

export interface TargetRef {
  kind: WorkloadKind;
  name: string;
}

/** Where a ManagedWorkload names its target. Injected so the handler follows the CRD's shape. */
export type TargetOf = (managedWorkload: KubeObject) => TargetRef | undefined;

/** Reads `spec.targetRef: {kind, name}`. A missing or malformed target is left to the CRD schema. */
export const specTargetRef: TargetOf = (mw) => {
  const ref = (mw.spec as { targetRef?: { kind?: unknown; name?: unknown } } | undefined)?.targetRef;
  if (!ref || typeof ref.name !== "string" || !ref.name) return undefined;
  return ref.kind === "Deployment" || ref.kind === "StatefulSet"
    ? { kind: ref.kind, name: ref.name }
    : undefined;
};

/**
 * Validating, napwake.dev ManagedWorkloads: malformed `napwake.dev/` annotations, a forecast time zone the operator
 * does not know, and a second owner for a target another ManagedWorkload already manages. The owner check runs on
 * CREATE and when the target changes, not on every UPDATE: a duplicate that slipped in while the webhook was down
 * must still be editable and deletable (finalizers), and the controller reports it.
 */
export function validateManagedWorkload(
  request: AdmissionRequest,
  lookup: OwnerLookup,
  targetOf: TargetOf = specTargetRef,
  nowMs?: number,
): AdmissionDecision {
  const object = request.object;
  if (request.kind.group !== group || request.kind.kind !== "ManagedWorkload" || !object) {
    return { allowed: true };
  }
  const old = request.operation === "UPDATE" ? request.oldObject : undefined;
  const problems = [
    ...metadataProblems(object.metadata, old?.metadata, "ManagedWorkload", nowMs),
    ...timeZoneProblems(object, old),
  ];
  if (problems.length) {
    return { allowed: false, code: 422, message: refusal("ManagedWorkload", request, problems) };
  }

  const target = targetOf(object);
  const oldTarget = old ? targetOf(old) : undefined;
  if (!target || !request.namespace || sameTarget(target, oldTarget)) return { allowed: true };
  const name = object.metadata?.name || request.name || "";
  const owner = lookup.ownerOf(request.namespace, target.kind, target.name);
  if (!owner || owner === name) return { allowed: true };
  return {
    allowed: false,
    code: 403,
    message:
      `Napwake refuses ManagedWorkload ${request.namespace}/${name || "(generated name)"}: ` +
      `${target.kind} ${target.name} is already managed by ManagedWorkload ${owner}, and a workload has one owner. ` +
      `Fix: change ManagedWorkload ${owner} instead (or delete it first), or point this one at another workload.`,
  };
}

/**
 * spec.forecast.timeZone must name a zone this operator knows (the CRD checks only its shape). One stored before
 * (by an operator whose time-zone database had it) is refused only when changed, so the object stays editable.
 */
function timeZoneProblems(object: KubeObject, old: KubeObject | null | undefined): string[] {
  const zone = timeZoneOf(object);
  if (typeof zone !== "string" || (old && timeZoneOf(old) === zone)) return [];
  const calendar = calendarOf(zone);
  return calendar.ok ? [] : [`spec.forecast.timeZone: ${calendar.error}`];
}

function timeZoneOf(object: KubeObject): unknown {
  return (object.spec as { forecast?: { timeZone?: unknown } } | undefined)?.forecast?.timeZone;
}

function sameTarget(a: TargetRef, b: TargetRef | undefined): boolean {
  return b !== undefined && a.kind === b.kind && a.name === b.name;
}
