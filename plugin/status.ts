/**
 * `kubectl napwake status`: ManagedWorkloads (and their targets' replica counts) to rows, and rows to a
 * table. Pure; the time is given.
 */
import type { V1ObjectMeta } from "@kubernetes/client-node";
import { findCondition } from "../api/conditions.ts";
import { conditionTypes } from "../api/keys.ts";
import type { ManagedWorkload, TargetKind } from "../api/managedworkload.ts";
import { pausedFromOf, timeOf } from "../api/meta.ts";
import { inDryRun } from "./dry-run.ts";
import { describeTarget } from "./workload-ref.ts";

/** A target's replica facts, keyed by `namespace/Kind/name` (see targetKey). */
export interface TargetReplicas {
  replicas: number;
  annotations: Record<string, string>;
}

export function targetKey(namespace: string, kind: TargetKind, name: string): string {
  return `${namespace}/${kind}/${name}`;
}

/** One row, as data: `-o json` prints these; the table formats them. */
export interface StatusRow {
  namespace: string;
  name: string;
  target: string;
  phase: string | null;
  /**
   * Why it is in that phase, as a condition's reason: the Managed condition's while Unmanaged, else the Paused
   * condition's (Idle, Requested, ForecastVeto, PreWake, Active, ActivityUnknown...).
   */
  reason: string | null;
  /** The target's spec.replicas; null when the target was not read (missing, or not allowed). */
  replicas: number | null;
  /** The count Napwake restores on resume, while paused. */
  heldReplicas: number | null;
  lastActivity: string | null;
  lastActivitySource: string | null;
  /** Since the idle clock started: see idleSinceMs. */
  idleForSeconds: number | null;
  pausedAt: string | null;
  pausedForSeconds: number | null;
  /** The forecast's phase (learning, shadow, active-daily, active-weekly). */
  forecast: string | null;
  /** The time zone whose clock the forecast's seasons follow (status.prediction.timeZone). */
  forecastTimeZone: string | null;
  /** Since when the trusted forecast's advice is suspended (forecast activity did not come); null while not. */
  forecastSuspendedSince: string | null;
  /** When a paused workload will be woken ahead of forecast activity; null when no pre-wake is planned. */
  nextPrewake: string | null;
  dryRun: boolean;
  /** In dry-run: the replica-hours a pause would have saved so far. */
  dryRunSavedReplicaHours: number | null;
}

export function statusRows(
  mws: readonly ManagedWorkload[],
  targets: ReadonlyMap<string, TargetReplicas>,
  nowMs: number,
): StatusRow[] {
  return mws.map((mw) => statusRow(mw, targets, nowMs)).sort(byNamespaceThenName);
}

function statusRow(
  mw: ManagedWorkload,
  targets: ReadonlyMap<string, TargetReplicas>,
  nowMs: number,
): StatusRow {
  const { namespace, name } = mw.metadata;
  const ref = mw.spec.targetRef;
  const status = mw.status ?? {};
  const target = targets.get(targetKey(namespace, ref.kind, ref.name));
  const lastActivity = status.lastActivity?.time ?? null;
  const pausedAt = status.pausedAt ?? null;
  const dryRun = inDryRun(mw);
  return {
    namespace,
    name,
    target: describeTarget(ref.kind, ref.name),
    phase: status.phase ?? null,
    reason: phaseReason(status),
    replicas: target ? target.replicas : null,
    heldReplicas: heldReplicas(status, target),
    lastActivity,
    lastActivitySource: status.lastActivity?.source ?? null,
    idleForSeconds: secondsSince(idleSinceMs(mw, status), nowMs),
    pausedAt,
    pausedForSeconds: secondsSince(timeOf(pausedAt), nowMs),
    forecast: predictionText(status.prediction, "phase"),
    forecastTimeZone: predictionText(status.prediction, "timeZone"),
    forecastSuspendedSince: suspendedSince(status.prediction),
    nextPrewake: predictionText(status.prediction, "nextPrewake"),
    dryRun,
    dryRunSavedReplicaHours: dryRun ? (status.dryRun?.heldReplicaHours ?? 0) : null,
  };
}

