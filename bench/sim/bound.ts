// The fewest cold starts any policy could expect within a budget of awake time, when it knows the rates
// the trace was drawn from. Every burst of requests (a session, a job) that starts while the workload is
// paused costs at least one cold start, and bursts start at known rates that the policy's own
// observations cannot predict better (they are drawn independently). So, whatever the policy does, the
// bursts it can expect to catch awake are at most the rates summed over the `budget` minutes where they
// are highest: a fractional knapsack. The bound is optimistic on purpose (it grants each day's rates in
// advance and ignores the awake time sessions themselves need), so a target it rules out is out of
// reach of every policy.

import type { ForecastConfig } from "../../forecast/index.ts";
import { generateTraceWithRates, reseeded, type StartRates, type TraceProfile } from "../traces/synthetic.ts";
import { type Policy, replayPolicy } from "./replay.ts";

export type ColdStartBound = {
  /** Expected bursts over the whole trace. */
  expectedStarts: number;
  /** Expected bursts that start while the workload is paused, at the very least. */
  minColdStarts: number;
};

/** Lower bound on expected cold starts with at most `awakeMinutes` of awake time. */
export function coldStartBound(rates: StartRates, awakeMinutes: number): ColdStartBound {
  const sorted = Float64Array.from(rates).sort().reverse();
  let expectedStarts = 0;
  for (const rate of sorted) expectedStarts += rate;
  const whole = Math.max(0, Math.min(sorted.length, Math.floor(awakeMinutes)));
  let caught = 0;
  for (let i = 0; i < whole; i++) caught += sorted[i] ?? 0;
  caught += (sorted[whole] ?? 0) * Math.max(0, awakeMinutes - whole);
  return { expectedStarts, minColdStarts: Math.max(0, expectedStarts - caught) };
}

export type BaselineComparison = {
  draws: number;
  /** Means over the draws. */
  baselineColdStarts: number;
  baselineAwakeHours: number;
  minColdStarts: number;
  /** Relative change of the bound against the baseline's cold starts: -0.3 is 30% fewer at best. */
  bestChange: number;
};

/**
 * The bound against a baseline policy (the fixed timeout) over `draws` draws of a synthetic profile:
 * its own seed first, then reseeded ones. Each draw's bound uses the baseline's awake time on that draw.
 */
export function boundAgainstBaseline(
  profile: TraceProfile,
  draws: number,
  baseline: Policy,
  config: ForecastConfig,
): BaselineComparison {
  let coldStarts = 0;
  let awakeHours = 0;
  let minColdStarts = 0;
  for (let draw = 0; draw < draws; draw++) {
    const { trace, startRates } = generateTraceWithRates(reseeded(profile, draw));
    const result = replayPolicy(trace, baseline, config);
    coldStarts += result.coldStarts;
    awakeHours += result.awakeHours;
    minColdStarts += coldStartBound(startRates, result.awakeHours * 60).minColdStarts;
  }
  const n = Math.max(1, draws);
  return {
    draws,
    baselineColdStarts: coldStarts / n,
    baselineAwakeHours: awakeHours / n,
    minColdStarts: minColdStarts / n,
    bestChange: coldStarts === 0 ? 0 : minColdStarts / coldStarts - 1,
  };
}
