import { quantityOrUndefined } from "../../kube/quantity.ts";
import type { ModeResolution } from "../../rightsizing/modes.ts";
import type { Bounded, ContainerResources, Recommendation } from "../../rightsizing/types.ts";

/** Reasons a recommendation gives when the governing policy's `min` or `max` moved it. */
export const policyBoundReasons = { cpu: "cpu-policy-bound", memory: "memory-policy-bound" } as const;

/**
 * The recommendation within the governing RightsizingPolicy's `min` and `max` per resource (the CRD's "smallest
 * / largest value ever recommended"): CPU's bound the request, memory's the request and the limit. A bound that
 * moved a target is named among the reasons.
 */
export function withinPolicyBounds(
  rec: Recommendation,
  modes: Pick<ModeResolution, "cpu" | "memory">,
): Recommendation & { readonly policyBound: readonly string[]; readonly ranges: PolicyRanges } {
  const { cpu, memory } = policyRanges(modes);
  const cpuRequestCores = clampBounded(rec.cpuRequestCores, cpu);
  const memoryRequestBytes = clampBounded(rec.memoryRequestBytes, memory);
  const memoryLimitBytes = clampBounded(rec.memoryLimitBytes, memory);
  const policyBound = [
    ...(cpuRequestCores.target !== rec.cpuRequestCores.target ? [policyBoundReasons.cpu] : []),
    ...(memoryRequestBytes.target !== rec.memoryRequestBytes.target ||
    memoryLimitBytes.target !== rec.memoryLimitBytes.target
      ? [policyBoundReasons.memory]
      : []),
  ];
  return {
    ...rec,
    cpuRequestCores,
    memoryRequestBytes,
    memoryLimitBytes,
    policyBound,
    ranges: { cpu, memory },
  };
}

export type Range = { readonly min: number; readonly max: number };
export type PolicyRanges = { readonly cpu: Range; readonly memory: Range };

/** The governing policy's `min` and `max` per resource; unbounded where it sets none. */
export function policyRanges(modes: Pick<ModeResolution, "cpu" | "memory">): PolicyRanges {
  return { cpu: boundsOf(modes.cpu.settings), memory: boundsOf(modes.memory.settings) };
}

/**
 * A value within `range` as the quantity status shows: whole millicores, rounded to the nearest, or whole Mi,
 * rounded up (rounded down, memory could fall below the recommender's minimum or the usage an OOM kill showed
 * was needed), but never outside the range (a max of 1G is 953Mi, not the 954Mi above it); exact units, of the
 * value brought within the range, when no whole one above zero fits.
 */
export function quantityWithin(value: number, range: Range, unit: "cores" | "bytes"): string {
  const [size, suffix] = unit === "cores" ? [1e-3, "m"] : [2 ** 20, "Mi"];
  // Zero whole units is no request at all: a value above zero is shown in exact units before it is shown as none.
  const inside = (n: number) => (n > 0 || value <= 0) && inRange(n * size, range);
  // A value a rounding error above a whole Mi (1000Mi computed as 1000.0000000001) is that Mi.
  const nearest = unit === "cores" ? Math.round(value / size) : Math.ceil(value / size - 1e-9);
  if (inside(nearest)) return `${nearest}${suffix}`;
  const edge = nearest * size > range.max ? Math.floor(range.max / size) : Math.ceil(range.min / size);
  if (inside(edge)) return `${edge}${suffix}`;
  // A value kept from before the bounds changed (a failed run) is brought inside them here too.
  const exact = Math.min(range.max, Math.max(range.min, value));
  return unit === "cores" ? `${Math.round(exact * 1e9)}n` : `${Math.round(exact)}`;
}

/** Whether every value given lies within the ranges: CPU's bound the request, memory's the request and limit. */
export function withinRanges(resources: ContainerResources, ranges: PolicyRanges): boolean {
  const inside = (value: number | undefined, range: Range) => value === undefined || inRange(value, range);
  return (
    inside(resources.cpuRequestCores, ranges.cpu) &&
    inside(resources.memoryRequestBytes, ranges.memory) &&
    inside(resources.memoryLimitBytes, ranges.memory)
  );
}

/** Within `range`, give or take the rounding of a quantity parsed from text. */
export function inRange(value: number, range: Range): boolean {
  return value >= range.min * (1 - 1e-12) && value <= range.max * (1 + 1e-12);
}

function boundsOf(
  settings: { readonly min?: string | number; readonly max?: string | number } | undefined,
): Range {
  // The CRD's schema refuses a malformed quantity; one that got through bounds nothing. A bare number (YAML's
  // `max: 4`) is a quantity too.
  const bound = (value: string | number | undefined) =>
    quantityOrUndefined(value === undefined ? undefined : String(value));
  return { min: bound(settings?.min) ?? 0, max: bound(settings?.max) ?? Number.POSITIVE_INFINITY };
}

function clampBounded(b: Bounded, range: Range): Bounded {
  const clamp = (v: number) => Math.min(range.max, Math.max(range.min, v));
  return { lower: clamp(b.lower), target: clamp(b.target), upper: clamp(b.upper) };
}
