/**
 * Every label, annotation, condition type and Event reason Napwake reads or writes, in one place.
 * Annotations are the state the webhooks stamp and the controllers reconcile; see docs/architecture.md.
 */

export const group = "napwake.dev";
export const version = "v1alpha1";
export const apiVersion = `${group}/${version}`;

/** The one field manager of every server-side apply Napwake makes. */
export const fieldManager = "napwake";

export const labels = {
  /** `"true"` on a Deployment, StatefulSet or Namespace opts its workloads in. */
  managed: "napwake.dev/managed",
  /** Present on a workload: Napwake lets it go (resuming it first if paused). */
  ignore: "napwake.dev/ignore",
} as const;

/**
 * On a ManagedWorkload the opt-in controller created: the standard managed-by label. It says the object is opt-in's
 * after a delete with `--cascade=orphan` strips its ownerReference, so the workload made again adopts it, and
 * opting out still deletes it. Not a `napwake.dev/` label: nothing reads it on a workload.
 */
export const optInMarker = { key: "app.kubernetes.io/managed-by", value: "napwake-opt-in" } as const;

export const annotations = {
  /** On a workload: the ManagedWorkload (`<name>`, same namespace) that owns it. Stamped at admission. */
  managedBy: "napwake.dev/managed-by",
  /** On a workload: the replica count to restore on resume. A positive integer. */
  pausedFrom: "napwake.dev/paused-from",
  /** On a workload or Namespace: `"true"` protects it from being paused. */
  protected: "napwake.dev/protected",
  /** On a workload: RFC 3339 time of the last request the doorman held for it (debounced). */
  lastRequest: "napwake.dev/last-request",
  /** On a workload: RFC 3339 time of activity reported by anything else (a CI hook, a person). */
  activity: "napwake.dev/activity",
  /** On a ManagedWorkload: RFC 3339 time `kubectl napwake pause` asked for a pause. */
  pauseRequested: "napwake.dev/pause-requested",
  /** On a ManagedWorkload: RFC 3339 time `kubectl napwake resume` asked for a resume. */
  resumeRequested: "napwake.dev/resume-requested",
  /** On a workload: rightsizing mode for CPU (`off`, `audit`, `auto-patch`). */
  cpuMode: "napwake.dev/cpu-mode",
  /** On a workload: rightsizing mode for memory (`off`, `audit`, `auto-patch`). */
  memoryMode: "napwake.dev/memory-mode",
} as const;

/**
 * On the webhook CA Secret only (`--cert-source=self`): the CAs replaced within the last two grace periods,
 * each with the end of its grace in the caBundle, as JSON (see certs/retired-cas.ts). Not in `annotations`,
 * which are those a workload may carry and the validating webhook lists.
 */
export const retiredCasAnnotation = "napwake.dev/retired-cas";

/** KEDA's own annotation: a ScaledObject with it holds its target at that many replicas. */
export const kedaPausedReplicas = "autoscaling.keda.sh/paused-replicas";
/** KEDA's other pause: "true" stops it scaling the target at all, wherever the target is. */
export const kedaPaused = "autoscaling.keda.sh/paused";

export const conditionTypes = {
  /** The target exists, is not ignored or protected, and is under management. */
  managed: "Managed",
  /** The workload is scaled to zero by Napwake. */
  paused: "Paused",
  /** Another autoscaler (HPA, KEDA) scales the target. */
  autoscaled: "Autoscaled",
  /** A GitOps tool sets spec.replicas; the message says how to make it leave replicas alone. */
  gitOpsReplicas: "GitOpsReplicas",
  /** Decisions are made and recorded but nothing is scaled. */
  dryRun: "DryRun",
  /** On a Rightsizing: the metrics source answered the last run (False: recommendations are kept, not renewed). */
  metricsSourceHealthy: "MetricsSourceHealthy",
  /** On a Rightsizing: every container has a recommendation with enough history behind it. */
  recommendationReady: "RecommendationReady",
} as const;

