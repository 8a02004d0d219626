/**
 * Opt-in: the label `napwake.dev/managed: "true"` on a Deployment or StatefulSet, or on its Namespace,
 * turns it into a ManagedWorkload owned by the workload (so it is garbage-collected with it). Removing the
 * label lets it go: the ManagedWorkload is deleted, and a workload left paused with nothing managing it is
 * resumed. Pure.
 *
 * The order is crash-safe: deleting the ManagedWorkload first stops pauses; resuming the orphan afterwards is
 * its own level-based rule (paused-from on a workload no ManagedWorkload targets), so a crash in between is
 * finished by the next reconcile.
 */
import { type apiVersion, labels, optInMarker } from "../../api/keys.ts";
import { type ManagedWorkload, managedWorkloadCrd, type TargetKind } from "../../api/managedworkload.ts";
import { workloadObjectName } from "../../api/names.ts";

export interface OptInWorkload {
  kind: TargetKind;
  name: string;
  namespace: string;
  uid: string;
  labels: Record<string, string>;
  replicas: number;
  /** napwake.dev/paused-from as a count, or null. */
  pausedFrom: number | null;
  /** Being deleted (a deletionTimestamp): opt-in leaves it and its ManagedWorkload to the garbage collector. */
  deleting?: boolean;
}

export interface OptInInput {
  workload: OptInWorkload;
  namespaceLabels: Record<string, string>;
  /** ManagedWorkloads in the namespace that target this workload. */
  managers: readonly ManagedWorkload[];
}

export type OptInAction =
  | { kind: "create"; object: ManagedWorkload; reason: string }
  /** Owner reference to the workload as it is now, and the opt-in marker, on `object` as read. */
  | { kind: "adopt"; object: ManagedWorkload; reason: string }
  | { kind: "delete"; name: string; reason: string }
  | { kind: "resume-orphan"; from: number; reason: string }
  | { kind: "none"; reason: string };

/** The name of the ManagedWorkload opt-in creates (see `workloadObjectName`). */
export function optInName(kind: TargetKind, name: string): string {
  return workloadObjectName(kind, name);
}

export function optedIn(
  workloadLabels: Record<string, string>,
  namespaceLabels: Record<string, string>,
): boolean {
  if (workloadLabels[labels.ignore] !== undefined) return false;
  const own = workloadLabels[labels.managed];
  // The workload's own label wins, so one workload can opt out of an opted-in namespace.
  if (own !== undefined) return own === "true";
  return namespaceLabels[labels.managed] === "true";
}

/**
 * Created by opt-in: named as opt-in names them, and owned by the workload itself, or marked as opt-in's and owned
 * by nothing (a delete with `--cascade=orphan` took its ownerReference). One written by hand or from Git is not,
 * even with an ownerReference to its target so that it is collected with it.
 */
export function createdByOptIn(
  mw: ManagedWorkload,
  workload: Pick<OptInWorkload, "kind" | "name" | "uid">,
): boolean {
  if (mw.metadata.name !== optInName(workload.kind, workload.name)) return false;
  const owners = mw.metadata.ownerReferences ?? [];
  return owners.some((ref) => ref.uid === workload.uid) || (markedAsOptIns(mw) && owners.length === 0);
}

function markedAsOptIns(mw: ManagedWorkload): boolean {
  return mw.metadata.labels?.[optInMarker.key] === optInMarker.value;
}

export function decideOptIn(input: OptInInput): OptInAction[] {
  const { workload } = input;
  const wanted = optedIn(workload.labels, input.namespaceLabels);
  const ours = input.managers.filter((mw) => createdByOptIn(mw, workload));
  const others = input.managers.filter((mw) => !createdByOptIn(mw, workload));
  const ref = `${workload.kind} ${workload.namespace}/${workload.name}`;
  // An orphaning delete takes the ownerReference off its ManagedWorkload before the workload is gone: adopting it
  // back then would have it collected once the workload is gone, rather than kept for the workload made again.
  if (workload.deleting) return [{ kind: "none", reason: `${ref} is being deleted` }];
  if (wanted) {
    const adopted = ours.find(
      (mw) => !markedAsOptIns(mw) || (mw.metadata.ownerReferences ?? []).length === 0,
    );
    if (adopted) {
      return [
        {
          kind: "adopt",
          object: adopted,
          reason: `${ref} opted in; its ManagedWorkload is owned by it again`,
        },
      ];
    }
    if (input.managers.length > 0)
      return [{ kind: "none", reason: `${ref} is managed by ${input.managers[0]?.metadata.name}` }];
    return [{ kind: "create", object: managedWorkloadFor(workload), reason: `${ref} opted in` }];
  }
  const actions: OptInAction[] = ours.map((mw) => ({
    kind: "delete" as const,
    name: mw.metadata.name,
    reason: `${ref} no longer opts in`,
  }));
  const stillManaged = others.length > 0;
  // Also when a resume got as far as its scale: the count is still there to forget.
  if (!stillManaged && workload.pausedFrom !== null) {
    actions.push({
      kind: "resume-orphan",
      from: workload.pausedFrom,
      reason: `${ref} carries a paused-from count and nothing manages it any more`,
    });
  }
  return actions.length ? actions : [{ kind: "none", reason: `${ref} does not opt in` }];
}

function managedWorkloadFor(w: OptInWorkload): ManagedWorkload {
  return {
    apiVersion: managedWorkloadCrd.apiVersion as typeof apiVersion,
    kind: managedWorkloadCrd.kind,
    metadata: {
      name: optInName(w.kind, w.name),
      namespace: w.namespace,
      labels: { [optInMarker.key]: optInMarker.value },
      ownerReferences: [ownerReferenceTo(w)],
    },
    spec: { targetRef: { apiVersion: "apps/v1", kind: w.kind, name: w.name } },
  };
}

/** The ownerReference an opt-in ManagedWorkload carries: collected with its workload, never blocking its delete. */
export function ownerReferenceTo(w: Pick<OptInWorkload, "kind" | "name" | "uid">) {
  return { apiVersion: "apps/v1", kind: w.kind, name: w.name, uid: w.uid, blockOwnerDeletion: false };
}
