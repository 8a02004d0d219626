// A faithful re-implementation of VPA's recommender estimation (autoscaler/vertical-pod-autoscaler,
// recommender with default flags), used only as a benchmark baseline. Differences from Napwake's
// recommender are deliberate: wall-clock decay, CPU samples weighted by the request, raw per-window
// memory peaks, no spike filtering, no trend, no confidence gating, pod minimums of 25m / 250 MiB.

import type { DecayingHistogram } from "../histogram.ts";
import { addSample, cloneHistogram, emptyHistogram, percentile } from "../histogram.ts";
import { oomBump } from "../oom.ts";
import type { OomEvent, UsageSample } from "../types.ts";

const HOUR_MS = 3_600_000;
const MIB = 1024 * 1024;

export type VpaConfig = {
  readonly cpuHalfLifeMs: number;
  readonly memoryHalfLifeMs: number;
  readonly memoryAggregationIntervalMs: number;
  readonly cpuTargetPercentile: number;
  readonly memoryTargetPercentile: number;
  readonly safetyMarginFraction: number;
  readonly podMinCpuCores: number;
  readonly podMinMemoryBytes: number;
  readonly oomMinBumpBytes: number;
  readonly oomBumpRatio: number;
  /** CPU samples weigh max(request in cores, this). */
  readonly minSampleWeight: number;
};

/** VPA's published defaults (single-container pods, so the pod minimums apply to the container). */
export const vpaDefaults: VpaConfig = {
  cpuHalfLifeMs: 24 * HOUR_MS,
  memoryHalfLifeMs: 24 * HOUR_MS,
  memoryAggregationIntervalMs: 24 * HOUR_MS,
  cpuTargetPercentile: 0.9,
  memoryTargetPercentile: 0.9,
  safetyMarginFraction: 0.15,
  podMinCpuCores: 0.025,
  podMinMemoryBytes: 250 * MIB,
  oomMinBumpBytes: 100 * MIB,
  oomBumpRatio: 1.2,
  minSampleWeight: 0.1,
};

export const vpaCpuScheme = { firstBucketSize: 0.01, ratio: 1.05, maxValue: 1000 };
export const vpaMemoryScheme = { firstBucketSize: 1e7, ratio: 1.05, maxValue: 1e12 };

export type VpaState = {
  cpu: DecayingHistogram;
  /** Peaks of closed windows; the open window's peak is kept aside, as VPA subtracts and re-adds it. */
  memoryPeaks: DecayingHistogram;
  windowEnd: number | null;
  memoryPeak: number;
  oomPeak: number;
};

export function vpaEmptyState(): VpaState {
  return {
    cpu: emptyHistogram(vpaCpuScheme),
    memoryPeaks: emptyHistogram(vpaMemoryScheme),
    windowEnd: null,
    memoryPeak: 0,
    oomPeak: 0,
  };
}

export type VpaRequests = { readonly cpuCores: number; readonly memoryBytes: number };

type Item = { t: number; sample?: UsageSample; oom?: OomEvent };

/** Folds samples and OOMs observed while `requests` were in force. Returns a new state. */
export function vpaFold(
  state: VpaState,
  samples: readonly UsageSample[],
  ooms: readonly OomEvent[],
  requests: VpaRequests,
  config: VpaConfig = vpaDefaults,
): VpaState {
  const next: VpaState = {
    ...state,
    cpu: cloneHistogram(state.cpu),
    memoryPeaks: cloneHistogram(state.memoryPeaks),
  };
  const items: Item[] = [
    ...samples.map((sample) => ({ t: sample.t, sample })),
    ...ooms.map((oom) => ({ t: oom.t, oom })),
  ];
  items.sort((a, b) => a.t - b.t || (a.sample ? -1 : 1));
  for (const item of items) {
    if (item.sample?.present) {
      const weight = Math.max(requests.cpuCores, config.minSampleWeight);
      addSample(next.cpu, vpaCpuScheme, item.sample.cpuCores, weight, item.t, config.cpuHalfLifeMs);
      addMemory(next, item.sample.memoryBytes, item.t, false, config);
    } else if (item.oom) {
      // VPA: memory used is the larger of the request and the window's usage peak, then bumped.
      const used = Math.max(requests.memoryBytes, next.memoryPeak);
      addMemory(next, oomBump(used, config), item.t, true, config);
    }
  }
  return next;
}

function addMemory(state: VpaState, bytes: number, t: number, isOom: boolean, config: VpaConfig): void {
  const interval = config.memoryAggregationIntervalMs;
  state.windowEnd ??= t;
  if (t >= state.windowEnd) {
    closeWindow(state, config);
    state.windowEnd += Math.floor((t - state.windowEnd) / interval) * interval + interval;
  }
  if (isOom) state.oomPeak = Math.max(state.oomPeak, bytes);
  else state.memoryPeak = Math.max(state.memoryPeak, bytes);
}

function closeWindow(state: VpaState, config: VpaConfig): void {
  const peak = Math.max(state.memoryPeak, state.oomPeak);
  if (peak > 0 && state.windowEnd !== null) {
    addSample(state.memoryPeaks, vpaMemoryScheme, peak, 1, state.windowEnd, config.memoryHalfLifeMs);
  }
  state.memoryPeak = 0;
  state.oomPeak = 0;
}

/** VPA's target recommendation: p90 of each histogram plus the 15% margin, at least the pod minimums. */
export function vpaRecommend(state: VpaState, config: VpaConfig = vpaDefaults): VpaRequests {
  const peaks = cloneHistogram(state.memoryPeaks);
  const open = Math.max(state.memoryPeak, state.oomPeak);
  if (open > 0 && state.windowEnd !== null) {
    addSample(peaks, vpaMemoryScheme, open, 1, state.windowEnd, config.memoryHalfLifeMs);
  }
  const margin = 1 + config.safetyMarginFraction;
  return {
    cpuCores: Math.max(
      percentile(state.cpu, vpaCpuScheme, config.cpuTargetPercentile) * margin,
      config.podMinCpuCores,
    ),
    memoryBytes: Math.max(
      percentile(peaks, vpaMemoryScheme, config.memoryTargetPercentile) * margin,
      config.podMinMemoryBytes,
    ),
  };
}
