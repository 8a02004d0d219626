import type { V1LabelSelector } from "@kubernetes/client-node";

/** A label selector as the string the API's `labelSelector` parameter takes. */
export function labelSelectorString(selector: V1LabelSelector | undefined): string {
  const parts = Object.entries(selector?.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const e of selector?.matchExpressions ?? []) {
    const values = (e.values ?? []).join(",");
    if (e.operator === "In") parts.push(`${e.key} in (${values})`);
    else if (e.operator === "NotIn") parts.push(`${e.key} notin (${values})`);
    else if (e.operator === "Exists") parts.push(e.key);
    else if (e.operator === "DoesNotExist") parts.push(`!${e.key}`);
  }
  return parts.join(",");
}

type RequirementLike = {
  readonly key: string;
  readonly operator: string;
  readonly values?: readonly string[];
};
/** metav1.LabelSelector as the typed client and our own API types both write it. */
export type SelectorLike = {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: readonly RequirementLike[];
};

/** Whether labels satisfy a metav1.LabelSelector; an absent selector matches everything. */
export function matchesSelector(
  selector: SelectorLike | undefined,
  labels: Readonly<Record<string, string>> = {},
): boolean {
  if (!selector) return true;
  const labelsMatch = Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  return labelsMatch && (selector.matchExpressions ?? []).every((r) => meetsRequirement(r, labels));
}

function meetsRequirement(r: RequirementLike, labels: Readonly<Record<string, string>>): boolean {
  const has = Object.hasOwn(labels, r.key);
  const value = labels[r.key];
  const values = r.values ?? [];
  switch (r.operator) {
    case "In":
      return has && value !== undefined && values.includes(value);
    case "NotIn":
      return !has || value === undefined || !values.includes(value);
    case "Exists":
      return has;
    case "DoesNotExist":
      return !has;
    default:
      // An operator the schema would have refused: match nothing rather than everything.
      return false;
  }
}
