// Synthetic usage traces for the rightsizing replay benchmark: one sample a minute, fixed seeds, each
// shaped after a case the recommender must handle. `samples` is the true demand; the replay caps
// observed memory at the limit and turns excursions above it into OOM kills.

import type { Random } from "../rightsizing/prng.ts";
import { gaussian, seededRandom } from "../rightsizing/prng.ts";
import type { ContainerResources, UsageSample } from "../rightsizing/types.ts";

export const MINUTE_MS = 60_000;
export const DAY_MS = 1440 * MINUTE_MS;
export const MIB = 1024 * 1024;
export const GIB = 1024 * MIB;
/** Monday 2025-01-06 00:00 UTC. */
export const TRACE_START_MS = 1_736_121_600_000;

export type Trace = {
  readonly name: string;
  readonly samples: readonly UsageSample[];
  readonly current: Required<ContainerResources>;
};

type Moment = {
  readonly minute: number;
  readonly day: number;
  readonly hour: number;
  readonly weekend: boolean;
};
type Demand = { cpuCores: number; memoryBytes: number } | null;

function generate(days: number, seed: number, demand: (m: Moment, random: Random) => Demand): UsageSample[] {
  const random = seededRandom(seed);
  const samples: UsageSample[] = [];
  for (let minute = 0; minute < days * 1440; minute++) {
    const day = Math.floor(minute / 1440);
    const moment = { minute, day, hour: (minute % 1440) / 60, weekend: day % 7 >= 5 };
    const t = TRACE_START_MS + minute * MINUTE_MS;
    const d = demand(moment, random);
    samples.push(
      d === null
        ? { t, present: false }
        : {
            t,
            present: true,
            cpuCores: Math.max(0.005, d.cpuCores),
            memoryBytes: Math.max(MIB, d.memoryBytes),
          },
    );
  }
  return samples;
}

/** 0 at 04:00, 1 at 16:00; half as busy at weekends. */
function dailyLoad(m: Moment): number {
  const load = 0.5 - 0.5 * Math.cos((2 * Math.PI * (m.hour - 4)) / 24);
  return m.weekend ? load * 0.5 : load;
}

const steady = (days: number): Trace => ({
  name: "steady",
  current: { cpuRequestCores: 1, memoryRequestBytes: 1.5 * GIB, memoryLimitBytes: 1.5 * GIB },
  samples: generate(days, 1, (_m, r) => ({
    cpuCores: 0.25 + gaussian(r, 0.02),
    memoryBytes: 600 * MIB + gaussian(r, 5 * MIB),
  })),
});

const diurnal = (days: number): Trace => ({
  name: "diurnal",
  current: { cpuRequestCores: 2, memoryRequestBytes: 2 * GIB, memoryLimitBytes: 2 * GIB },
  samples: generate(days, 2, (m, r) => ({
    cpuCores: 0.1 + 1.1 * dailyLoad(m) + gaussian(r, 0.05),
    memoryBytes: 800 * MIB + 500 * MIB * dailyLoad(m) + gaussian(r, 10 * MIB),
  })),
});

function bursty(days: number): Trace {
  let cpuBurst = { until: -1, cores: 0 };
  let memorySpike = { until: -1, bytes: 0 };
  return {
    name: "bursty",
    current: { cpuRequestCores: 1, memoryRequestBytes: 1 * GIB, memoryLimitBytes: 1 * GIB },
    samples: generate(days, 3, (m, r) => {
      if (m.minute > cpuBurst.until && r() < 1 / 240) {
        cpuBurst = { until: m.minute + 2 + Math.floor(r() * 9), cores: 0.8 + 0.8 * r() };
      }
      // A short memory spike (1-3 minutes) about every third day.
      if (m.minute > memorySpike.until && r() < 1 / (3 * 1440)) {
        memorySpike = { until: m.minute + Math.floor(r() * 3), bytes: (200 + 250 * r()) * MIB };
      }
      return {
        cpuCores: (m.minute <= cpuBurst.until ? cpuBurst.cores : 0.15) + gaussian(r, 0.02),
        memoryBytes:
          500 * MIB + (m.minute <= memorySpike.until ? memorySpike.bytes : 0) + gaussian(r, 5 * MIB),
      };
    }),
  };
}

const memoryGrowth = (days: number): Trace => ({
  name: "memory-growth",
  current: { cpuRequestCores: 0.5, memoryRequestBytes: 2 * GIB, memoryLimitBytes: 2 * GIB },
  samples: generate(days, 4, (m, r) => ({
    cpuCores: 0.3 + gaussian(r, 0.03),
    memoryBytes: 400 * MIB + 45 * MIB * (m.minute / 1440) + gaussian(r, 8 * MIB),
  })),
});

/** A daily 20-minute batch at 02:00 and a heavier 40-minute weekly report on Sundays at 03:00. */
const oomProne = (days: number): Trace => ({
  name: "oom-prone",
  current: { cpuRequestCores: 1, memoryRequestBytes: 2 * GIB, memoryLimitBytes: 2 * GIB },
  samples: generate(days, 5, (m, r) => {
    const batch = m.hour >= 2 && m.hour < 2 + 20 / 60 ? 350 * MIB : 0;
    const weekly = m.day % 7 === 6 && m.hour >= 3 && m.hour < 3 + 40 / 60 ? 900 * MIB : 0;
    return {
      cpuCores: 0.4 + (batch || weekly ? 0.6 : 0) + gaussian(r, 0.04),
      memoryBytes: 700 * MIB + batch + weekly + gaussian(r, 10 * MIB),
    };
  }),
});

/** Created four days before the end of the replay. */
const shortHistory = (days: number): Trace => ({
  name: "short-history",
  current: { cpuRequestCores: 0.5, memoryRequestBytes: 512 * MIB, memoryLimitBytes: 1 * GIB },
  samples: generate(days, 6, (m, r) =>
    m.day < days - 4
      ? null
      : {
          cpuCores: 0.2 + 0.2 * dailyLoad(m) + gaussian(r, 0.02),
          memoryBytes: 300 * MIB + 100 * MIB * dailyLoad(m),
        },
  ),
});

/** Paused by Napwake outside working hours: present Monday to Friday, 08:00 to 18:00, warming up on wake. */
const paused = (days: number): Trace => ({
  name: "paused",
  current: { cpuRequestCores: 1, memoryRequestBytes: 1 * GIB, memoryLimitBytes: 1 * GIB },
  samples: generate(days, 7, (m, r) => {
    if (m.weekend || m.hour < 8 || m.hour >= 18) return null;
    const sinceWake = (m.hour - 8) * 60;
    return {
      cpuCores: (sinceWake < 10 ? 0.8 : 0.3) + gaussian(r, 0.05),
      memoryBytes: 300 * MIB + 400 * MIB * Math.min(1, sinceWake / 30) + gaussian(r, 8 * MIB),
    };
  }),
});

export function allTraces(days: number): Trace[] {
  return [steady, diurnal, bursty, memoryGrowth, oomProne, shortHistory, paused].map((make) => make(days));
}