type Status = NonNullable<ManagedWorkload["status"]>;

/**
 * The replicas a pause holds. From the target just read: the count it carries to restore (the one a resume
 * restores), which only means a pause at 0 replicas: with replicas it marks a pause or a resume interrupted, and
 * the workload runs, whatever status still says. Status says only when the target could not be read.
 */
function heldReplicas(status: Status, target: TargetReplicas | undefined): number | null {
  if (!target) return status.pausedFrom ?? null;
  return target.replicas === 0 ? pausedFromOf(target) : null;
}

function phaseReason(status: Status): string | null {
  const type = status.phase === "Unmanaged" ? conditionTypes.managed : conditionTypes.paused;
  return findCondition(status.conditions, type)?.reason || null;
}

/** Phases in which the controller runs the idle clock: an awake workload, or one in dry-run (never paused). */
const awakePhases: ReadonlySet<string> = new Set(["Awake", "DryRun"]);

/**
 * When the workload became idle, as the controller counts it (decide.ts, activity-clock.ts): an awake one since
 * its last activity or its last wake, whichever is later. A paused one since its last activity only: the pause
 * overwrote the wake time in status, and the controller counts no idleness while paused.
 */
function idleSinceMs(mw: ManagedWorkload, status: Status): number | null {
  const activityMs = timeOf(status.lastActivity?.time);
  const awakeMs = awakePhases.has(status.phase ?? "") ? awakeSinceMs(mw, status) : null;
  if (activityMs === null || awakeMs === null) return activityMs ?? awakeMs;
  return Math.max(activityMs, awakeMs);
}

/** When an awake workload was last woken: the Paused condition's turn to False, else its adoption. */
function awakeSinceMs(mw: ManagedWorkload, status: Status): number | null {
  const paused = findCondition(status.conditions, conditionTypes.paused);
  // Status still says paused (the write after a wake was lost): the controller restarts the clock, from a
  // time the plugin cannot see.
  if (paused?.status === "True" || status.pausedAt !== undefined) return null;
  const wokenMs = paused?.status === "False" ? timeOf(paused.lastTransitionTime) : null;
  return wokenMs ?? timeOf(mw.metadata.creationTimestamp);
}

/** A non-empty string field of status.prediction, which the forecast engine owns (the schema keeps any shape). */
function predictionText(prediction: Record<string, unknown> | undefined, key: string): string | null {
  const value = prediction?.[key];
  return typeof value === "string" && value ? value : null;
}

/** adviceSuspended.since; one that is not a time counts as not suspended, as the controller reads it. */
function suspendedSince(prediction: Record<string, unknown> | undefined): string | null {
  const suspended = prediction?.adviceSuspended;
  const since = typeof suspended === "object" && suspended ? (suspended as { since?: unknown }).since : null;
  return typeof since === "string" && timeOf(since) !== null ? since : null;
}

function secondsSince(ms: number | null, nowMs: number): number | null {
  // A time ahead of our clock is skew between machines: it happened just now.
  return ms === null ? null : Math.max(0, Math.floor((nowMs - ms) / 1000));
}

function byNamespaceThenName(a: StatusRow, b: StatusRow): number {
  return a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name);
}

/** An age in its two largest units, as kubectl writes them: 45s, 5m3s, 2h5m, 3d4h. */
export function formatAge(seconds: number): string {
  const units: [string, number][] = [
    ["d", 86_400],
    ["h", 3_600],
    ["m", 60],
    ["s", 1],
  ];
  let rest = Math.max(0, Math.floor(seconds));
  const parts: string[] = [];
  for (const [unit, size] of units) {
    const amount = Math.floor(rest / size);
    rest -= amount * size;
    if (parts.length === 0 && amount === 0) continue;
    if (amount > 0) parts.push(`${amount}${unit}`);
    if (parts.length === 2 || (parts.length === 1 && amount === 0)) break;
  }
  return parts.join("") || "0s";
}

