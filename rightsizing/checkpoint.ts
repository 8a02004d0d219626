// A compact, versioned snapshot of a container's learned state, so a restarted or newly elected
// operator resumes from it and only fetches samples newer than `at`. Histograms are stored sparse with
// integer weights scaled to 0..10000 (as VPA's checkpoints do): buckets that decayed below 1/20000 of
// the heaviest one are dropped, which is also what keeps the checkpoint small.

import type { RecommenderConfig } from "./config.ts";
import type { BucketScheme, DecayingHistogram } from "./histogram.ts";
import { bucketCount } from "./histogram.ts";
import { windowsKept } from "./memory-windows.ts";
import type { MemoryWindow, RecommenderState } from "./state.ts";
import { cpuScheme, memoryScheme } from "./state.ts";
import type { Result } from "./types.ts";

const WEIGHT_SCALE = 10_000;

export type CheckpointV1 = {
  readonly v: 1;
  /** Time of the last sample folded in (epoch ms); fetch only newer samples. */
  readonly at: number | null;
  /** Latest time of anything folded, samples or events. */
  readonly until: number | null;
  readonly first: number | null;
  /** Active (present) time folded in, ms. */
  readonly active: number;
  /** [present samples, absent samples, restarts]. */
  readonly n: readonly [number, number, number];
  /** Bucket scheme [cpu first bucket, memory first bucket, growth ratio]: must match the config. */
  readonly scheme: readonly [number, number, number];
  /** [refMs, max weight, bucket, weight, bucket, weight, ...]. */
  readonly cpu: readonly number[];
  readonly mem: readonly number[];
  /** Windows as flat [atActiveMs, raw, level, oom] quadruples: the current one, then the recent ones. */
  readonly win: readonly number[];
  readonly rw: readonly number[];
  readonly rm: readonly number[];
  /** [count, last kill at (or -1), active ms at last kill, floor bytes]. */
  readonly oom: readonly [number, number, number, number];
};

function encodeHistogram(h: DecayingHistogram): number[] {
  const max = Math.max(0, ...h.weights);
  if (!(max > 0)) return [h.refMs, 0];
  const sparse: number[] = [];
  h.weights.forEach((w, i) => {
    const scaled = Math.round((w / max) * WEIGHT_SCALE);
    if (scaled > 0) sparse.push(i, scaled);
  });
  return [h.refMs, Number(max.toPrecision(8)), ...sparse];
}

const flattenWindow = (w: MemoryWindow): number[] =>
  [w.atActiveMs, w.rawPeak, w.levelPeak, w.oomPeak].map(Math.round);

export function encodeCheckpoint(state: RecommenderState, config: RecommenderConfig): CheckpointV1 {
  return {
    v: 1,
    at: state.lastSampleAt,
    until: state.foldedUntil,
    first: state.firstSampleAt,
    active: state.activeMs,
    n: [state.presentSamples, state.absentSamples, state.restarts],
    scheme: [config.cpuFirstBucketCores, config.memoryFirstBucketBytes, config.bucketGrowthRatio],
    cpu: encodeHistogram(state.cpu),
    mem: encodeHistogram(state.memoryPeaks),
    win: flattenWindow(state.window),
    rw: state.recentWindows.flatMap(flattenWindow),
    rm: state.recentMemory.map(Math.round),
    oom: [state.oom.count, state.oom.lastAt ?? -1, state.oom.lastActiveMs, Math.round(state.oom.floorBytes)],
  };
}

export function serializeCheckpoint(state: RecommenderState, config: RecommenderConfig): string {
  return JSON.stringify(encodeCheckpoint(state, config));
}

export function parseCheckpoint(text: string, config: RecommenderConfig): Result<RecommenderState> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return { ok: false, error: "checkpoint is not valid JSON" };
  }
  return decodeCheckpoint(value, config);
}

