// Plain data in and out of the recommender. Times are epoch milliseconds, CPU is in cores, memory in bytes.

/** One step of usage. `present: false` means the workload had no pods (paused, scaled to zero, not yet created). */
export type UsageSample =
  | { readonly t: number; readonly present: true; readonly cpuCores: number; readonly memoryBytes: number }
  | { readonly t: number; readonly present: false };

/** A container was OOM-killed. `memoryBytes` is the working set at the kill, `limitBytes` the limit it hit. */
export type OomEvent = { readonly t: number; readonly memoryBytes: number; readonly limitBytes?: number };

/** A container restarted for any reason (OOM kills are also reported as OomEvent). */
export type RestartEvent = { readonly t: number };

/** New history for one container, samples at a fixed step and in time order; gaps count as absent. */
export type ContainerHistory = {
  readonly stepMs: number;
  readonly samples: readonly UsageSample[];
  readonly ooms?: readonly OomEvent[];
  readonly restarts?: readonly RestartEvent[];
};

/** Requests and limits as a container has them, or as recommended. Undefined: not set. */
export type ContainerResources = {
  readonly cpuRequestCores?: number;
  readonly memoryRequestBytes?: number;
  readonly memoryLimitBytes?: number;
};

export type Bounded = { readonly lower: number; readonly target: number; readonly upper: number };

export const Reason = {
  insufficientHistory: "insufficient-history",
  cpuPercentile: "cpu-percentile-of-decayed-usage",
  cpuMinimum: "cpu-minimum",
  memoryWindowPeaks: "memory-percentile-of-window-peaks",
  memoryShortSpikeDiscounted: "memory-short-spike-discounted",
  memoryGrowthTrend: "memory-growth-trend",
  memoryOomBump: "memory-oom-bump",
  memoryOomFloor: "memory-oom-floor",
  memoryMinimum: "memory-minimum",
  limitCoversRawPeak: "limit-covers-raw-peak",
  pausedTimeExcluded: "paused-time-excluded",
  restartsObserved: "restarts-observed",
} as const;

export type ReasonCode = (typeof Reason)[keyof typeof Reason];

export type RecommendationStatus = "ok" | "insufficient-history";

export type Recommendation = {
  readonly status: RecommendationStatus;
  /** 0 below the minimum history, then grows linearly to 1 at full history. */
  readonly confidence: number;
  /** Active (present) history behind the values, in milliseconds. */
  readonly historyMs: number;
  readonly cpuRequestCores: Bounded;
  readonly memoryRequestBytes: Bounded;
  readonly memoryLimitBytes: Bounded;
  readonly reasons: readonly ReasonCode[];
};

export type Result<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly error: string };
