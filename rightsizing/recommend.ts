// Turns a learned state into requests, a memory limit, their bounds, a confidence and the reasons.

import type { RecommenderConfig } from "./config.ts";
import { defaultConfig } from "./config.ts";
import type { DecayingHistogram } from "./histogram.ts";
import { addSample, cloneHistogram, interpolatedPercentile, isEmpty, percentile } from "./histogram.ts";
import { lastWindows, requestPeak } from "./memory-windows.ts";
import { activeOomFloor, oomBump } from "./oom.ts";
import type { MemoryWindow, RecommenderState } from "./state.ts";
import { cpuScheme, memoryScheme } from "./state.ts";
import { memoryTrend } from "./trend.ts";
import type { Bounded, ReasonCode, Recommendation } from "./types.ts";
import { Reason } from "./types.ts";

const DAY_MS = 86_400_000;

/**
 * The recommendation for one container from what it has learned. With status "insufficient-history" the
 * values are shown for information only (confidence 0) and must not be applied.
 */
export function recommend(
  state: RecommenderState,
  config: RecommenderConfig = defaultConfig,
): Recommendation {
  const sufficient = state.activeMs >= config.minHistoryMs && state.presentSamples > 0;
  const reasons = new Set<ReasonCode>();
  if (!sufficient) reasons.add(Reason.insufficientHistory);
  const widening = upperBoundWidening(state.activeMs, config);
  const cpuRequestCores = recommendCpu(state, config, widening, reasons);
  const memory = recommendMemory(state, config, widening, reasons);
  if (state.absentSamples > 0) reasons.add(Reason.pausedTimeExcluded);
  if (state.restarts > 0) reasons.add(Reason.restartsObserved);
  return {
    status: sufficient ? "ok" : "insufficient-history",
    confidence: sufficient ? Math.min(1, state.activeMs / config.fullConfidenceMs) : 0,
    historyMs: state.activeMs,
    cpuRequestCores,
    memoryRequestBytes: memory.request,
    memoryLimitBytes: memory.limit,
    reasons: [...reasons],
  };
}

// VPA's confidence multiplier: upper bounds widen by (1 + factor / days of history); an hour is the floor
// so a brand new container gets a very wide, but finite, upper bound.
function upperBoundWidening(activeMs: number, config: RecommenderConfig): number {
  return 1 + config.upperBoundHistoryFactor / Math.max(activeMs / DAY_MS, 1 / 24);
}

function ordered(b: Bounded): Bounded {
  return { lower: Math.min(b.lower, b.target), target: b.target, upper: Math.max(b.upper, b.target) };
}

function recommendCpu(
  state: RecommenderState,
  config: RecommenderConfig,
  widening: number,
  reasons: Set<ReasonCode>,
): Bounded {
  const scheme = cpuScheme(config);
  const margin = 1 + config.safetyMarginFraction;
  // CPU is compressible and has many samples: the percentile is estimated inside its bucket rather than
  // rounded up to the bucket end, which would stack up to 5% more on top of the margin.
  const usage = (p: number) => interpolatedPercentile(state.cpu, scheme, p) * margin;
  if (!isEmpty(state.cpu)) reasons.add(Reason.cpuPercentile);
  const target = usage(config.cpuTargetPercentile);
  if (target < config.minCpuCores) reasons.add(Reason.cpuMinimum);
  const min = config.minCpuCores;
  return ordered({
    lower: Math.max(usage(config.cpuLowerPercentile), min),
    target: Math.max(target, min),
    upper: Math.max(usage(config.cpuUpperPercentile) * widening, min),
  });
}

/** Closed windows' peaks plus the window in progress, stamped with its end like the others. */
function peaksSoFar(state: RecommenderState, config: RecommenderConfig): DecayingHistogram {
  const peaks = cloneHistogram(state.memoryPeaks);
  const current = requestPeak(state.window, state.recentWindows, config);
  const endAt = state.window.atActiveMs + config.memoryWindowMs;
  if (current > 0) addSample(peaks, memoryScheme(config), current, 1, endAt, config.memoryHalfLifeMs);
  return peaks;
}

