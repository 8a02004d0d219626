/**
 * From what a person types (`deployment/web`, `sts/db`, `web`, a ManagedWorkload's name) to the
 * ManagedWorkload that manages it. Pure.
 */
import type { ManagedWorkload, TargetKind } from "../api/managedworkload.ts";
import { owningManagedWorkload } from "../api/owners.ts";

export interface WorkloadRef {
  /**
   * Null when only a name was given: a managed Deployment of that name, else a ManagedWorkload of that name, else
   * a managed StatefulSet.
   */
  kind: TargetKind | null;
  name: string;
}

const kindAliases: Record<string, TargetKind> = {
  deployment: "Deployment",
  deployments: "Deployment",
  deploy: "Deployment",
  "deployment.apps": "Deployment",
  "deployments.apps": "Deployment",
  statefulset: "StatefulSet",
  statefulsets: "StatefulSet",
  sts: "StatefulSet",
  "statefulset.apps": "StatefulSet",
  "statefulsets.apps": "StatefulSet",
};

/** The workload named on the command line, or a message saying what is wrong with it. */
export function parseWorkloadRef(text: string): WorkloadRef | { error: string } {
  const parts = text.split("/");
  if (parts.length === 1 && parts[0]) return { kind: null, name: parts[0] };
  const [kindText = "", name = ""] = parts;
  const kind = kindAliases[kindText.toLowerCase()];
  if (parts.length !== 2 || !name || !kindText)
    return { error: `"${text}" is not a workload: write deployment/<name>, statefulset/<name> or <name>` };
  if (!kind)
    return {
      error: `Napwake manages Deployments and StatefulSets, not "${kindText}": write deployment/${name} or statefulset/${name}`,
    };
  return { kind, name };
}

/** `deployment/web`, as kubectl writes it. */
export function describeTarget(kind: TargetKind, name: string): string {
  return `${kind.toLowerCase()}/${name}`;
}

export type Resolution =
  | { kind: "managed"; mw: ManagedWorkload }
  /** Nothing manages `target`; whether the workload exists is for the caller to find out. */
  | { kind: "unmanaged"; target: { kind: TargetKind; name: string } };

/**
 * The ManagedWorkload for `ref` among those of its namespace. A bare name is a Deployment first (as with
 * kubectl), then a ManagedWorkload's own name, then a StatefulSet (as `recommendations` reads one). With several
 * owners (the webhook refuses a second one, but
 * it may be down) the one the controller follows wins (`api/owners.ts`: the oldest not being deleted).
 */
export function resolveWorkload(ref: WorkloadRef, mws: readonly ManagedWorkload[]): Resolution {
  const kind = ref.kind ?? "Deployment";
  const owner = owningManagedWorkload({ kind, name: ref.name }, mws);
  if (owner) return { kind: "managed", mw: owner };
  if (ref.kind === null) {
    const named =
      mws.find((mw) => mw.metadata.name === ref.name) ??
      owningManagedWorkload({ kind: "StatefulSet", name: ref.name }, mws);
    if (named) return { kind: "managed", mw: named };
  }
  return { kind: "unmanaged", target: { kind, name: ref.name } };
}
