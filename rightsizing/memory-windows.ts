// Memory is summarised as one peak per window (as VPA does), but a new high only counts for the
// request when it persisted (a level held for spikePersistenceMs) or recurred (reached in
// spikeRecurrenceCount of the last spikeRecurrenceWindows windows). One short spike therefore cannot set the request for days; the
// memory limit still covers every raw sample (see recommend.ts), so the spike is not an OOM risk.

import type { RecommenderConfig } from "./config.ts";
import { addSample } from "./histogram.ts";
import type { MemoryWindow, RecommenderState } from "./state.ts";
import { emptyWindow, memoryScheme } from "./state.ts";

/** How many consecutive present samples make a persistent level. */
export function persistenceSamples(config: RecommenderConfig, stepMs: number): number {
  return Math.max(1, Math.round(config.spikePersistenceMs / stepMs));
}

/** Folds one present memory sample into the current window (updates the working state). */
export function observeMemory(state: RecommenderState, bytes: number, persistence: number): void {
  state.recentMemory.push(bytes);
  // Trimmed to the persistence as it is now: a checkpoint kept under a finer step or a longer persistence
  // holds more, and one shift per sample would never bring it down to a level that counts.
  if (state.recentMemory.length > persistence)
    state.recentMemory.splice(0, state.recentMemory.length - persistence);
  state.window.rawPeak = Math.max(state.window.rawPeak, bytes);
  if (state.recentMemory.length === persistence) {
    state.window.levelPeak = Math.max(state.window.levelPeak, Math.min(...state.recentMemory));
  }
}

/** A gap or a restart breaks a level: it has to be held again from scratch. */
export function breakPersistence(state: RecommenderState): void {
  state.recentMemory = [];
}

/**
 * The window's peak as it counts for the request: the persisted level, an OOM bump, or the highest value
 * that at least spikeRecurrenceCount of the last spikeRecurrenceWindows windows reached (this one included).
 */
export function requestPeak(
  window: MemoryWindow,
  previous: readonly MemoryWindow[],
  config: RecommenderConfig,
): number {
  const earlier = lastWindows(previous, config.spikeRecurrenceWindows - 1).map((w) => w.rawPeak);
  const highestFirst = [window.rawPeak, ...earlier].sort((a, b) => b - a);
  const reachedOften = highestFirst[config.spikeRecurrenceCount - 1] ?? 0;
  const recurring = Math.min(window.rawPeak, reachedOften);
  return Math.max(window.levelPeak, recurring, window.oomPeak);
}

/** The last `count` windows (none for a count of 0: `slice(-0)` would be all of them). */
export function lastWindows<W>(windows: readonly W[], count: number): readonly W[] {
  return count > 0 ? windows.slice(-count) : [];
}

/** The closed windows the configuration reads, the newest last: a checkpoint kept under a larger count has more. */
export function windowsKept<W>(windows: readonly W[], config: RecommenderConfig): W[] {
  return [
    ...lastWindows(
      windows,
      Math.max(config.spikeRecurrenceWindows, config.limitPeakWindows, config.trendWindows),
    ),
  ];
}

/** Closes the current window once it spans memoryWindowMs of active time. */
export function closeWindowIfDue(state: RecommenderState, config: RecommenderConfig): void {
  const endAt = state.window.atActiveMs + config.memoryWindowMs;
  if (state.activeMs < endAt) return;
  const peak = requestPeak(state.window, state.recentWindows, config);
  // VPA stamps a window's peak with the window end; so do we, on the active clock.
  if (peak > 0) addSample(state.memoryPeaks, memoryScheme(config), peak, 1, endAt, config.memoryHalfLifeMs);
  state.recentWindows = windowsKept([...state.recentWindows, { ...state.window, atActiveMs: endAt }], config);
  state.window = emptyWindow(endAt);
}
