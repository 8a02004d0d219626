// Cost of the forecast engine: one refit + 24 h forecast with 14 days of history, and the CPU an
// operator spends per hour keeping many workloads learning, measured on a simulated fleet.

import { performance } from "node:perf_hooks";
import { cpuUsage } from "node:process";
import {
  createEngine,
  DAY_SLOTS,
  encodeEngine,
  type ForecastConfig,
  type ForecastEngine,
  forecastSlots,
  type GridPoint,
  observe,
  observeAll,
  refitEngine,
} from "../../forecast/index.ts";
import { percentile } from "../format.ts";
import type { Forecaster } from "./augurs.ts";

export type Percentiles = { p50: number; p90: number; max: number; runs: number };

export type FleetHour = {
  workloads: number;
  hours: number;
  /** Process CPU (user + system) per simulated hour, in seconds. */
  cpuSecondsPerHour: number;
  observes: number;
  refits: number;
  encodes: number;
};

export type SpeedReport = {
  fitAndForecastMs: Percentiles;
  /** The library forecaster fitted on the same 14 days, when there is one. */
  libraryFitAndForecastMs: Percentiles | null;
  fleet: FleetHour;
  encodedBytes: number;
};

function percentiles(samples: number[]): Percentiles {
  return {
    p50: percentile(samples, 50),
    p90: percentile(samples, 90),
    max: Math.max(...samples),
    runs: samples.length,
  };
}

function timeRuns(runs: number, run: () => void): Percentiles {
  run(); // warm-up
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const started = performance.now();
    run();
    samples.push(performance.now() - started);
  }
  return percentiles(samples);
}

/**
 * `grid` needs at least 15 days: 14 to learn from, then one more day of slots that the fleet replays.
 * Every simulated workload starts from the same trained engine, with its daily refit due at a
 * different slot so refits spread over the day as they would across a real fleet.
 */
export function measureSpeed(
  grid: readonly GridPoint[],
  config: ForecastConfig,
  options: { workloads: number; hours: number; runs: number; library: Forecaster | null },
): SpeedReport {
  const history = grid.slice(0, 14 * DAY_SLOTS);
  const trained = observeAll(createEngine(config), history, config).engine;
  const fitAndForecastMs = timeRuns(options.runs, () => {
    const refitted = refitEngine(trained, config);
    forecastSlots(refitted, refitted.nextSlot ?? 0, DAY_SLOTS, config);
  });
  const values = Float64Array.from(history, (p) => p.value ?? Number.NaN);
  const library = options.library;
  const libraryFitAndForecastMs = library
    ? timeRuns(Math.min(options.runs, 20), () => library(values, DAY_SLOTS))
    : null;
  const encoded = encodeEngine(trained);
  return {
    fitAndForecastMs,
    libraryFitAndForecastMs,
    fleet: measureFleet(trained, grid.slice(14 * DAY_SLOTS), config, options.workloads, options.hours),
    encodedBytes: encoded.ok ? encoded.value.length : Number.NaN,
  };
}

/** Each simulated hour: every workload learns 4 slots (refitting when due) and saves its state once. */
function measureFleet(
  trained: ForecastEngine,
  upcoming: readonly GridPoint[],
  config: ForecastConfig,
  workloads: number,
  hours: number,
): FleetHour {
  const nextSlot = trained.nextSlot ?? 0;
  const fleet: ForecastEngine[] = Array.from({ length: workloads }, (_, i) => ({
    ...trained,
    // Due at a different slot of the day for each workload.
    lastRefitSlot: nextSlot - (i % config.refitEverySlots),
  }));
  let refits = 0;
  let observes = 0;
  let encodes = 0;
  const started = cpuUsage();
  for (let hour = 0; hour < hours; hour++) {
    for (let w = 0; w < fleet.length; w++) {
      let engine = fleet[w] as ForecastEngine;
      for (let quarter = 0; quarter < 4; quarter++) {
        const point = upcoming[hour * 4 + quarter] ?? { slot: (engine.nextSlot ?? 0) + 1, value: 0 };
        const step = observe(engine, point, config);
        refits += step.events.filter((event) => event.kind === "refit").length;
        observes++;
        engine = step.engine;
      }
      encodeEngine(engine);
      encodes++;
      fleet[w] = engine;
    }
  }
  const used = cpuUsage(started);
  return {
    workloads,
    hours,
    cpuSecondsPerHour: (used.user + used.system) / 1e6 / hours,
    observes,
    refits,
    encodes,
  };
}
