/**
 * Rightsizing (`napwake.dev/v1alpha1`, namespaced): one per Deployment or StatefulSet that rightsizing
 * covers, named `<workload>.<kind in lower case>` like a ManagedWorkload and owned by the workload (so it
 * is garbage-collected with it). The operator creates it and writes its status: the recommendation per
 * container with bounds and confidence, the effective mode per resource and the source that decided it,
 * and the learned state (checkpoint) a restarted or newly elected operator resumes from. It is a sibling of
 * ManagedWorkload, not part of it: rightsizing covers every workload a policy selects, paused or not
 * (docs/decisions/0003). The schema lives in manifests/crds/rightsizing.yaml.
 */

import { apiVersion, group, version } from "./keys.ts";
import type { Condition } from "./managedworkload.ts";
import type { NamespacedObjectMeta } from "./meta.ts";
import { workloadObjectName } from "./names.ts";
import type { ApplyStrategyType, RightsizingMode, WorkloadKind } from "./rightsizingpolicy.ts";

export const rightsizingCrd = {
  group,
  version,
  apiVersion,
  kind: "Rightsizing",
  plural: "rightsizings",
} as const;

/** `<workload>.<kind in lower case>` (see `workloadObjectName`): one object per workload, never two for one. */
export function rightsizingName(kind: WorkloadKind, workload: string): string {
  return workloadObjectName(kind, workload);
}

/** Quantities as Kubernetes writes them (`250m`, `512Mi`); absent when not set. */
export interface ResourceValues {
  cpuRequest?: string;
  memoryRequest?: string;
  memoryLimit?: string;
}

export interface ContainerRecommendation {
  name: string;
  /** What the pod template asks for now. */
  current: ResourceValues;
  /** Absent until the recommender has seen the container. */
  target?: ResourceValues;
  lowerBound?: ResourceValues;
  upperBound?: ResourceValues;
  /** 0..1, grows with the history behind the values; 0 with too little history. */
  confidence?: number;
  /** `ok`, or `insufficient-history` (shown for information, never applied). */
  state?: "ok" | "insufficient-history";
  /** Hours of history with pods present behind the values (paused time is not counted). */
  historyHours?: number;
  /** Why the values are what they are, as reason codes of the recommender. */
  reasons?: string[];
  /** The learned state, compact and versioned (see rightsizing/checkpoint.ts). */
  checkpoint?: string;
}

export interface ResourceModeStatus {
  mode: RightsizingMode;
  /** What the deciding source asked for; differs from `mode` when auto-patch degraded to audit. */
  requested: RightsizingMode;
  /** `global-default`, `cluster-default`, `policy/<name>` or `annotation`. */
  source: string;
  /** The policy whose bounds apply, when one matched. */
  policy?: string;
  /** Why auto-patch degraded to audit (readiness checks that failed). */
  degradedBy?: string[];
  /** Readiness checks a policy's autoPatchOverride let through, and its reason. */
  overridden?: { policy: string; reason: string; checks: string[] };
  /** Policies tied at the winning priority, in the order that decided (the first won). */
  tie?: string[];
  /** A mode annotation on the workload whose value is not a mode, and so was ignored. */
  invalidAnnotation?: string;
}

/** The last skipped or blocked notice sent per reason: repeated ones are not sent again (survives restarts). */
export interface SentNotice {
  reason: string;
  /** The note and proposed values it was sent with. */
  value: string;
}

export interface RightsizingStatus {
  observedGeneration?: number;
  modes?: { cpu: ResourceModeStatus; memory: ResourceModeStatus };
  strategy?: ApplyStrategyType;
  /** Every RightsizingPolicy that selects the workload, highest priority first. */
  matchedPolicies?: string[];
  containers?: ContainerRecommendation[];
  /** When the recommender last folded new history for this workload, and the newest sample it read. */
  lastRun?: string;
  historyThrough?: string;
  conditions?: Condition[];
  notices?: SentNotice[];
}

export interface Rightsizing {
  apiVersion: typeof rightsizingCrd.apiVersion;
  kind: typeof rightsizingCrd.kind;
  metadata: NamespacedObjectMeta;
  spec: { targetRef: { kind: WorkloadKind; name: string } };
  status?: RightsizingStatus;
}
