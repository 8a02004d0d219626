import type { Condition } from "./managedworkload.ts";

export interface ConditionUpdate {
  type: string;
  status: Condition["status"];
  reason: string;
  message: string;
}

/**
 * Sets one condition in a list, following the API conventions: `lastTransitionTime` changes only when the
 * status flips; reason, message and observedGeneration are always brought up to date. Pure: returns a new list.
 */
export function setCondition(
  conditions: readonly Condition[] | undefined,
  update: ConditionUpdate,
  nowIso: string,
  generation: number | undefined,
): Condition[] {
  const list = [...(conditions ?? [])];
  const index = list.findIndex((c) => c.type === update.type);
  const previous = index >= 0 ? list[index] : undefined;
  const next: Condition = {
    ...update,
    lastTransitionTime: previous && previous.status === update.status ? previous.lastTransitionTime : nowIso,
    ...(generation === undefined ? {} : { observedGeneration: generation }),
  };
  if (index >= 0) list[index] = next;
  else list.push(next);
  return list;
}

export function findCondition(
  conditions: readonly Condition[] | undefined,
  type: string,
): Condition | undefined {
  return conditions?.find((c) => c.type === type);
}

/**
 * `status` with only the conditions of `types`, as a controller applies it. Conditions merge by type under
 * server-side apply: one sent back as read, though another tool set it, would be owned by both, and stay after
 * that tool removed it.
 */
export function withOwnConditions<S extends { readonly conditions?: readonly Condition[] }>(
  status: S,
  types: readonly string[],
): S {
  if (!status.conditions) return status;
  return { ...status, conditions: status.conditions.filter((c) => types.includes(c.type)) };
}
