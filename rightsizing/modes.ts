// Which rightsizing mode applies to a workload, per resource, and which source decided it. Lowest to
// highest: the global default (audit), the cluster default, the matching RightsizingPolicy with the highest
// priority (per resource, among the policies that set that resource), the workload's annotation. A requested
// auto-patch runs only when the readiness checks pass or the deciding policy overrides them with a reason;
// otherwise it degrades to audit and says why. Pure.

import { annotations } from "../api/keys.ts";
import type {
  ApplyStrategyType,
  ResourcePolicy,
  RightsizingMode,
  RightsizingPolicy,
  RightsizingResource,
  WorkloadKind,
} from "../api/rightsizingpolicy.ts";
import { isRightsizingMode, rightsizingResources } from "../api/rightsizingpolicy.ts";
import { matchesSelector } from "../kube/selectors.ts";

export const globalDefaultMode: RightsizingMode = "audit";

export type ModeSource = "global-default" | "cluster-default" | `policy/${string}` | "annotation";

export type ModeWorkload = {
  readonly kind: WorkloadKind;
  readonly namespace: string;
  readonly name: string;
  readonly labels?: Readonly<Record<string, string>>;
  readonly annotations?: Readonly<Record<string, string>>;
};

/** What auto-patch needs from the cluster. Each check that fails is one degradation reason. */
export type ReadinessChecks = {
  readonly metricsSourceHealthy: boolean;
  readonly enoughHistory: boolean;
  readonly inPlaceResizeAvailable: boolean;
};

export const ReadinessFailure = {
  metricsSourceUnhealthy: "metrics-source-unhealthy",
  insufficientHistory: "insufficient-history",
  inPlaceResizeUnavailable: "in-place-resize-unavailable",
} as const;
export type ReadinessFailure = (typeof ReadinessFailure)[keyof typeof ReadinessFailure];

export type ModeInput = {
  readonly workload: ModeWorkload;
  /** Labels of the workload's namespace (kubernetes.io/metadata.name included, as the API server sets it). */
  readonly namespaceLabels: Readonly<Record<string, string>>;
  readonly policies: readonly RightsizingPolicy[];
  /** The operator configuration's default per resource; a missing resource falls to the global default. */
  readonly clusterDefault?: Partial<Record<RightsizingResource, RightsizingMode>>;
  readonly readiness: ReadinessChecks;
};

export type EffectiveMode = {
  readonly mode: RightsizingMode;
  /** The mode the deciding source asked for; differs from `mode` only when auto-patch degraded to audit. */
  readonly requested: RightsizingMode;
  readonly source: ModeSource;
  /** The policy that governs this resource (bounds, largest change), even when an annotation set the mode. */
  readonly policy?: string;
  readonly settings?: ResourcePolicy;
  /** Policies at the winning priority, in order, when more than one: the first one won. */
  readonly tie?: readonly string[];
  /** Why auto-patch degraded to audit. */
  readonly degraded?: readonly ReadinessFailure[];
  /** Failed checks that the governing policy's autoPatchOverride let through: worth an Event. */
  readonly overridden?: {
    readonly policy: string;
    readonly reason: string;
    readonly checks: readonly ReadinessFailure[];
  };
  /** An annotation with a value that is not a mode, ignored. */
  readonly invalidAnnotation?: { readonly key: string; readonly value: string };
};

export type ModeResolution = {
  readonly cpu: EffectiveMode;
  readonly memory: EffectiveMode;
  /** The apply strategy of the highest-priority matching policy (in-place when none). */
  readonly strategy: ApplyStrategyType;
  /** Every policy that selects the workload, highest priority first. */
  readonly matchedPolicies: readonly string[];
};

const annotationKey: Record<RightsizingResource, string> = {
  cpu: annotations.cpuMode,
  memory: annotations.memoryMode,
};

export function policySelects(
  policy: RightsizingPolicy,
  workload: ModeWorkload,
  namespaceLabels: Readonly<Record<string, string>>,
): boolean {
  const { kinds, namespaceSelector, workloadSelector } = policy.spec.selector ?? {};
  if (kinds && kinds.length > 0 && !kinds.includes(workload.kind)) return false;
  return (
    matchesSelector(namespaceSelector, namespaceLabels) && matchesSelector(workloadSelector, workload.labels)
  );
}

