// Cost of the forecast engine: one refit + 24 h forecast with 14 days of history, and the CPU an
import { percentile } from "../format.ts";
// operator would spend per hour keeping many workloads learning.

import { performance } from "node:perf_hooks";
import {
  createEngine,
  DAY_SLOTS,
  encodeEngine,
  type ForecastConfig,
  forecastSlots,
  type GridPoint,
  observe,
  observeAll,
  refitEngine,
} from "../../forecast/index.ts";

export type Percentiles = { p50: number; p90: number; p99: number; max: number };

export type SpeedReport = {
  fitAndForecastMs: Percentiles;
  repetitions: number;
  /** Per observed slot, refits included (they happen inside `observe` once a day). */
  observeAmortisedMs: number;
  encodeMs: number;
  encodedBytes: number;
  workloads: number;
  cpuSecondsPerHour: number;
};

function percentiles(samples: number[]): Percentiles {
  return {
    p50: percentile(samples, 50),
    p90: percentile(samples, 90),
    p99: percentile(samples, 99),
    max: Math.max(...samples),
  };
}

/** `grid` needs at least 21 days: 14 to learn from, 7 more to time incremental updates over. */
export function measureSpeed(
  grid: readonly GridPoint[],
  config: ForecastConfig,
  workloads: number,
): SpeedReport {
  const history = grid.slice(0, 14 * DAY_SLOTS);
  const engine = observeAll(createEngine(config), history, config).engine;

  const repetitions = 40;
  const samples: number[] = [];
  for (let i = 0; i < repetitions; i++) {
    const started = performance.now();
    const refitted = refitEngine(engine, config);
    forecastSlots(refitted, refitted.nextSlot ?? 0, DAY_SLOTS, config);
    samples.push(performance.now() - started);
  }

  const later = grid.slice(14 * DAY_SLOTS, 21 * DAY_SLOTS);
  let current = engine;
  const started = performance.now();
  for (const point of later) current = observe(current, point, config).engine;
  const observeAmortisedMs = (performance.now() - started) / Math.max(1, later.length);

  const encodeStarted = performance.now();
  const encodeRounds = 50;
  let encodedBytes = 0;
  for (let i = 0; i < encodeRounds; i++) {
    const encoded = encodeEngine(current);
    encodedBytes = encoded.ok ? encoded.value.length : Number.NaN;
  }
  const encodeMs = (performance.now() - encodeStarted) / encodeRounds;

  // Four slots learned per hour per workload, and the state saved once an hour.
  const msPerHour = workloads * (4 * observeAmortisedMs + encodeMs);
  return {
    fitAndForecastMs: percentiles(samples),
    repetitions,
    observeAmortisedMs,
    encodeMs,
    encodedBytes,
    workloads,
    cpuSecondsPerHour: msPerHour / 1000,
  };
}
