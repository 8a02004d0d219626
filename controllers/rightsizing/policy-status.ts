/**
 * What a RightsizingPolicy's status says: how many workloads it governs, and whether it is in effect at all. Pure.
 *
 * A policy governs a workload when it is the policy whose settings apply to one of its resources (the highest in
 * precedence that sets that resource, even where an annotation sets the mode), or whose apply strategy the
 * workload follows (the highest in precedence that selects it). One that selects workloads but governs none is
 * outranked: the usual surprise after a policy is added beside another, which status now shows.
 */
import { setCondition } from "../../api/conditions.ts";
import { annotations } from "../../api/keys.ts";
import type { RightsizingPolicy, RightsizingPolicyStatus } from "../../api/rightsizingpolicy.ts";
import type { ModeResolution } from "../../rightsizing/modes.ts";

export const policyConditionType = "InEffect";

/** Workloads a policy selects, and those it governs. */
export type PolicyReach = { readonly selected: number; readonly governed: number };

const nobody: PolicyReach = { selected: 0, governed: 0 };

/** Each policy's reach over the resolved modes of every workload Napwake may rightsize. */
export function policyReach(resolutions: readonly ModeResolution[]): Map<string, PolicyReach> {
  const reach = new Map<string, PolicyReach>();
  for (const modes of resolutions) {
    const governing = new Set(
      [modes.cpu.policy, modes.memory.policy, modes.matchedPolicies[0]].filter(
        (name): name is string => name !== undefined,
      ),
    );
    for (const name of modes.matchedPolicies) {
      const { selected, governed } = reach.get(name) ?? nobody;
      reach.set(name, { selected: selected + 1, governed: governed + (governing.has(name) ? 1 : 0) });
    }
  }
  return reach;
}

/** The status `policy` should have with `reach` (none: it selects nothing). */
export function decidePolicyStatus(
  policy: RightsizingPolicy,
  reach: PolicyReach | undefined,
  nowIso: string,
): RightsizingPolicyStatus {
  const { selected, governed } = reach ?? nobody;
  const generation = policy.metadata.generation;
  return {
    observedGeneration: generation ?? 0,
    matchedWorkloads: governed,
    conditions: setCondition(policy.status?.conditions, inEffect(selected, governed), nowIso, generation),
  };
}

function inEffect(selected: number, governed: number) {
  const type = policyConditionType;
  if (governed > 0) {
    const message =
      governed === selected
        ? `governs the ${workloads(selected)} it selects`
        : `governs ${governed} of the ${workloads(selected)} it selects; policies that take precedence ` +
          "(higher spec.priority, or the same priority and a name earlier in order) govern the others";
    return { type, status: "True" as const, reason: "Governing", message };
  }
  if (selected > 0) {
    return {
      type,
      status: "False" as const,
      reason: "Outranked",
      message:
        `selects ${workloads(selected)}, but policies that take precedence (higher spec.priority, or the same ` +
        "priority and a name earlier in order) govern all it sets for them (CPU, memory, the apply strategy): " +
        "raise spec.priority to govern them",
    };
  }
  return {
    type,
    status: "False" as const,
    reason: "NoWorkloads",
    message:
      "selects no Deployment or StatefulSet Napwake may rightsize (kube-* namespaces and Napwake's own are " +
      "never rightsized): check spec.selector",
  };
}

function workloads(n: number): string {
  return n === 1 ? "1 workload" : `${n} workloads`;
}

/**
 * The last value seen per key, to tell a change that matters from one that does not (a status write, a replica
 * count). A key seen for the first time, or gone (undefined), is a change.
 */
export class SeenValues {
  readonly #values = new Map<string, string>();

  /** Records `value` for `key`; true when it differs from the value recorded before. */
  changed(key: string, value: string | undefined): boolean {
    const before = this.#values.get(key);
    if (value === undefined) return this.#values.delete(key);
    this.#values.set(key, value);
    return before !== value;
  }
}

/** What choosing a workload's policies and modes reads of it (its kind and namespace are in its key). */
export function selectionInputs(metadata: {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
}): string {
  return JSON.stringify([
    metadata.labels ?? {},
    metadata.annotations?.[annotations.cpuMode] ?? null,
    metadata.annotations?.[annotations.memoryMode] ?? null,
  ]);
}
