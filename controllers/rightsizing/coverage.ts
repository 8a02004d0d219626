/**
 * Which workloads rightsizing covers, and the facts its decision needs from each. Pure.
 *
 * A workload is covered when its effective mode is not `off` for CPU or for memory. Workloads in the
 * Kubernetes system namespaces (`kube-*`) and in the operator's own namespace are never covered.
 */
import type { V1Container, V1Deployment, V1StatefulSet } from "@kubernetes/client-node";
import type {
  RightsizingMode,
  RightsizingPolicy,
  RightsizingResource,
  WorkloadKind,
} from "../../api/rightsizingpolicy.ts";
import { quantityOrUndefined as quantity } from "../../kube/quantity.ts";
import { type ModeResolution, type ReadinessChecks, resolveModes } from "../../rightsizing/modes.ts";
import type { ContainerFacts } from "./decide.ts";

export type Workload = (V1Deployment | V1StatefulSet) & { kind?: string };

export type CoveredWorkload = {
  readonly kind: WorkloadKind;
  readonly namespace: string;
  readonly name: string;
  readonly uid: string;
  readonly replicas: number;
  readonly containers: readonly ContainerFacts[];
  readonly modes: ModeResolution;
};

export type CoverageInput = {
  readonly workload: Workload;
  readonly kind: WorkloadKind;
  readonly namespaceLabels: Readonly<Record<string, string>> | undefined;
  readonly policies: readonly RightsizingPolicy[];
  readonly clusterDefault: Partial<Record<RightsizingResource, RightsizingMode>>;
  readonly operatorNamespace: string;
  readonly readiness: ReadinessChecks;
};

/**
 * The workload's modes, or why it is never rightsized (its namespace, or a namespace not known yet). Modes both
 * `off` are modes too: the policy that set them decides for the workload.
 */
export function rightsizedModes(input: CoverageInput): { modes: ModeResolution } | { notCovered: string } {
  const meta = input.workload.metadata ?? {};
  const namespace = meta.namespace ?? "";
  if (namespace.startsWith("kube-") || namespace === input.operatorNamespace) {
    return { notCovered: `namespace ${namespace} is never rightsized` };
  }
  if (input.namespaceLabels === undefined) return { notCovered: `namespace ${namespace} is not known yet` };
  const modes = resolveModes({
    workload: {
      kind: input.kind,
      namespace,
      name: meta.name ?? "",
      labels: meta.labels ?? {},
      annotations: meta.annotations ?? {},
    },
    namespaceLabels: input.namespaceLabels,
    policies: input.policies,
    clusterDefault: input.clusterDefault,
    readiness: input.readiness,
  });
  return { modes };
}

/** The covered workload, or the reason it is not covered. */
export function coverage(input: CoverageInput): { covered: CoveredWorkload } | { notCovered: string } {
  const resolved = rightsizedModes(input);
  if ("notCovered" in resolved) return resolved;
  const { modes } = resolved;
  const meta = input.workload.metadata ?? {};
  const namespace = meta.namespace ?? "";
  const name = meta.name ?? "";
  if (modes.cpu.mode === "off" && modes.memory.mode === "off") {
    return {
      notCovered: `rightsizing is off for cpu (${modes.cpu.source}) and memory (${modes.memory.source})`,
    };
  }
  return {
    covered: {
      kind: input.kind,
      namespace,
      name,
      uid: meta.uid ?? "",
      replicas: input.workload.spec?.replicas ?? 1,
      containers: runningContainers(input.workload).map(containerFacts),
      modes,
    },
  };
}

/**
 * The containers that run for the pod's whole life: its containers and its native sidecars (init containers
 * with `restartPolicy: Always`), which are resized like the others. Plain init containers run to completion.
 */
export function runningContainers(workload: Workload): V1Container[] {
  const spec = workload.spec?.template.spec;
  const sidecars = (spec?.initContainers ?? []).filter((c) => c.restartPolicy === "Always");
  return [...(spec?.containers ?? []), ...sidecars];
}

function containerFacts(c: V1Container): ContainerFacts {
  const facts: { -readonly [K in keyof ContainerFacts]: ContainerFacts[K] } = { name: c.name };
  // A request left out defaults to the limit, as the API server sets it on the pods.
  const cpu = quantity(c.resources?.requests?.cpu ?? c.resources?.limits?.cpu);
  const memory = quantity(c.resources?.requests?.memory ?? c.resources?.limits?.memory);
  const limit = quantity(c.resources?.limits?.memory);
  const cpuLimit = quantity(c.resources?.limits?.cpu);
  if (cpu !== undefined) facts.cpuRequestCores = cpu;
  if (memory !== undefined) facts.memoryRequestBytes = memory;
  if (limit !== undefined) facts.memoryLimitBytes = limit;
  if (cpuLimit !== undefined) facts.cpuLimitCores = cpuLimit;
  return facts;
}
