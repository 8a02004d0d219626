// What the recommender has learned about one container. Everything is measured on an *active clock*
// that only advances while the workload has pods, so paused time neither looks like low usage nor
// ages the history out.

import type { RecommenderConfig } from "./config.ts";
import type { BucketScheme, DecayingHistogram } from "./histogram.ts";
import { cloneHistogram, emptyHistogram } from "./histogram.ts";

/** One memory aggregation window, closed or in progress. Times are on the active clock. */
export type MemoryWindow = {
  /** Active time at which the window started (in progress) or ended (closed). */
  atActiveMs: number;
  /** Highest single sample. */
  rawPeak: number;
  /** Highest level held for spikePersistenceMs. */
  levelPeak: number;
  /** Highest OOM bump (max(used + min bump, used x ratio)) seen in the window. */
  oomPeak: number;
};

export type OomMemory = {
  count: number;
  lastAt: number | null;
  lastActiveMs: number;
  /** Largest usage that was killed: memory never goes below it while retained. */
  floorBytes: number;
};

export type RecommenderState = {
  /** Present time folded in so far. */
  activeMs: number;
  firstSampleAt: number | null;
  /** Time of the last sample folded in: only newer samples are folded next time. */
  lastSampleAt: number | null;
  /** Latest time of anything folded (samples and events). */
  foldedUntil: number | null;
  presentSamples: number;
  absentSamples: number;
  restarts: number;
  cpu: DecayingHistogram;
  /** One peak per closed memory window, as counted for the request. */
  memoryPeaks: DecayingHistogram;
  window: MemoryWindow;
  /** Most recent closed windows, oldest first (bounded by the config's window counts). */
  recentWindows: MemoryWindow[];
  /** Last present memory samples, for the persistence (rolling minimum) test. */
  recentMemory: number[];
  oom: OomMemory;
};

export function cpuScheme(config: RecommenderConfig): BucketScheme {
  return {
    firstBucketSize: config.cpuFirstBucketCores,
    ratio: config.bucketGrowthRatio,
    maxValue: config.cpuMaxCores,
  };
}

export function memoryScheme(config: RecommenderConfig): BucketScheme {
  return {
    firstBucketSize: config.memoryFirstBucketBytes,
    ratio: config.bucketGrowthRatio,
    maxValue: config.memoryMaxBytes,
  };
}

export function emptyWindow(atActiveMs: number): MemoryWindow {
  return { atActiveMs, rawPeak: 0, levelPeak: 0, oomPeak: 0 };
}

/** The state of a container nothing is known about yet. */
export function emptyState(config: RecommenderConfig): RecommenderState {
  return {
    activeMs: 0,
    firstSampleAt: null,
    lastSampleAt: null,
    foldedUntil: null,
    presentSamples: 0,
    absentSamples: 0,
    restarts: 0,
    cpu: emptyHistogram(cpuScheme(config)),
    memoryPeaks: emptyHistogram(memoryScheme(config)),
    window: emptyWindow(0),
    recentWindows: [],
    recentMemory: [],
    oom: { count: 0, lastAt: null, lastActiveMs: 0, floorBytes: 0 },
  };
}

/** A deep copy the fold can update in place without touching its input. */
export function copyState(state: RecommenderState): RecommenderState {
  return {
    ...state,
    cpu: cloneHistogram(state.cpu),
    memoryPeaks: cloneHistogram(state.memoryPeaks),
    window: { ...state.window },
    recentWindows: state.recentWindows.map((w) => ({ ...w })),
    recentMemory: [...state.recentMemory],
    oom: { ...state.oom },
  };
}
