// Every tunable of the recommender in one place. Defaults follow VPA's published recommender flags
// where VPA has an equivalent (noted per field); the rest are Napwake's own and explained here.
// Two deliberate differences in how VPA's values are used: CPU percentiles are interpolated inside their
// histogram bucket (VPA rounds up to the bucket end, up to 5% stacked on the safety margin; memory keeps
// VPA's rounding up), and the memory limit, which VPA does not compute, puts limitMarginFraction on top of
// an OOM bump as on any other need (see limitMarginFraction).

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;
const MIB = 1024 * 1024;

export type RecommenderConfig = {
  /** Width of the first CPU histogram bucket, in cores. VPA: 0.01 (10m). */
  readonly cpuFirstBucketCores: number;
  /** Largest CPU value the histogram resolves, in cores. VPA: 1000. */
  readonly cpuMaxCores: number;
  /** Width of the first memory histogram bucket, in bytes. VPA: 1e7 (10 MB). */
  readonly memoryFirstBucketBytes: number;
  /** Largest memory value the histogram resolves, in bytes. VPA: 1e12 (1 TB). */
  readonly memoryMaxBytes: number;
  /** Each histogram bucket is this much wider than the previous one. VPA: 1.05 (5% growth). */
  readonly bucketGrowthRatio: number;

  /** A CPU sample loses half its weight after this much *active* time. VPA: 24 h (wall-clock). */
  readonly cpuHalfLifeMs: number;
  /** A memory window peak loses half its weight after this much *active* time. VPA: 24 h (wall-clock). */
  readonly memoryHalfLifeMs: number;

  /**
   * CPU request target percentile of the decayed usage histogram, interpolated inside its bucket. VPA: 0.9
   * (at the bucket end).
   */
  readonly cpuTargetPercentile: number;
  /** CPU lower-bound percentile (interpolated, as the target). VPA: 0.5. */
  readonly cpuLowerPercentile: number;
  /** CPU upper-bound percentile (interpolated, as the target). VPA: 0.95. */
  readonly cpuUpperPercentile: number;
  /** Memory request target percentile of the decayed window-peak histogram, at the bucket end. VPA: 0.9. */
  readonly memoryTargetPercentile: number;
  /** Memory lower-bound percentile of window peaks. VPA: 0.5. */
  readonly memoryLowerPercentile: number;
  /** Memory upper-bound percentile of window peaks. VPA: 0.95. */
  readonly memoryUpperPercentile: number;
  /** Fraction added on top of every usage-derived value. VPA: 0.15. */
  readonly safetyMarginFraction: number;

  /** Memory is summarised as one peak per window of this much active time. VPA: 24 h. */
  readonly memoryWindowMs: number;
  /**
   * A memory level must hold for this long (consecutive present samples) to count as a window's peak
   * for the request. Shorter excursions count only if they recur (see spikeRecurrenceWindows).
   * Napwake-specific; VPA counts any single sample.
   */
  readonly spikePersistenceMs: number;
  /** Windows (the current one included) searched for recurrences of a short spike. */
  readonly spikeRecurrenceWindows: number;
  /**
   * A short spike counts for the request once at least this many of the last spikeRecurrenceWindows windows
   * reached it: 3 of 7 means a pattern of every other day counts, one or two odd spikes a week do not (the
   * limit still covers them).
   */
  readonly spikeRecurrenceCount: number;
  /** The memory limit covers the highest raw sample of this many windows (the current one included). VPA keeps 8. */
  readonly limitPeakWindows: number;
  /**
   * Fraction added to the highest memory need for the limit: the highest raw sample (plus projected
   * growth) or the OOM bump, whichever is larger. A kill caps the reading at the old limit, so the bump is
   * only the least the container needs; without the margin a demand a little above it is killed again.
   */
  readonly limitMarginFraction: number;
  /** The memory limit is never below the memory request times this ratio. */
  readonly limitToRequestRatio: number;

  /** Completed windows used to fit the memory growth trend. */
  readonly trendWindows: number;
  /** Fewer completed windows than this and no trend is fitted. */
  readonly trendMinWindows: number;
  /** Minimum R² of the linear fit before the trend is believed (keeps noise and weekly cycles out). */
  readonly trendMinFit: number;
  /** How far ahead a growth trend is projected: the time until the next recommendation is applied. */
  readonly trendHorizonMs: number;

  /**
   * After an OOM kill, memory grows by at least this many bytes. VPA: 100 MiB (oom-min-bump-up-bytes). The
   * request gets the bump plus safetyMarginFraction while the kill's window counts, as in VPA; the limit
   * gets the bump plus limitMarginFraction while the kill is among the last limitPeakWindows windows or
   * its floor is retained.
   */
  readonly oomMinBumpBytes: number;
  /** After an OOM kill, memory grows by at least this ratio. VPA: 1.2 (oom-bump-up-ratio). */
  readonly oomBumpRatio: number;
  /** How long (active time) the usage killed by an OOM stays a hard floor. Infinity: never forgotten. */
  readonly oomFloorRetentionMs: number;

  /** Smallest CPU request recommended, in cores. VPA: 25m per pod split among its containers. */
  readonly minCpuCores: number;
  /** Smallest memory request recommended, in bytes. VPA: 250 MiB per pod split among its containers. */
  readonly minMemoryBytes: number;

  /** Below this much active history the result is "insufficient-history" with confidence 0. */
  readonly minHistoryMs: number;
  /** Confidence reaches 1 at this much active history. */
  readonly fullConfidenceMs: number;
  /** Upper bounds are multiplied by (1 + this / history in days), VPA's confidence multiplier (1, +1). */
  readonly upperBoundHistoryFactor: number;

  /** A change is material when any value moves by at least this fraction. */
  readonly materialChangeFraction: number;
  /** ...and by at least this many cores (tiny containers flap by a few millicores). */
  readonly materialMinCpuCores: number;
  /** ...and by at least this many bytes. */
  readonly materialMinMemoryBytes: number;
};