/** The conditions a ManagedWorkload's status carries from Napwake; other tools may add their own. */
export const managedWorkloadConditionTypes: readonly string[] = [
  conditionTypes.managed,
  conditionTypes.paused,
  conditionTypes.autoscaled,
  conditionTypes.gitOpsReplicas,
  conditionTypes.dryRun,
];

/** The conditions a Rightsizing's status carries from Napwake. */
export const rightsizingConditionTypes: readonly string[] = [
  conditionTypes.metricsSourceHealthy,
  conditionTypes.recommendationReady,
];

export const eventReasons = {
  paused: "Paused",
  resumed: "Resumed",
  /** Woken ahead of forecast activity (spec.forecast.prewake before it). */
  preWake: "PreWake",
  /** The idle window passed but the forecast expects activity within it: not paused (once per idle stretch). */
  pauseVetoed: "PauseVetoed",
  pauseSkipped: "PauseSkipped",
  letGo: "LetGo",
  refused: "Refused",
  scaledOutside: "ScaledOutsideNapwake",
  /** A ScaledObject hold Napwake applied, with no pause of its own behind it any more, was released. */
  holdReleased: "ScaledObjectReleased",
  /** A sync loop set spec.replicas back while paused; pausing is held off for a while. */
  pauseUndone: "PauseUndone",
  dryRunPause: "DryRunPause",
  /** The forecast engine moved between learning, shadow and its active phases. */
  forecastPhaseChanged: "ForecastPhaseChanged",
  /** Forecast activity did not come (a holiday, a changed schedule): the clock decides alone until it does. */
  forecastAdviceSuspended: "ForecastAdviceSuspended",
  /** Activity came back after a suspension: the trusted forecast vetoes pauses and pre-wakes again. */
  forecastAdviceResumed: "ForecastAdviceResumed",
  /** Activity far outside the forecast interval: counted as activity, kept from distorting what is learned. */
  activityAnomaly: "ActivityAnomaly",
  /** A saved forecast state that could not be read was discarded; the engine learns again. */
  forecastStateDiscarded: "ForecastStateDiscarded",
  /** The forecast state could not be encoded to be saved: the last one saved stays. */
  forecastStateNotSaved: "ForecastStateNotSaved",
  /** A new forecast engine learned the workload's activity history from Prometheus. */
  forecastHistoryLearned: "ForecastHistoryLearned",
  /** Prometheus answered but held no activity history for the workload (new, or never scraped): it learns from now. */
  forecastHistoryEmpty: "ForecastHistoryEmpty",
  /** The activity history could not be read from Prometheus: the engine learns from now. */
  forecastHistoryUnavailable: "ForecastHistoryUnavailable",
  /** The forecast's seasons were placed anew by another time zone's clock (spec.forecast.timeZone changed). */
  forecastTimeZoneChanged: "ForecastTimeZoneChanged",
  /** spec.forecast.timeZone names a zone this operator does not know: the seasons follow the operator's default. */
  forecastTimeZoneUnknown: "ForecastTimeZoneUnknown",
  /** A new recommendation, or one that changed materially (see rightsizing/change.ts). */
  recommendationChanged: "RecommendationChanged",
  /** No recommendation for a workload or container yet (too little history, no series): sent once per reason. */
  recommendationSkipped: "RecommendationSkipped",
  /** auto-patch was asked for but the readiness checks failed: audit instead, sent once per reason. */
  autoPatchBlocked: "AutoPatchBlocked",
  /** A policy's autoPatchOverride let auto-patch through failed readiness checks. */
  autoPatchOverridden: "AutoPatchOverridden",
  /** The metrics source failed a run: recommendations are kept as they were. */
  metricsSourceFailed: "MetricsSourceFailed",
} as const;

export type EventReason = (typeof eventReasons)[keyof typeof eventReasons];
