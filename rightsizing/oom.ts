import type { RecommenderConfig } from "./config.ts";
import type { RecommenderState } from "./state.ts";

/** Memory needed after a kill at `usedBytes`: max(used + min bump, used x ratio), as VPA does. */
export function oomBump(
  usedBytes: number,
  config: Pick<RecommenderConfig, "oomMinBumpBytes" | "oomBumpRatio">,
): number {
  return Math.max(usedBytes + config.oomMinBumpBytes, usedBytes * config.oomBumpRatio);
}

/** The killed usage still in force as a memory floor (0 once oomFloorRetentionMs of active time passed). */
export function activeOomFloor(state: RecommenderState, config: RecommenderConfig): number {
  if (state.oom.count === 0) return 0;
  const age = state.activeMs - state.oom.lastActiveMs;
  return age <= config.oomFloorRetentionMs ? state.oom.floorBytes : 0;
}
