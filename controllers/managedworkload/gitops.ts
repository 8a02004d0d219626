/**
 * Tells from a workload's `metadata.managedFields` whether a GitOps or deploy tool sets its `spec.replicas`, and
 * what setting makes that tool leave replicas alone. Such a tool would undo a pause on its next sync. Pure.
 *
 * What counts: an entry of the main resource (writes through the scale subresource are autoscalers, `kubectl
 * scale` and Napwake itself) that owns `f:spec.f:replicas`, and whose manager is a known tool, or any manager
 * whose operation is `Apply` (server-side apply is declarative: it will apply the same replicas again).
 * A one-off `Update` by an unknown manager (`kubectl-create`, `kubectl-edit`, a script) sets replicas once and
 * is not reported. Ownership moves to whoever changes the value last, so look before the first pause and keep
 * the answer in status.
 */
import type { GitOpsTool } from "../../api/managedworkload.ts";

/** The parts of a managedFields entry read here (a V1ManagedFieldsEntry, or its JSON). */
export interface ManagedFieldsEntry {
  manager?: string;
  operation?: string;
  subresource?: string;
  fieldsV1?: object;
}

export interface WorkloadRef {
  kind: string;
  name: string;
}

export interface ReplicasOwner {
  tool: GitOpsTool;
  manager: string;
  /** Names the tool and the exact setting that stops it from setting replicas. */
  message: string;
}

const toolsByManager: Record<string, GitOpsTool> = {
  "argocd-controller": "argocd",
  "argocd-application-controller": "argocd",
  "kustomize-controller": "flux",
  "helm-controller": "flux",
  helm: "helm",
  "kubectl-client-side-apply": "kubectl",
  kubectl: "kubectl",
  "kubectl-replace": "kubectl",
};

// When several tools own replicas, report the one whose fix matters most: a sync loop first.
const precedence: readonly GitOpsTool[] = ["argocd", "flux", "helm", "kubectl", "other"];

/**
 * The tool that sets `spec.replicas` of `workload`, or null when none does. `ourManager` (Napwake's field
 * manager) is never reported.
 */
export function replicasOwner(
  workload: WorkloadRef,
  managedFields: readonly ManagedFieldsEntry[] | undefined,
  ourManager: string,
): ReplicasOwner | null {
  const owners: { tool: GitOpsTool; manager: string }[] = [];
  for (const entry of managedFields ?? []) {
    const manager = entry.manager ?? "";
    if (entry.subresource || manager === ourManager || !ownsReplicas(entry.fieldsV1)) continue;
    const tool = toolsByManager[manager] ?? (entry.operation === "Apply" ? "other" : undefined);
    if (tool) owners.push({ tool, manager });
  }
  owners.sort((a, b) => precedence.indexOf(a.tool) - precedence.indexOf(b.tool));
  const owner = owners[0];
  return owner ? { ...owner, message: fixFor(owner.tool, owner.manager, workload) } : null;
}

/**
 * Whether `ourManager` (Napwake's scales, through the scale subresource) holds `spec.replicas` now: a pause took
 * it from whoever set it, which says nothing of whether that tool will set it again.
 */
export function replicasTakenByUs(
  managedFields: readonly ManagedFieldsEntry[] | undefined,
  ourManager: string,
): boolean {
  return (managedFields ?? []).some((entry) => entry.manager === ourManager && ownsReplicas(entry.fieldsV1));
}

function ownsReplicas(fieldsV1: object | undefined): boolean {
  const spec = (fieldsV1 as Record<string, unknown> | undefined)?.["f:spec"];
  return typeof spec === "object" && spec !== null && "f:replicas" in spec;
}

function fixFor(tool: GitOpsTool, manager: string, { kind, name }: WorkloadRef): string {
  const who = `sets spec.replicas of ${kind} ${name} (field manager ${manager}) and would undo a pause the next time it applies`;
  switch (tool) {
    case "argocd":
      return (
        `Argo CD ${who}. In its Application, add ignoreDifferences: [{group: apps, kind: ${kind}, name: ${name}, ` +
        "jsonPointers: [/spec/replicas]}] and the sync option RespectIgnoreDifferences=true."
      );
    case "flux":
      return manager === "helm-controller"
        ? `Flux ${who}. In the chart, template spec.replicas only when autoscaling is off (or not at all), or ` +
            `add a postRenderers kustomize patch to the HelmRelease that removes /spec/replicas from ${kind} ${name}.`
        : `Flux ${who}. Remove spec.replicas from the ${kind} manifest in Git, or add to the Flux Kustomization ` +
            `patches: [{target: {kind: ${kind}, name: ${name}}, patch: '[{"op": "remove", "path": "/spec/replicas"}]'}].`;
    case "helm":
      return (
        `Helm ${who}. In the chart, do not template spec.replicas, or set it only when autoscaling is off ` +
        "({{- if not .Values.autoscaling.enabled }} replicas: ... {{- end }}), then upgrade the release."
      );
    case "kubectl":
      return `kubectl apply ${who}. Remove spec.replicas from the ${kind} manifest you apply.`;
    case "other":
      return `${manager} ${who}. Remove spec.replicas from the ${kind} manifest it applies.`;
  }
}
