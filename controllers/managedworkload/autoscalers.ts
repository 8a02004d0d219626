/**
 * The autoscalers that scale a target (HPAs, KEDA ScaledObjects), and holding a ScaledObject at zero. Pure.
 *
 * An HPA is only reported: the HPA controller leaves alone a target whose replicas are 0, so a pause through the
 * scale subresource holds, and the count written back on resume is the HPA's to change again.
 *
 * A KEDA ScaledObject would undo such a pause (KEDA scales a target up from zero when a trigger is active), so a
 * workload KEDA scales is paused with KEDA's own annotation rather than a scale write: with
 * `autoscaling.keda.sh/paused-replicas: "0"` KEDA scales the target to zero itself and stops autoscaling it.
 * Order of writes: pause = record `napwake.dev/paused-from` on the target, then hold the ScaledObject;
 * resume = release the ScaledObject, then scale the target back to paused-from (released first, KEDA does not
 * scale it back to zero behind the resume; a ScaledObject with minReplicaCount 0 would otherwise stay at zero
 * until a trigger fires).
 *
 * The annotation is written by server-side apply under Napwake's field manager, as the only field Napwake applies
 * to a ScaledObject: releasing is an apply without it, which removes it unless someone else set it too.
 */
import type { KubernetesObject } from "@kubernetes/client-node";
import { kedaPausedReplicas } from "../../api/keys.ts";
import type { AutoscalerKind } from "../../api/managedworkload.ts";
import { replicaCount } from "../../api/text.ts";
import type { ManagedFieldsEntry } from "./gitops.ts";
import type { Write } from "./observation.ts";

export const scaledObjectApiVersion = "keda.sh/v1alpha1";

interface ScaleTargetRef {
  apiVersion?: string;
  kind?: string;
  name?: string;
}

interface ObjectMeta {
  name?: string;
  namespace?: string;
  resourceVersion?: string;
  annotations?: Record<string, string>;
  ownerReferences?: { apiVersion: string; kind: string; name: string }[];
  managedFields?: ManagedFieldsEntry[];
}

/** The parts of an autoscaling/v2 HorizontalPodAutoscaler read here. */
export interface Hpa {
  metadata?: ObjectMeta;
  spec?: { scaleTargetRef?: ScaleTargetRef; minReplicas?: number; maxReplicas?: number };
}

/** The parts of a KEDA ScaledObject (keda.sh/v1alpha1) read here. */
export interface ScaledObject {
  apiVersion?: string;
  kind?: string;
  metadata?: ObjectMeta;
  spec?: { scaleTargetRef?: ScaleTargetRef; minReplicaCount?: number; maxReplicaCount?: number };
}

export interface Target {
  kind: string;
  name: string;
}

export interface FoundAutoscaler {
  kind: AutoscalerKind;
  name: string;
  minReplicas?: number;
  maxReplicas?: number;
}

/**
 * The autoscalers in the target's namespace that scale it: ScaledObjects first, then HPAs, each by name. The HPA
 * KEDA makes for a ScaledObject (owned by it) is left out: the ScaledObject is the one to report and to hold.
 */
export function autoscalersFor(
  target: Target,
  hpas: readonly Hpa[],
  scaledObjects: readonly ScaledObject[],
): FoundAutoscaler[] {
  const kedaObjects = scaledObjectsOf(target, scaledObjects).map((so) =>
    found("ScaledObject", so.metadata?.name, so.spec?.minReplicaCount, so.spec?.maxReplicaCount),
  );
  const kedaNames = new Set(kedaObjects.map((so) => so.name));
  const ownedByKeda = (hpa: Hpa) =>
    (hpa.metadata?.ownerReferences ?? []).some(
      (ref) =>
        ref.kind === "ScaledObject" && ref.apiVersion.startsWith("keda.sh/") && kedaNames.has(ref.name),
    );
  const hpaObjects = hpas
    .filter((hpa) => scalesTarget(hpa.spec?.scaleTargetRef, target) && !ownedByKeda(hpa))
    .map((hpa) =>
      found("HorizontalPodAutoscaler", hpa.metadata?.name, hpa.spec?.minReplicas, hpa.spec?.maxReplicas),
    );
  return [...byName(kedaObjects), ...byName(hpaObjects)];
}

function scalesTarget(ref: ScaleTargetRef | undefined, target: Target, defaultKind?: string): boolean {
  if (!ref || ref.name !== target.name || (ref.kind ?? defaultKind) !== target.kind) return false;
  // KEDA defaults apiVersion to apps/v1; an HPA may leave it out too. Either way the group must be apps.
  return (ref.apiVersion ?? "apps/v1").split("/")[0] === "apps";
}

function found(kind: AutoscalerKind, name: string | undefined, min?: number, max?: number): FoundAutoscaler {
  return {
    kind,
    name: name ?? "",
    ...(min === undefined ? {} : { minReplicas: min }),
    ...(max === undefined ? {} : { maxReplicas: max }),
  };
}

