/**
 * `kubectl napwake recommendations`: Rightsizing objects to one row per container, and rows to a table. Pure.
 */
import type {
  ContainerRecommendation,
  ResourceModeStatus,
  Rightsizing,
  RightsizingStatus,
} from "../api/rightsizing.ts";
import { formatChanges, formatValues } from "./quantities.ts";
import { alignColumns, formatAge } from "./status.ts";
import { describeTarget, type WorkloadRef } from "./workload-ref.ts";

type Modes = NonNullable<RightsizingStatus["modes"]>;

/** One row: a container of a workload, or the workload alone while the recommender has not seen it. */
export interface RecommendationRow {
  namespace: string;
  /** `deployment/web`. */
  workload: string;
  container: ContainerRecommendation | null;
  modes: Modes | null;
}

/** Whether `ref` (from the command line) names this Rightsizing's workload. A bare name: any kind, or the object's name. */
export function selectsWorkload(ref: WorkloadRef, rs: Rightsizing): boolean {
  const target = rs.spec.targetRef;
  if (ref.kind !== null) return target.kind === ref.kind && target.name === ref.name;
  return target.name === ref.name || rs.metadata.name === ref.name;
}

/** Rows sorted by namespace, workload and container; only the workload `ref` names, when given. */
export function recommendationRows(
  items: readonly Rightsizing[],
  ref: WorkloadRef | null,
): RecommendationRow[] {
  return items
    .filter((rs) => ref === null || selectsWorkload(ref, rs))
    .flatMap(rowsOf)
    .sort(byNamespaceWorkloadContainer);
}

function rowsOf(rs: Rightsizing): RecommendationRow[] {
  const base = {
    namespace: rs.metadata.namespace,
    workload: describeTarget(rs.spec.targetRef.kind, rs.spec.targetRef.name),
    modes: rs.status?.modes ?? null,
  };
  const containers = rs.status?.containers ?? [];
  if (!containers.length) return [{ ...base, container: null }];
  return containers.map((container) => ({ ...base, container }));
}

function byNamespaceWorkloadContainer(a: RecommendationRow, b: RecommendationRow): number {
  return (
    a.namespace.localeCompare(b.namespace) ||
    a.workload.localeCompare(b.workload) ||
    (a.container?.name ?? "").localeCompare(b.container?.name ?? "")
  );
}

function isDegraded(mode: ResourceModeStatus): boolean {
  return mode.mode !== mode.requested || (mode.degradedBy?.length ?? 0) > 0;
}

/** `audit/auto-patch`: the CPU mode, then the memory mode, each with `*` when auto-patch degraded to audit. */
export function formatModes(modes: Modes | null): string {
  if (!modes) return "-";
  const one = (mode: ResourceModeStatus) => `${mode.mode}${isDegraded(mode) ? "*" : ""}`;
  return `${one(modes.cpu)}/${one(modes.memory)}`;
}

/** How many reason codes the WHY column shows before it counts the rest. */
const shownReasons = 2;

/**
 * The WHY column, the most pressing thing first: no recommendation yet, too little history (the values are
 * never applied), auto-patch blocked (the `*` of MODE), then the recommender's reason codes.
 */
export function explain(container: ContainerRecommendation | null, modes: Modes | null): string {
  if (!container) return "the recommender has not run yet";
  if (container.state === "insufficient-history") {
    const hours = container.historyHours;
    return hours === undefined ? "insufficient history" : `insufficient history (${formatAge(hours * 3600)})`;
  }
  const blocked = modes ? blockedReason(modes) : null;
  if (blocked) return blocked;
  if (!container.target) return "no recommendation yet";
  const reasons = container.reasons ?? [];
  if (!reasons.length) return "-";
  const rest = reasons.length - shownReasons;
  return `${reasons.slice(0, shownReasons).join(", ")}${rest > 0 ? ` (+${rest})` : ""}`;
}

function blockedReason(modes: Modes): string | null {
  const degraded = (["cpu", "memory"] as const).filter((r) => isDegraded(modes[r]));
  if (!degraded.length) return null;
  const checks = [...new Set(degraded.flatMap((r) => modes[r].degradedBy ?? []))];
  const which = degraded.length === 2 ? "auto-patch" : `${degraded[0]} auto-patch`;
  return checks.length ? `${which} blocked: ${checks.join(", ")}` : `${which} blocked`;
}

export function formatRecommendationsTable(
  rows: readonly RecommendationRow[],
  opts: { allNamespaces: boolean },
): string {
  const header = [
    ...(opts.allNamespaces ? ["NAMESPACE"] : []),
    "WORKLOAD",
    "CONTAINER",
    "CURRENT",
    "RECOMMENDED",
    "CHANGE",
    "MODE",
    "WHY",
  ];
  const cells = rows.map(({ namespace, workload, container, modes }) => {
    const current = container?.current ?? {};
    const target = container?.target;
    return [
      ...(opts.allNamespaces ? [namespace] : []),
      workload,
      container?.name ?? "-",
      container ? formatValues(current) : "-",
      target ? formatValues(target) : "-",
      target ? formatChanges(current, target) : "-",
      formatModes(modes),
      explain(container, modes),
    ];
  });
  return alignColumns([header, ...cells]);
}

/**
 * What to say when there is nothing to show, and the usual causes. Rightsizing is in audit by default, so a
 * workload without one is usually one that is not there, or one it is turned off for.
 */
export function noRecommendationsMessage(namespace: string | null, ref: WorkloadRef | null): string {
  const where = namespace === null ? "in any namespace" : `in namespace ${namespace}`;
  const off = (them: string, their: string) =>
    `rightsizing is off for ${them} (a RightsizingPolicy, ${their} napwake.dev/cpu-mode and memory-mode annotations, ` +
    "or the operator's defaults; never in kube-* namespaces)";
  const notRun = "or the recommender has not run yet (it reads Prometheus, every hour)";
  if (ref === null) {
    const hint = namespace === null ? "" : " Use -A to look in every namespace.";
    return `No Rightsizing objects ${where}: no Deployment or StatefulSet there, ${off("them", "their")}, ${notRun}.${hint}\n`;
  }
  const workload = ref.kind === null ? ref.name : describeTarget(ref.kind, ref.name);
  return `No Rightsizing for ${workload} ${where}: the workload is not there, ${off("it", "its")}, ${notRun}.\n`;
}
