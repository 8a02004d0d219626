// Where in a trace the cold starts fall, week by week: the forecast policy learns in its first week and
// needs days to follow a changed schedule, so the weeks outside those show what it does once it has learned.

import { relativeChange } from "../format.ts";

export type WeeklyComparison = {
  /** Weeks left out of `steady`: the learning week, and the week of a change of pattern if any. */
  excludedWeeks: number[];
  /** Cold starts in the other weeks, per policy, and the change of the second against the first. */
  steady: { baseline: number; policy: number; change: number };
};

/** Week indices (from the trace's start) of the learning week and of the week a change of pattern begins in. */
export function unsettledWeeks(changeAtDay: number | null): number[] {
  const weeks = [0];
  if (changeAtDay !== null && changeAtDay > 0) weeks.push(Math.floor(changeAtDay / 7));
  return [...new Set(weeks)];
}

export function compareWeeks(
  baselineByWeek: readonly number[],
  policyByWeek: readonly number[],
  excludedWeeks: readonly number[],
): WeeklyComparison {
  const weeks = Math.max(baselineByWeek.length, policyByWeek.length);
  let baseline = 0;
  let policy = 0;
  for (let week = 0; week < weeks; week++) {
    if (excludedWeeks.includes(week)) continue;
    baseline += baselineByWeek[week] ?? 0;
    policy += policyByWeek[week] ?? 0;
  }
  return {
    excludedWeeks: [...excludedWeeks],
    steady: { baseline, policy, change: relativeChange(policy, baseline) },
  };
}
