// How surprising the current silence is: while no activity comes, each slot where the forecast expected
// some adds -ln(1 - its chance) to the evidence, so exp(-evidence) is the chance of the whole silence
// under the forecasts made at the time. Activity ends the silence; so do enough slots in a row where none
// was expected, watched or not (a quiet night starts the next day afresh; a short lull does not). A gap
// where activity was expected (nobody watched: the operator restarting) neither ends the silence nor adds
// to it, so a restart does not end a suspension.

import type { ForecastConfig } from "./config.ts";
import { activityProbability, isActivityExpected } from "./probability.ts";

export type Silence = {
  /** Slots in the silence where activity was expected. */
  slots: number;
  /** Sum of -ln(1 - chance) over those slots. */
  evidence: number;
  /** Slots in a row, at the end of the silence, where no activity was expected. */
  quietRun: number;
};

export const NO_SILENCE: Silence = { slots: 0, evidence: 0, quietRun: 0 };

/** No single slot counts as surer than this, so one silent slot alone never makes a strong case. */
export const MAX_SLOT_CHANCE = 0.9;

/** The silence after a slot observed at `value` (NaN: a gap) that the model forecast at `expected`. */
export function nextSilence(
  silence: Silence,
  value: number,
  expected: number,
  burstSize: number,
  config: ForecastConfig,
): Silence {
  if (value > 0) return NO_SILENCE;
  if (!isActivityExpected(expected, burstSize, config)) {
    const quietRun = silence.quietRun + 1;
    return quietRun >= config.missedResetQuietSlots ? NO_SILENCE : { ...silence, quietRun };
  }
  // Nobody watched a slot where activity was expected: the silence neither grows nor counts it as quiet.
  if (Number.isNaN(value)) return { ...silence, quietRun: 0 };
  const chance = Math.min(MAX_SLOT_CHANCE, activityProbability(expected, burstSize));
  return { slots: silence.slots + 1, evidence: silence.evidence - Math.log1p(-chance), quietRun: 0 };
}

/** Chance of the silence under the forecasts (1 when there is none). */
export function silenceLikelihood(silence: Silence): number {
  return Math.exp(-silence.evidence);
}
