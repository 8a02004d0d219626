import type { KubernetesObject } from "@kubernetes/client-node";
import type { EventReason } from "../../api/keys.ts";
import type { ManagedWorkload, ManagedWorkloadStatus, TargetKind } from "../../api/managedworkload.ts";
import type { ForecastAdvice } from "./activity-clock.ts";
import type { FoundAutoscaler, ScaledObject } from "./autoscalers.ts";
import type { ManagedFieldsEntry } from "./gitops.ts";

/** The workload a ManagedWorkload targets, as read from the informer cache. */
export interface TargetState {
  kind: TargetKind;
  name: string;
  namespace: string;
  uid: string;
  /** spec.replicas. */
  replicas: number;
  /** metadata.generation: it moves with every change of spec.replicas, so two pauses never share one. */
  generation?: number;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  managedFields: ManagedFieldsEntry[];
  /**
   * A StatefulSet whose persistentVolumeClaimRetentionPolicy.whenScaled is Delete: scaled down, it deletes the
   * claims of the pods it removes, so a pause would delete its data.
   */
  deletesVolumesWhenScaled?: boolean;
}

/** One measurement of the workload's activity; `null` values are unknown (the source failed). */
export interface ActivitySample {
  atMs: number;
  /** Total CPU of the workload's pods, in cores. */
  cpuCores: number | null;
  queries: { name: string; active: boolean | null; error?: string }[];
  errors: string[];
}

export interface ReconcilerSettings {
  /** Namespaces Napwake never pauses in, besides kube-system: its own. */
  operatorNamespace: string;
  /** How often an awake workload's activity is measured. */
  checkIntervalMs: number;
  /** How often a paused workload is looked at without new input (its activity queries, its forecast). */
  pausedCheckIntervalMs: number;
  /** Global dry-run (`--dry-run`): every workload decides but is never scaled. */
  dryRun?: boolean;
}

/** Everything a decision is made from: plain data, read from caches and measurements. */
export interface Observation {
  nowMs: number;
  mw: ManagedWorkload;
  target: TargetState | null;
  namespace: { labels: Record<string, string>; annotations: Record<string, string> } | null;
  /** Another ManagedWorkload that manages the target instead of this one (`otherOwner`). */
  existingOwner: string | null;
  autoscalers: FoundAutoscaler[];
  scaledObjects: ScaledObject[];
  /** Measured this time, or null when this reconcile did not measure. */
  activity: ActivitySample | null;
  forecast: ForecastAdvice | null;
  settings: ReconcilerSettings;
  fieldManager: string;
}

/** A write to the cluster, made in the order given; each intermediate state is one `decide` handles. */
export type Write =
  | { kind: "record-paused-from"; replicas: number }
  | { kind: "forget-paused-from" }
  /**
   * Through the scale subresource, only if the target still has `from` replicas. `finishesWake`: the scale from
   * zero of this wake was an autoscaler's (KEDA's, on the release of its ScaledObject), so this one counts it.
   */
  | { kind: "scale"; from: number; to: number; finishesWake?: true }
  | { kind: "apply"; object: KubernetesObject; why: string };

export interface EventIntent {
  type: "Normal" | "Warning";
  reason: EventReason;
  note: string;
  /**
   * An action (something Napwake did) and a notice (something it observed) are always sent; a skip only when its
   * note or fingerprint changed since it was last sent, or an action came in between.
   */
  kind: "action" | "notice" | "skip";
  fingerprint?: string;
  /** A skip's: what a repeat reads the same by, when its note carries an error's varying wording (see SkipInput). */
  sameAs?: string;
  /** An action's: the note of the skip that tells the same situation once it is done (see ActionInput). */
  settledAs?: string;
}

export interface Decision {
  writes: Write[];
  status: ManagedWorkloadStatus;
  events: EventIntent[];
  /** When to look again without new input; null when only new input can change the answer. */
  requeueAfterMs: number | null;
  /** One line on what was decided and why, for logs. */
  summary: string;
}