const priorityOf = (p: RightsizingPolicy): number => p.spec.priority ?? 0;

/** Highest priority first; equal priorities by name, so the outcome never depends on list order. */
function byPrecedence(a: RightsizingPolicy, b: RightsizingPolicy): number {
  const byPriority = priorityOf(b) - priorityOf(a);
  if (byPriority !== 0) return byPriority;
  return a.metadata.name < b.metadata.name ? -1 : a.metadata.name > b.metadata.name ? 1 : 0;
}

type Decision = {
  readonly mode: RightsizingMode;
  readonly source: ModeSource;
  readonly policy?: RightsizingPolicy;
  readonly tie?: readonly string[];
  readonly invalidAnnotation?: { readonly key: string; readonly value: string };
};

function decide(
  resource: RightsizingResource,
  input: ModeInput,
  matched: readonly RightsizingPolicy[],
): Decision {
  const candidates = matched.filter((p) => p.spec[resource] !== undefined);
  const [winner] = candidates;
  const atTop = winner ? candidates.filter((p) => priorityOf(p) === priorityOf(winner)) : [];
  const tie = atTop.length > 1 ? atTop.map((p) => p.metadata.name) : undefined;
  const clusterMode = input.clusterDefault?.[resource];
  const below: Decision = winner
    ? {
        mode: winner.spec[resource]?.mode ?? globalDefaultMode,
        source: `policy/${winner.metadata.name}`,
        policy: winner,
      }
    : clusterMode
      ? { mode: clusterMode, source: "cluster-default" }
      : { mode: globalDefaultMode, source: "global-default" };
  const withTie = tie ? { ...below, tie } : below;

  const key = annotationKey[resource];
  const value = input.workload.annotations?.[key];
  if (value === undefined) return withTie;
  if (!isRightsizingMode(value)) return { ...withTie, invalidAnnotation: { key, value } };
  return { ...withTie, mode: value, source: "annotation" };
}

function failedChecks(readiness: ReadinessChecks, strategy: ApplyStrategyType): ReadinessFailure[] {
  const failures: ReadinessFailure[] = [];
  if (!readiness.metricsSourceHealthy) failures.push(ReadinessFailure.metricsSourceUnhealthy);
  if (!readiness.enoughHistory) failures.push(ReadinessFailure.insufficientHistory);
  // A rollout patches the pod template, so it does not need the resize subresource.
  if (strategy !== "rollout" && !readiness.inPlaceResizeAvailable) {
    failures.push(ReadinessFailure.inPlaceResizeUnavailable);
  }
  return failures;
}

function effective(
  decision: Decision,
  input: ModeInput,
  strategy: ApplyStrategyType,
  resource: RightsizingResource,
): EffectiveMode {
  const { policy, ...rest } = decision;
  const base: EffectiveMode = {
    mode: decision.mode,
    requested: decision.mode,
    source: rest.source,
    ...(policy ? { policy: policy.metadata.name, settings: policy.spec[resource] } : {}),
    ...(rest.tie ? { tie: rest.tie } : {}),
    ...(rest.invalidAnnotation ? { invalidAnnotation: rest.invalidAnnotation } : {}),
  };
  if (decision.mode !== "auto-patch") return base;
  const failures = failedChecks(input.readiness, strategy);
  if (failures.length === 0) return base;
  // The override is the administrator's, for the modes their policy decides: a workload's own annotation asking
  // for auto-patch does not borrow it.
  const override = rest.source === "annotation" ? undefined : policy?.spec.autoPatchOverride;
  if (policy && override && override.reason.trim() !== "") {
    return {
      ...base,
      overridden: { policy: policy.metadata.name, reason: override.reason, checks: failures },
    };
  }
  return { ...base, mode: "audit", degraded: failures };
}

/** The effective mode of each resource of a workload, with the source that decided it. */
export function resolveModes(input: ModeInput): ModeResolution {
  const matched = input.policies
    .filter((p) => policySelects(p, input.workload, input.namespaceLabels))
    .sort(byPrecedence);
  const strategy = matched[0]?.spec.strategy?.type ?? "in-place";
  const [cpu, memory] = rightsizingResources.map((resource) =>
    effective(decide(resource, input, matched), input, strategy, resource),
  ) as [EffectiveMode, EffectiveMode];
  return { cpu, memory, strategy, matchedPolicies: matched.map((p) => p.metadata.name) };
}