function recommendMemory(
  state: RecommenderState,
  config: RecommenderConfig,
  widening: number,
  reasons: Set<ReasonCode>,
): { request: Bounded; limit: Bounded } {
  const peaks = peaksSoFar(state, config);
  const scheme = memoryScheme(config);
  const margin = 1 + config.safetyMarginFraction;
  const peak = (p: number) => percentile(peaks, scheme, p);
  const trend = memoryTrend(state.recentWindows, state.activeMs, config);
  const trendLevel = trend?.projectedBytes ?? 0;
  const floor = activeOomFloor(state, config);
  const usageTarget = Math.max(peak(config.memoryTargetPercentile), trendLevel) * margin;

  if (!isEmpty(peaks)) reasons.add(Reason.memoryWindowPeaks);
  if (trendLevel > peak(config.memoryTargetPercentile)) reasons.add(Reason.memoryGrowthTrend);
  if (floor > usageTarget) reasons.add(Reason.memoryOomFloor);
  if (Math.max(usageTarget, floor) < config.minMemoryBytes) reasons.add(Reason.memoryMinimum);

  const atLeast = Math.max(floor, config.minMemoryBytes);
  const request = ordered({
    lower: Math.max(peak(config.memoryLowerPercentile) * margin, atLeast),
    target: Math.max(usageTarget, atLeast),
    upper: Math.max(Math.max(peak(config.memoryUpperPercentile), trendLevel) * margin * widening, atLeast),
  });
  const limit = recommendLimit(state, config, request, trend?.growthBytes ?? 0, widening, reasons);
  return { request, limit };
}

function limitWindows(state: RecommenderState, config: RecommenderConfig): MemoryWindow[] {
  return [...lastWindows(state.recentWindows, config.limitPeakWindows - 1), state.window];
}

// The limit is what prevents OOM kills, so it covers every raw sample of the last limitPeakWindows
// windows (Autopilot's moving-window max) even when a short spike was kept out of the request. An OOM
// bump is a need like a raw peak (the reading was capped at the old limit, the real demand is unknown),
// so the limit margin goes on top of it too: without it a demand a little above the bump is killed
// again, and each kill ratchets the retained OOM floor, and with it the request, up for good.
function recommendLimit(
  state: RecommenderState,
  config: RecommenderConfig,
  request: Bounded,
  growthBytes: number,
  widening: number,
  reasons: Set<ReasonCode>,
): Bounded {
  const requestTarget = request.target;
  const windows = limitWindows(state, config);
  const rawMax = Math.max(0, ...windows.map((w) => w.rawPeak));
  const floor = activeOomFloor(state, config);
  const oomNeed = Math.max(0, ...windows.map((w) => w.oomPeak), floor > 0 ? oomBump(floor, config) : 0);
  const fromRequest = requestTarget * config.limitToRequestRatio;
  const withMargin = 1 + config.limitMarginFraction;
  const fromPeak = (rawMax + growthBytes) * withMargin;

  if (windows.some((w) => w.oomPeak > 0)) reasons.add(Reason.memoryOomBump);
  if (fromPeak > fromRequest) reasons.add(Reason.limitCoversRawPeak);
  if (spikeWasDiscounted(state, config, requestTarget)) reasons.add(Reason.memoryShortSpikeDiscounted);

  const target = Math.max(fromRequest, fromPeak, oomNeed * withMargin);
  // Each bound pairs with the request's: a limit below its request is a pod spec the API server refuses.
  const lower = Math.max(requestTarget, rawMax, floor);
  return ordered({ lower, target, upper: Math.max(target * widening, request.upper) });
}

/** Some recent window reached a raw peak above the request that neither persisted nor recurred. */
function spikeWasDiscounted(
  state: RecommenderState,
  config: RecommenderConfig,
  requestTarget: number,
): boolean {
  const windows = [...state.recentWindows, state.window];
  return windows.some(
    (w, i) => w.rawPeak > requestTarget && w.rawPeak > requestPeak(w, windows.slice(0, i), config),
  );
}
