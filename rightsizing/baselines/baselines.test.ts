import { describe, expect, it } from "vitest";
import { DAY_MS, HOUR_MS, historyOf, MIB, samplesOf, shapes } from "../test-support.ts";
import { krrDefaults, krrRecommend, quantile } from "./krr.ts";
import { vpaCpuScheme, vpaDefaults, vpaEmptyState, vpaFold, vpaMemoryScheme, vpaRecommend } from "./vpa.ts";

const GIB_BYTES = 1024 * MIB;

describe("VPA-style baseline", () => {
  // The recommender's flags and histogram options as published (vertical-pod-autoscaler, pkg/recommender).
  it.each([
    ["cpu-histogram-decay-half-life", vpaDefaults.cpuHalfLifeMs, 24 * HOUR_MS],
    ["memory-histogram-decay-half-life", vpaDefaults.memoryHalfLifeMs, 24 * HOUR_MS],
    ["memory-aggregation-interval", vpaDefaults.memoryAggregationIntervalMs, 24 * HOUR_MS],
    ["target-cpu-percentile", vpaDefaults.cpuTargetPercentile, 0.9],
    ["target-memory-percentile", vpaDefaults.memoryTargetPercentile, 0.9],
    ["recommendation-margin-fraction", vpaDefaults.safetyMarginFraction, 0.15],
    ["pod-recommendation-min-cpu-millicores", vpaDefaults.podMinCpuCores, 0.025],
    ["pod-recommendation-min-memory-mb", vpaDefaults.podMinMemoryBytes, 250 * MIB],
    ["oom-min-bump-up-bytes", vpaDefaults.oomMinBumpBytes, 100 * MIB],
    ["oom-bump-up-ratio", vpaDefaults.oomBumpRatio, 1.2],
    ["minSampleWeight", vpaDefaults.minSampleWeight, 0.1],
    ["CPU histogram first bucket (cores)", vpaCpuScheme.firstBucketSize, 0.01],
    ["CPU histogram max (cores)", vpaCpuScheme.maxValue, 1000],
    ["CPU histogram bucket growth", vpaCpuScheme.ratio, 1.05],
    ["memory histogram first bucket (bytes)", vpaMemoryScheme.firstBucketSize, 1e7],
    ["memory histogram max (bytes)", vpaMemoryScheme.maxValue, 1e12],
    ["memory histogram bucket growth", vpaMemoryScheme.ratio, 1.05],
  ])("keeps VPA's published default for %s", (_name, actual, published) => {
    expect(actual).toBe(published);
  });

  it.each([
    { name: "steady", shape: shapes.steady, cpu: [0.28, 0.32], memMiB: [690, 760] },
    { name: "tiny", shape: () => ({ cpu: 0.005, memMiB: 20 }), cpu: [0.025, 0.025], memMiB: [250, 250] },
  ])("recommends p90 plus 15%, at least 25m and 250 MiB ($name)", ({ shape, cpu, memMiB }) => {
    const { samples } = historyOf(samplesOf(4 * DAY_MS, shape));
    const rec = vpaRecommend(vpaFold(vpaEmptyState(), samples, [], { cpuCores: 1, memoryBytes: GIB_BYTES }));
    expect(rec.cpuCores).toBeGreaterThanOrEqual(cpu[0] ?? 0);
    expect(rec.cpuCores).toBeLessThanOrEqual(cpu[1] ?? 0);
    expect(rec.memoryBytes / MIB).toBeGreaterThanOrEqual(memMiB[0] ?? 0);
    expect(rec.memoryBytes / MIB).toBeLessThanOrEqual(memMiB[1] ?? 0);
  });

  it("bumps memory after an OOM to max(request + 100 MiB, request x 1.2)", () => {
    const { samples } = historyOf(samplesOf(DAY_MS, shapes.steady));
    const oom = { t: (samples[10]?.t ?? 0) + 1, memoryBytes: 600 * MIB };
    const rec = vpaRecommend(
      vpaFold(vpaEmptyState(), samples, [oom], { cpuCores: 1, memoryBytes: 1000 * MIB }),
    );
    expect(rec.memoryBytes).toBeGreaterThanOrEqual(1200 * MIB * 1.15);
  });
});

describe("KRR simple baseline", () => {
  // robusta-dev/krr, strategy "simple", as published.
  it.each([
    ["cpu_percentile", krrDefaults.cpuPercentile, 0.95],
    ["memory_buffer_percentage", krrDefaults.memoryBufferFraction, 0.15],
    ["history_duration", krrDefaults.historyMs, 14 * DAY_MS],
    ["points_required", krrDefaults.pointsRequired, 100],
  ])("keeps KRR's published default for %s", (_name, actual, published) => {
    expect(actual).toBe(published);
  });

  it.each([
    { values: [1, 2, 3, 4, 5], q: 0.5, expected: 3 },
    { values: [1, 2, 3, 4, 5], q: 0.95, expected: 4.8 },
    { values: [7], q: 0.95, expected: 7 },
  ])("interpolates quantiles like Prometheus ($q of $values)", ({ values, q, expected }) => {
    expect(quantile(values, q)).toBeCloseTo(expected, 10);
  });

  it("recommends CPU p95 and memory peak + 15% over 14 days, nothing with too few points", () => {
    const samples = samplesOf(2 * DAY_MS, shapes.steady);
    const now = (samples[samples.length - 1]?.t ?? 0) + 1;
    const rec = krrRecommend(samples, now);
    expect(rec?.memoryBytes).toBeGreaterThan(600 * MIB * 1.15);
    expect(krrRecommend(samples.slice(0, 50), now)).toBeNull();
  });
});
