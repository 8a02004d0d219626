/**
 * RightsizingPolicy (`napwake.dev/v1alpha1`, cluster-scoped): which workloads it governs, how CPU and memory
 * are rightsized for them and how changes are applied. The schema and its validation live in
 * manifests/crds/rightsizingpolicy.yaml; these types mirror it.
 */

import { apiVersion } from "./keys.ts";

export const rightsizingPolicyKind = "RightsizingPolicy";
export const rightsizingPolicyPlural = "rightsizingpolicies";
export const rightsizingPolicyApiVersion = apiVersion;

export const rightsizingModes = ["off", "audit", "auto-patch"] as const;
export type RightsizingMode = (typeof rightsizingModes)[number];

export const rightsizingResources = ["cpu", "memory"] as const;
export type RightsizingResource = (typeof rightsizingResources)[number];

export const applyStrategies = ["in-place", "rollout", "deferred"] as const;
export type ApplyStrategyType = (typeof applyStrategies)[number];

export const workloadKinds = ["Deployment", "StatefulSet"] as const;
export type WorkloadKind = (typeof workloadKinds)[number];

export type LabelSelectorOperator = "In" | "NotIn" | "Exists" | "DoesNotExist";

export type LabelSelectorRequirement = {
  readonly key: string;
  readonly operator: LabelSelectorOperator;
  readonly values?: readonly string[];
};

/** metav1.LabelSelector: all of matchLabels and matchExpressions must hold; an empty selector matches all. */
export type LabelSelector = {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly LabelSelectorRequirement[];
};

export type PolicySelector = {
  /** Namespaces whose labels match; omitted: every namespace. */
  readonly namespaceSelector?: LabelSelector;
  /** Workloads whose labels match; omitted: every workload. */
  readonly workloadSelector?: LabelSelector;
  /** Workload kinds; omitted or empty: every kind. */
  readonly kinds?: readonly WorkloadKind[];
};

export type ResourcePolicy = {
  readonly mode: RightsizingMode;
  /** Smallest value ever recommended (a Kubernetes quantity: `50m`, `64Mi`; a bare number: cores or bytes). */
  readonly min?: string | number;
  /** Largest value ever recommended. */
  readonly max?: string | number;
  /** Largest change applied in one step, percent of the current value (1..100). */
  readonly maxChangePercent?: number;
};

export type MaintenanceWindow = {
  /** Five-field cron expression for when a window opens. */
  readonly schedule: string;
  /** How long a window stays open, a Go duration (`2h`, `90m`). */
  readonly duration: string;
  /** IANA time zone of the schedule; defaults to UTC. */
  readonly timeZone?: string;
};

export type ApplyStrategy = {
  readonly type: ApplyStrategyType;
  /** Required when, and only when, `type` is `deferred`. */
  readonly maintenanceWindow?: MaintenanceWindow;
};

export type AutoPatchOverride = {
  /** Why the readiness checks of auto-patch are overridden; recorded in an Event. */
  readonly reason: string;
};

export type RightsizingPolicySpec = {
  readonly selector: PolicySelector;
  /** Highest wins among the policies matching a workload; ties go to the name first in order. */
  readonly priority?: number;
  readonly cpu?: ResourcePolicy;
  readonly memory?: ResourcePolicy;
  readonly strategy?: ApplyStrategy;
  readonly autoPatchOverride?: AutoPatchOverride;
};

export type Condition = {
  readonly type: string;
  readonly status: "True" | "False" | "Unknown";
  readonly observedGeneration?: number;
  readonly lastTransitionTime: string;
  readonly reason: string;
  readonly message: string;
};

export type RightsizingPolicyStatus = {
  readonly observedGeneration?: number;
  readonly conditions?: readonly Condition[];
  /** Workloads this policy governs: its CPU or memory settings, or its apply strategy, apply to them. */
  readonly matchedWorkloads?: number;
};

export type RightsizingPolicy = {
  readonly apiVersion: typeof apiVersion;
  readonly kind: typeof rightsizingPolicyKind;
  readonly metadata: {
    readonly name: string;
    readonly generation?: number;
    readonly labels?: Readonly<Record<string, string>>;
    readonly annotations?: Readonly<Record<string, string>>;
    readonly resourceVersion?: string;
    readonly uid?: string;
  };
  readonly spec: RightsizingPolicySpec;
  readonly status?: RightsizingPolicyStatus;
};

export const isRightsizingMode = (value: unknown): value is RightsizingMode =>
  typeof value === "string" && (rightsizingModes as readonly string[]).includes(value);
