// KRR's "simple" strategy (robusta-dev/krr), used only as a benchmark baseline: CPU request at the
// 95th percentile of usage, memory request and limit at the peak plus 15%, over 14 days of history.

import type { UsageSample } from "../types.ts";

const DAY_MS = 86_400_000;
const MIB = 1024 * 1024;

export type KrrConfig = {
  readonly cpuPercentile: number;
  readonly memoryBufferFraction: number;
  readonly historyMs: number;
  /** Fewer samples than this and KRR gives no recommendation. */
  readonly pointsRequired: number;
  readonly minCpuCores: number;
  readonly minMemoryBytes: number;
};

export const krrDefaults: KrrConfig = {
  cpuPercentile: 0.95,
  memoryBufferFraction: 0.15,
  historyMs: 14 * DAY_MS,
  pointsRequired: 100,
  minCpuCores: 0.01,
  minMemoryBytes: 100 * MIB,
};

/** Prometheus quantile_over_time: linear interpolation between the closest ranks. */
export function quantile(values: readonly number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  if (sorted.length === 0) return 0;
  const rank = q * (sorted.length - 1);
  const low = Math.floor(rank);
  const lowValue = sorted[low] ?? 0;
  const highValue = sorted[Math.min(low + 1, sorted.length - 1)] ?? lowValue;
  return lowValue + (highValue - lowValue) * (rank - low);
}

/** Requests from the samples in [nowMs - historyMs, nowMs); null with too few points. */
export function krrRecommend(
  samples: readonly UsageSample[],
  nowMs: number,
  config: KrrConfig = krrDefaults,
): { cpuCores: number; memoryBytes: number } | null {
  const cpu: number[] = [];
  let memoryPeak = 0;
  for (const s of samples) {
    if (!s.present || s.t < nowMs - config.historyMs || s.t >= nowMs) continue;
    cpu.push(s.cpuCores);
    memoryPeak = Math.max(memoryPeak, s.memoryBytes);
  }
  if (cpu.length < config.pointsRequired) return null;
  return {
    cpuCores: Math.max(quantile(cpu, config.cpuPercentile), config.minCpuCores),
    memoryBytes: Math.max(memoryPeak * (1 + config.memoryBufferFraction), config.minMemoryBytes),
  };
}