function byName(found: FoundAutoscaler[]): FoundAutoscaler[] {
  return found.sort((a, b) => a.name.localeCompare(b.name));
}

/** The server-side-apply object that holds `so` at zero replicas (`hold`) or releases Napwake's hold. */
export function scaledObjectHoldApply(so: ScaledObject, hold: boolean): KubernetesObject {
  return {
    apiVersion: scaledObjectApiVersion,
    kind: "ScaledObject",
    metadata: {
      name: so.metadata?.name ?? "",
      namespace: so.metadata?.namespace ?? "",
      ...(hold ? { annotations: { [kedaPausedReplicas]: "0" } } : {}),
    },
  };
}

export type HoldDecision =
  | { action: "apply"; object: KubernetesObject; reason: string }
  | { action: "none"; reason: string };

/**
 * What to write so that `so` is held at zero while the workload is paused (`wantHeld`) and released otherwise.
 * Napwake only releases a hold it applied (`ourManager` owns the annotation), and never overrides a
 * paused-replicas someone else set.
 */
export function decideScaledObjectHold(
  so: ScaledObject,
  wantHeld: boolean,
  ourManager: string,
): HoldDecision {
  const name = `ScaledObject ${so.metadata?.name ?? ""}`;
  const value = so.metadata?.annotations?.[kedaPausedReplicas];
  const ours = ownsPausedReplicas(so, ourManager);
  if (wantHeld) {
    if (value === undefined) {
      return { action: "apply", object: scaledObjectHoldApply(so, true), reason: `hold ${name} at zero` };
    }
    if (value === "0") {
      return { action: "none", reason: `${name} is already held at zero${ours ? "" : " by someone else"}` };
    }
    return {
      action: "none",
      reason: `${name} is held at ${replicaCount(value)} by someone else (${kedaPausedReplicas}); Napwake leaves it`,
    };
  }
  if (ours && value !== undefined) {
    return { action: "apply", object: scaledObjectHoldApply(so, false), reason: `release ${name}` };
  }
  return { action: "none", reason: `${name} is not held by Napwake` };
}

/** The ScaledObjects among `scaledObjects` that scale `target`. */
export function scaledObjectsOf(target: Target, scaledObjects: readonly ScaledObject[]): ScaledObject[] {
  return scaledObjects.filter((so) => scalesTarget(so.spec?.scaleTargetRef, target, "Deployment"));
}

/** The writes that hold `scaledObjects` at zero (`hold`) or release Napwake's hold, in order. */
export function scaledObjectHoldWrites(
  scaledObjects: readonly ScaledObject[],
  hold: boolean,
  ourManager: string,
): Extract<Write, { kind: "apply" }>[] {
  return scaledObjects
    .map((so) => decideScaledObjectHold(so, hold, ourManager))
    .flatMap((d) =>
      d.action === "apply" ? [{ kind: "apply" as const, object: d.object, why: d.reason }] : [],
    );
}

/**
 * Releases of every ScaledObject in `scaledObjects`, whatever the cache shows of them, for a pause that ends: a
 * hold the ScaledObject cache does not show yet (its informer behind the workload's) is released as well. Where
 * Napwake holds nothing, the apply without the annotation changes nothing.
 */
export function scaledObjectReleaseWrites(
  scaledObjects: readonly ScaledObject[],
): Extract<Write, { kind: "apply" }>[] {
  return scaledObjects.map((so) => ({
    kind: "apply" as const,
    object: scaledObjectHoldApply(so, false),
    why: `release ScaledObject ${so.metadata?.name ?? ""}`,
  }));
}

/**
 * Why the workload must not be paused, or null: a ScaledObject of it is held by someone else at a count
 * other than zero, and KEDA would scale back whatever Napwake scaled down, then Napwake again.
 */
export function scaledObjectHeldElsewhere(scaledObjects: readonly ScaledObject[]): string | null {
  for (const so of scaledObjects) {
    const value = so.metadata?.annotations?.[kedaPausedReplicas];
    if (value === undefined || value === "0") continue;
    return (
      `ScaledObject ${so.metadata?.name ?? ""} is held at ${replicaCount(value)} (${kedaPausedReplicas}) by someone ` +
      "else; pausing would fight KEDA"
    );
  }
  return null;
}

/** Whether `ourManager` owns the paused-replicas annotation of `so` (Napwake's own hold), from managedFields. */
export function ownsPausedReplicas(so: ScaledObject, ourManager: string): boolean {
  return (so.metadata?.managedFields ?? []).some((entry) => {
    if (entry.manager !== ourManager || entry.subresource) return false;
    const fields = entry.fieldsV1 as
      | { "f:metadata"?: { "f:annotations"?: Record<string, unknown> } }
      | undefined;
    return `f:${kedaPausedReplicas}` in (fields?.["f:metadata"]?.["f:annotations"] ?? {});
  });
}
