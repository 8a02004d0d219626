// Slow memory growth (a leak, a growing cache) makes every percentile of the past lag behind. A linear
// fit over the persistent level of the last closed windows projects where memory will be when the
// next recommendation is applied. Only a good fit counts, so noise and weekly cycles do not.

import type { RecommenderConfig } from "./config.ts";
import type { MemoryWindow } from "./state.ts";

export type MemoryTrend = {
  /** Bytes per active millisecond. */
  readonly slope: number;
  /** Fitted level now plus slope x horizon. */
  readonly projectedBytes: number;
  /** Projected minus the latest level: what growth adds. */
  readonly growthBytes: number;
};

type Point = { readonly x: number; readonly y: number };

function linearFit(points: readonly Point[]): { slope: number; intercept: number; r2: number } {
  const n = points.length;
  const meanX = points.reduce((s, p) => s + p.x, 0) / n;
  const meanY = points.reduce((s, p) => s + p.y, 0) / n;
  const sxx = points.reduce((s, p) => s + (p.x - meanX) ** 2, 0);
  const sxy = points.reduce((s, p) => s + (p.x - meanX) * (p.y - meanY), 0);
  const syy = points.reduce((s, p) => s + (p.y - meanY) ** 2, 0);
  const slope = sxx > 0 ? sxy / sxx : 0;
  const r2 = sxx > 0 && syy > 0 ? (sxy * sxy) / (sxx * syy) : 0;
  return { slope, intercept: meanY - slope * meanX, r2 };
}

/** The growth trend of memory, or null when there is none worth believing. */
export function memoryTrend(
  windows: readonly MemoryWindow[],
  nowActiveMs: number,
  config: RecommenderConfig,
): MemoryTrend | null {
  const points = windows
    .slice(-config.trendWindows)
    .filter((w) => w.levelPeak > 0)
    .map((w) => ({ x: w.atActiveMs, y: w.levelPeak }));
  if (points.length < config.trendMinWindows) return null;
  const fit = linearFit(points);
  if (fit.slope <= 0 || fit.r2 < config.trendMinFit) return null;
  const projectedBytes = fit.intercept + fit.slope * (nowActiveMs + config.trendHorizonMs);
  const latest = points[points.length - 1]?.y ?? 0;
  return { slope: fit.slope, projectedBytes, growthBytes: Math.max(0, projectedBytes - latest) };
}