export const defaultConfig: RecommenderConfig = {
  cpuFirstBucketCores: 0.01,
  cpuMaxCores: 1000,
  memoryFirstBucketBytes: 1e7,
  memoryMaxBytes: 1e12,
  bucketGrowthRatio: 1.05,
  cpuHalfLifeMs: DAY_MS,
  memoryHalfLifeMs: DAY_MS,
  cpuTargetPercentile: 0.9,
  cpuLowerPercentile: 0.5,
  cpuUpperPercentile: 0.95,
  memoryTargetPercentile: 0.9,
  memoryLowerPercentile: 0.5,
  memoryUpperPercentile: 0.95,
  safetyMarginFraction: 0.15,
  memoryWindowMs: DAY_MS,
  spikePersistenceMs: 15 * MINUTE_MS,
  spikeRecurrenceWindows: 7,
  spikeRecurrenceCount: 3,
  limitPeakWindows: 8,
  limitMarginFraction: 0.15,
  limitToRequestRatio: 1,
  trendWindows: 7,
  trendMinWindows: 3,
  trendMinFit: 0.8,
  trendHorizonMs: DAY_MS,
  oomMinBumpBytes: 100 * MIB,
  oomBumpRatio: 1.2,
  oomFloorRetentionMs: Number.POSITIVE_INFINITY,
  minCpuCores: 0.01,
  minMemoryBytes: 12 * MIB,
  minHistoryMs: DAY_MS,
  fullConfidenceMs: 7 * DAY_MS,
  upperBoundHistoryFactor: 1,
  materialChangeFraction: 0.1,
  materialMinCpuCores: 0.005,
  materialMinMemoryBytes: 8 * MIB,
};

/** The defaults with some fields overridden. */
export function withDefaults(overrides: Partial<RecommenderConfig> = {}): RecommenderConfig {
  return { ...defaultConfig, ...overrides };
}
