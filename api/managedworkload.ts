/**
 * The ManagedWorkload custom resource: its types (matching manifests/crds/managedworkload.yaml) and pure helpers.
 * Objects read from the API server have every schema default filled in; the `?` fields may be left out of what
 * is written (the schema fills in those that have a default).
 */

import { apiVersion, group, version } from "./keys.ts";
import type { NamespacedObjectMeta } from "./meta.ts";

export const managedWorkloadCrd = {
  group,
  version,
  apiVersion,
  kind: "ManagedWorkload",
  listKind: "ManagedWorkloadList",
  plural: "managedworkloads",
  singular: "managedworkload",
  /** `<plural>.<group>`, the CustomResourceDefinition's name. */
  name: `managedworkloads.${group}`,
} as const;

export const targetKinds = ["Deployment", "StatefulSet"] as const;
export type TargetKind = (typeof targetKinds)[number];

export const phases = ["Pending", "Awake", "Pausing", "Paused", "Resuming", "DryRun", "Unmanaged"] as const;
export type Phase = (typeof phases)[number];

export const activitySources = ["cpu", "prometheus", "request", "annotation", "manual", "scale-up"] as const;
export type ActivitySource = (typeof activitySources)[number];

export const activeWhenValues = ["Above", "Below"] as const;
export type ActiveWhen = (typeof activeWhenValues)[number];

export const gitOpsTools = ["argocd", "flux", "helm", "kubectl", "other"] as const;
export type GitOpsTool = (typeof gitOpsTools)[number];

export const autoscalerKinds = ["HorizontalPodAutoscaler", "ScaledObject"] as const;
export type AutoscalerKind = (typeof autoscalerKinds)[number];

/** The schema's defaults, for code that builds a spec itself (the opt-in reconcilers). */
export const specDefaults = {
  idleWindow: "30m",
  cpuThreshold: "50m",
  activeWhen: "Above",
  forecastEnabled: true,
  prewake: "10m",
  awakeBudget: "IdleWindow",
  forecastHistory: "Prometheus",
} as const;

/**
 * Prometheus: a new forecast engine (nothing saved to restore, or a saved state discarded) starts from the
 * activity history Prometheus holds, when the operator has --prometheus-url. None: it learns from the time it
 * starts.
 */
export const forecastHistories = ["Prometheus", "None"] as const;
export type ForecastHistory = (typeof forecastHistories)[number];

/**
 * IdleWindow: with a trusted idle window shorter than spec.idle.window (the default), the forecast keeps a
 * workload awake no longer, over time, than spec.idle.window alone would. None: a fixed chance threshold,
 * which may spend more awake time for fewer cold starts.
 */
export const awakeBudgets = ["IdleWindow", "None"] as const;
export type AwakeBudget = (typeof awakeBudgets)[number];

export interface TargetRef {
  /** Always `apps/v1` (the default). */
  apiVersion?: "apps/v1";
  kind: TargetKind;
  name: string;
}

export interface ActivityQuery {
  name: string;
  /** PromQL instant query returning one number. */
  query: string;
  threshold: number;
  activeWhen?: ActiveWhen;
}

export interface IdleRules {
  /** A duration such as `30m` (see parseDuration). */
  window?: string;
  /** A CPU quantity such as `50m`: the total of the workload's pods. */
  cpuThreshold?: string;
  activityQueries?: ActivityQuery[];
}

export interface ForecastSettings {
  enabled?: boolean;
  /** A duration such as `10m`. */
  prewake?: string;
  /** The idle window while the forecast is trusted (a duration); unset: half of spec.idle.window. */
  idleWindow?: string;
  awakeBudget?: AwakeBudget;
  history?: ForecastHistory;
  /** The IANA time zone whose clock the learned seasons follow; unset: the operator's --forecast-time-zone. */
  timeZone?: string;
}

export interface Dependency {
  kind: TargetKind;
  name: string;
}

export interface ManagedWorkloadSpec {
  /** Immutable. */
  targetRef: TargetRef;
  idle?: IdleRules;
  forecast?: ForecastSettings;
  dryRun?: boolean;
  protected?: boolean;
  dependencies?: Dependency[];
}

