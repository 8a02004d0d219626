// The true chance of any request per grid slot, for reference rows: what the engine's rule would do
// if its forecast were the true distribution (not the future itself). Never available to a policy.

import { DAY_SLOTS, SLOT_MS, slotOf } from "../../forecast/index.ts";
import { generateTrace, reseeded, type TraceProfile } from "../traces/synthetic.ts";
import type { Trace } from "../traces/trace.ts";
import type { ChanceOf } from "./replay.ts";

/** Share of slots with any request, per slot, over `runs` reseeded draws of the same synthetic profile. */
export function generatorChances(profile: TraceProfile, runs: number): ChanceOf {
  const firstSlot = slotOf(profile.startMs);
  const counts = new Float64Array(profile.days * DAY_SLOTS);
  for (let run = 0; run < runs; run++) {
    const draw = generateTrace(reseeded(profile, run + 1));
    for (const slot of activeSlots(draw)) {
      const index = slot - firstSlot;
      if (index >= 0 && index < counts.length) counts[index] = (counts[index] ?? 0) + 1;
    }
  }
  return (slot) => (counts[slot - firstSlot] ?? 0) / runs;
}

/** Share of days with any request in each time-of-day slot, over the whole trace (it peeks ahead). */
export function timeOfDayChances(trace: Trace): ChanceOf {
  const days = Math.max(1, Math.round((trace.endMs - trace.startMs) / (DAY_SLOTS * SLOT_MS)));
  const counts = new Float64Array(DAY_SLOTS);
  for (const slot of activeSlots(trace)) {
    const index = ((slot % DAY_SLOTS) + DAY_SLOTS) % DAY_SLOTS;
    counts[index] = (counts[index] ?? 0) + 1;
  }
  return (slot) => (counts[((slot % DAY_SLOTS) + DAY_SLOTS) % DAY_SLOTS] ?? 0) / days;
}

function activeSlots(trace: Trace): Set<number> {
  return new Set(trace.requestsMs.map(slotOf));
}
