// The same policies replayed over several draws of a synthetic profile, so a verdict does not rest on
// one lucky or unlucky trace.

import type { ForecastConfig } from "../../forecast/index.ts";
import { relativeChange } from "../format.ts";
import { generateTrace, reseeded, type TraceProfile } from "../traces/synthetic.ts";
import { type Policy, type PolicyResult, replayPolicy } from "./replay.ts";

/** The replay's target: at least 50% fewer cold starts than the baseline, at no more awake hours. */
export function meetsTarget(result: PolicyResult, baseline: PolicyResult): boolean {
  return (
    relativeChange(result.coldStarts, baseline.coldStarts) <= -0.5 && result.awakeHours <= baseline.awakeHours
  );
}

export type DrawsSummary = {
  policy: string;
  draws: number;
  /** Relative change of the totals over all draws against the baseline's: -0.5 is half. */
  coldStartChange: number;
  /** The same for wakes a request started. */
  coldWakeChange: number;
  awakeChange: number;
  /** Per draw, the smallest and largest relative change of cold starts. */
  coldStartRange: [number, number];
  /** Draws where the policy had at least 50% fewer cold starts at no more awake hours. */
  drawsMeetingTarget: number;
};

/** `policies` against `baseline` over `draws` draws of `profile` (its own seed first). */
export function replayDraws(
  profile: TraceProfile,
  draws: number,
  baseline: Policy,
  policies: readonly Policy[],
  config: ForecastConfig,
): DrawsSummary[] {
  const runs = Array.from({ length: draws }, (_, draw) => {
    const trace = generateTrace(reseeded(profile, draw));
    return {
      baseline: replayPolicy(trace, baseline, config),
      results: policies.map((policy) => replayPolicy(trace, policy, config)),
    };
  });
  const sum = (values: number[]) => values.reduce((a, b) => a + b, 0);
  const baseCold = sum(runs.map((r) => r.baseline.coldStarts));
  const baseAwake = sum(runs.map((r) => r.baseline.awakeHours));
  return policies.map((policy, i) => {
    const results = runs.map((r) => r.results[i] ?? r.baseline);
    const perDraw = runs.map((r, d) => relativeChange(results[d]?.coldStarts ?? 0, r.baseline.coldStarts));
    const meeting = runs.filter((r, d) => meetsTarget(results[d] ?? r.baseline, r.baseline)).length;
    return {
      policy: policy.name,
      draws,
      coldStartChange: relativeChange(sum(results.map((r) => r.coldStarts)), baseCold),
      coldWakeChange: relativeChange(
        sum(results.map((r) => r.coldWakes)),
        sum(runs.map((r) => r.baseline.coldWakes)),
      ),
      awakeChange: relativeChange(sum(results.map((r) => r.awakeHours)), baseAwake),
      coldStartRange: [Math.min(...perDraw), Math.max(...perDraw)],
      drawsMeetingTarget: meeting,
    };
  });
}