/** metav1.Condition as JSON (times are RFC 3339 strings). */
export interface Condition {
  type: string;
  status: "True" | "False" | "Unknown";
  observedGeneration?: number;
  lastTransitionTime: string;
  reason: string;
  message: string;
}

export interface ManagedWorkloadStatus {
  observedGeneration?: number;
  phase?: Phase;
  /** The replica count to restore on resume, while paused or pausing. */
  pausedFrom?: number;
  pausedAt?: string;
  /**
   * The `napwake.dev/pause-requested` value last acted on: a stamp from a clock ahead of the operator's is
   * later than the wake that follows its pause, so the time alone would make it a new request.
   */
  lastHandledPauseRequest?: string;
  lastActivity?: { time?: string; source?: ActivitySource };
  autoscaler?: { kind?: AutoscalerKind; name?: string };
  gitOps?: { tool?: GitOpsTool; manager?: string; message?: string };
  /** Pauses a sync loop set spec.replicas back after, in a row; pausing is held off meanwhile. */
  pausesUndone?: { count: number; lastAt: string; tool?: GitOpsTool; manager?: string };
  dryRun?: { wouldPauseSince?: string; accountedAt?: string; heldReplicaHours?: number };
  conditions?: Condition[];
  /** Owned by the forecast engine; the schema keeps whatever it writes. */
  prediction?: Record<string, unknown>;
}

export interface ManagedWorkload {
  apiVersion: typeof managedWorkloadCrd.apiVersion;
  kind: typeof managedWorkloadCrd.kind;
  metadata: NamespacedObjectMeta;
  spec: ManagedWorkloadSpec;
  status?: ManagedWorkloadStatus;
}

const unitMs: Record<string, number> = {
  ns: 1e-6,
  us: 1e-3,
  ms: 1,
  s: 1_000,
  m: 60_000,
  h: 3_600_000,
};
// The grammar the CRD's CEL rules accept (a subset of Go's time.ParseDuration, which CEL's duration() uses).
const durationPattern = /^(?:\d+(?:\.\d+)?(?:ns|us|ms|s|m|h))+$/;
const durationPart = /(\d+(?:\.\d+)?)(ns|us|ms|s|m|h)/g;

/** The CRD's cap on spec.forecast.prewake: a lead of hours would keep a daily workload awake all day. */
export const MAX_PREWAKE_MS = 2 * 3_600_000;

/**
 * The pre-wake lead in force: spec.forecast.prewake, or its default. An object stored before the CRD capped it
 * keeps a longer value, which the API server still accepts unchanged; it is held to the cap here.
 */
export function prewakeLeadMs(spec: ManagedWorkloadSpec): number {
  return Math.min(MAX_PREWAKE_MS, parseDuration(spec.forecast?.prewake ?? specDefaults.prewake));
}

/** Milliseconds in a duration such as `30m`, `2h`, `1h30m` or `90s`. Throws on anything else. */
export function parseDuration(text: string): number {
  if (!durationPattern.test(text)) {
    throw new Error(
      `"${text}" is not a duration: write a number and a unit, such as 30m, 2h or 1h30m (units s, m, h; for days write hours, e.g. 48h)`,
    );
  }
  let ms = 0;
  for (const [, amount, unit] of text.matchAll(durationPart))
    ms += Number(amount) * (unitMs[unit ?? ""] ?? 0);
  return ms;
}

/**
 * Why a ManagedWorkload as stored cannot be read (a CRD before the spec was required stored one without), or
 * null. The schema refuses such an object now; one already stored is left out by the controllers, not read.
 */
export function unreadableManagedWorkload(mw: { spec?: Partial<ManagedWorkloadSpec> }): string | null {
  const ref = mw.spec?.targetRef;
  if (!ref) return "it has no spec.targetRef: set the Deployment or StatefulSet it manages";
  if (
    !(targetKinds as readonly unknown[]).includes(ref.kind) ||
    typeof ref.name !== "string" ||
    ref.name === ""
  ) {
    return "its spec.targetRef does not name a Deployment or StatefulSet: set kind and name";
  }
  return null;
}
