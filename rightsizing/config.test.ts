import { describe, expect, it } from "vitest";
import { defaultConfig, withDefaults } from "./config.ts";

const MIB = 1024 * 1024;
const DAY_MS = 86_400_000;

describe("configuration defaults", () => {
  it.each([
    ["bucketGrowthRatio", 1.05],
    ["cpuFirstBucketCores", 0.01],
    ["memoryFirstBucketBytes", 1e7],
    ["cpuHalfLifeMs", DAY_MS],
    ["memoryHalfLifeMs", DAY_MS],
    ["memoryWindowMs", DAY_MS],
    ["cpuTargetPercentile", 0.9],
    ["cpuLowerPercentile", 0.5],
    ["cpuUpperPercentile", 0.95],
    ["memoryTargetPercentile", 0.9],
    ["safetyMarginFraction", 0.15],
    ["oomMinBumpBytes", 100 * MIB],
    ["oomBumpRatio", 1.2],
    ["upperBoundHistoryFactor", 1],
  ] as const)("follows VPA's published default for %s", (key, value) => {
    expect(defaultConfig[key]).toBe(value);
  });

  it.each([
    ["minCpuCores", 0.01],
    ["minMemoryBytes", 12 * MIB],
    ["spikePersistenceMs", 15 * 60_000],
    ["spikeRecurrenceWindows", 7],
    ["spikeRecurrenceCount", 3],
    ["limitPeakWindows", 8],
    ["oomFloorRetentionMs", Number.POSITIVE_INFINITY],
    ["minHistoryMs", DAY_MS],
    ["fullConfidenceMs", 7 * DAY_MS],
    ["materialChangeFraction", 0.1],
  ] as const)("documents Napwake's own default for %s", (key, value) => {
    expect(defaultConfig[key]).toBe(value);
  });

  it("overrides only the fields given", () => {
    const config = withDefaults({ safetyMarginFraction: 0.3 });
    expect(config.safetyMarginFraction).toBe(0.3);
    expect({ ...config, safetyMarginFraction: 0.15 }).toEqual(defaultConfig);
  });
});
