import { quantityOrUndefined } from "../../kube/quantity.ts";
import type { ModeResolution } from "../../rightsizing/modes.ts";
import type { Bounded, Recommendation } from "../../rightsizing/types.ts";

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
): Recommendation & { readonly policyBound: readonly string[] } {
  const cpu = boundsOf(modes.cpu.settings);
  const memory = boundsOf(modes.memory.settings);
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
  return { ...rec, cpuRequestCores, memoryRequestBytes, memoryLimitBytes, policyBound };
}

type Range = { min: number; max: number };

function boundsOf(settings: { readonly min?: string; readonly max?: string } | undefined): Range {
  // The CRD's schema refuses a malformed quantity; one that got through bounds nothing.
  return {
    min: quantityOrUndefined(settings?.min) ?? 0,
    max: quantityOrUndefined(settings?.max) ?? Number.POSITIVE_INFINITY,
  };
}

function clampBounded(b: Bounded, range: Range): Bounded {
  const clamp = (v: number) => Math.min(range.max, Math.max(range.min, v));
  return { lower: clamp(b.lower), target: clamp(b.target), upper: clamp(b.upper) };
}