const fail = (error: string): Result<never> => ({ ok: false, error });
const isNumber = (x: unknown): x is number => typeof x === "number" && Number.isFinite(x);
const isNumbers = (x: unknown): x is number[] => Array.isArray(x) && x.every(isNumber);
const isNullableNumber = (x: unknown): x is number | null => x === null || isNumber(x);
const isTuple = (x: unknown, length: number): x is number[] => isNumbers(x) && x.length === length;

function decodeHistogram(raw: number[], scheme: BucketScheme): DecayingHistogram | null {
  const [refMs, max, ...pairs] = raw;
  if (refMs === undefined || max === undefined || max < 0 || pairs.length % 2 !== 0) return null;
  const weights = new Array<number>(bucketCount(scheme)).fill(0);
  for (let i = 0; i < pairs.length; i += 2) {
    const bucket = pairs[i] ?? -1;
    const scaled = pairs[i + 1] ?? -1;
    if (!Number.isInteger(bucket) || bucket < 0 || bucket >= weights.length || scaled < 0) return null;
    weights[bucket] = (scaled / WEIGHT_SCALE) * max;
  }
  return { refMs, weights, total: weights.reduce((s, w) => s + w, 0) };
}

function decodeWindows(flat: number[]): MemoryWindow[] | null {
  if (flat.length % 4 !== 0) return null;
  const windows: MemoryWindow[] = [];
  for (let i = 0; i < flat.length; i += 4) {
    const [atActiveMs = 0, rawPeak = 0, levelPeak = 0, oomPeak = 0] = flat.slice(i, i + 4);
    windows.push({ atActiveMs, rawPeak, levelPeak, oomPeak });
  }
  return windows;
}

function schemeMatches(scheme: number[], config: RecommenderConfig): boolean {
  const expected = [config.cpuFirstBucketCores, config.memoryFirstBucketBytes, config.bucketGrowthRatio];
  return scheme.every((x, i) => x === expected[i]);
}

/** A checkpoint back into a state; an error value (never a throw) when it is corrupt, unknown or mismatched. */
export function decodeCheckpoint(value: unknown, config: RecommenderConfig): Result<RecommenderState> {
  if (typeof value !== "object" || value === null) return fail("checkpoint is not an object");
  const c = value as Record<string, unknown>;
  if (c.v !== 1) return fail(`unsupported checkpoint version: ${JSON.stringify(c.v) ?? "missing"}`);
  if (
    !isNullableNumber(c.at) ||
    !isNullableNumber(c.until) ||
    !isNullableNumber(c.first) ||
    !isNumber(c.active)
  ) {
    return fail("checkpoint times are malformed");
  }
  if (!isTuple(c.n, 3) || !isTuple(c.scheme, 3) || !isTuple(c.win, 4) || !isTuple(c.oom, 4)) {
    return fail("checkpoint counters are malformed");
  }
  if (!isNumbers(c.cpu) || !isNumbers(c.mem) || !isNumbers(c.rw) || !isNumbers(c.rm)) {
    return fail("checkpoint arrays are malformed");
  }
  if (!schemeMatches(c.scheme, config))
    return fail("checkpoint bucket scheme differs from the configuration");
  const cpu = decodeHistogram(c.cpu, cpuScheme(config));
  const memoryPeaks = decodeHistogram(c.mem, memoryScheme(config));
  const [window] = decodeWindows(c.win) ?? [];
  const recentWindows = decodeWindows(c.rw);
  if (!cpu || !memoryPeaks || !window || !recentWindows)
    return fail("checkpoint histograms or windows are corrupt");
  const [present = 0, absent = 0, restarts = 0] = c.n;
  const [count = 0, lastAt = -1, lastActiveMs = 0, floorBytes = 0] = c.oom;
  return {
    ok: true,
    value: {
      activeMs: c.active,
      firstSampleAt: c.first,
      lastSampleAt: c.at,
      foldedUntil: c.until,
      presentSamples: present,
      absentSamples: absent,
      restarts,
      cpu,
      memoryPeaks,
      window,
      recentWindows: windowsKept(recentWindows, config),
      recentMemory: c.rm,
      oom: { count, lastAt: lastAt < 0 ? null : lastAt, lastActiveMs, floorBytes },
    },
  };
}