/** "3", "0 (3 held)", "-" when the target's count is unknown. */
export function formatReplicas(row: Pick<StatusRow, "replicas" | "heldReplicas">): string {
  const current = row.replicas === null ? "-" : String(row.replicas);
  return row.heldReplicas === null ? current : `${current} (${row.heldReplicas} held)`;
}

/** "active-weekly", "active-weekly (suspended)" while its advice is suspended, "-" when there is none. */
export function formatForecast(row: Pick<StatusRow, "forecast" | "forecastSuspendedSince">): string {
  const phase = row.forecast ?? "-";
  return row.forecastSuspendedSince === null ? phase : `${phase} (suspended)`;
}

function formatReplicaHours(hours: number): string {
  return `${Number(hours.toFixed(2))} replica-h`;
}

export function formatStatusTable(rows: readonly StatusRow[], opts: { allNamespaces: boolean }): string {
  const header = [
    ...(opts.allNamespaces ? ["NAMESPACE"] : []),
    "NAME",
    "TARGET",
    "PHASE",
    "REASON",
    "REPLICAS",
    "IDLE FOR",
    "PAUSED SINCE",
    "FORECAST",
    "DRY-RUN SAVED",
  ];
  const cells = rows.map((row) => [
    ...(opts.allNamespaces ? [row.namespace] : []),
    row.name,
    row.target,
    row.phase ?? "-",
    row.reason ?? "-",
    formatReplicas(row),
    row.idleForSeconds === null ? "-" : formatAge(row.idleForSeconds),
    row.pausedForSeconds === null ? "-" : formatAge(row.pausedForSeconds),
    formatForecast(row),
    row.dryRunSavedReplicaHours === null ? "-" : formatReplicaHours(row.dryRunSavedReplicaHours),
  ]);
  return alignColumns([header, ...cells]);
}

/** Columns padded to their widest cell and three spaces apart, like kubectl get. */
export function alignColumns(table: string[][]): string {
  const widths = table[0]?.map((_, i) => Math.max(...table.map((r) => (r[i] ?? "").length))) ?? [];
  return table
    .map((r) =>
      r
        .map((cell, i) => (i === r.length - 1 ? cell : cell.padEnd(widths[i] ?? 0)))
        .join("   ")
        .trimEnd(),
    )
    .join("\n")
    .concat("\n");
}

export function noRowsMessage(namespace: string | null): string {
  return namespace === null
    ? "No ManagedWorkloads found.\n"
    : `No ManagedWorkloads found in namespace ${namespace}. Use -n <namespace>, or -A for every namespace.\n`;
}

/** A listing of one kind of workload, for its replica counts. */
export interface TargetListing {
  kind: TargetKind;
  list: () => Promise<{ items: readonly { metadata?: V1ObjectMeta; spec?: { replicas?: number } }[] }>;
}

/**
 * The workloads' replica counts, by `targetKey`. They are a nicety: a kind that cannot be listed (no permission to
 * list StatefulSets, say) is warned of and its workloads show "-", and the other kind's counts stay.
 */
export async function replicaCounts(
  listings: readonly TargetListing[],
  warn: (text: string) => void,
): Promise<Map<string, TargetReplicas>> {
  const targets = new Map<string, TargetReplicas>();
  for (const { kind, list } of listings) {
    try {
      for (const item of (await list()).items) {
        const meta = item.metadata ?? {};
        targets.set(targetKey(meta.namespace ?? "", kind, meta.name ?? ""), {
          replicas: item.spec?.replicas ?? 1,
          annotations: meta.annotations ?? {},
        });
      }
    } catch (err) {
      warn(`warning: ${err instanceof Error ? err.message : String(err)}; their replicas are shown as "-"\n`);
    }
  }
  return targets;
}
