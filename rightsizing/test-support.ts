// Builders for the recommender's unit tests: synthetic histories at a 5-minute step (fast to fold).

import type { RecommenderConfig } from "./config.ts";
import { defaultConfig } from "./config.ts";
import { foldHistory } from "./fold.ts";
import { gaussian, seededRandom } from "./prng.ts";
import { recommend } from "./recommend.ts";
import type { RecommenderState } from "./state.ts";
import { emptyState } from "./state.ts";
import type { ContainerHistory, OomEvent, Recommendation, UsageSample } from "./types.ts";

export const STEP_MS = 5 * 60_000;
export const HOUR_MS = 3_600_000;
export const DAY_MS = 24 * HOUR_MS;
export const MIB = 1024 * 1024;
export const GIB = 1024 * MIB;
export const START_MS = 1_736_121_600_000;

export type Moment = { readonly index: number; readonly day: number; readonly hour: number };
/** Usage at a moment in cores and MiB, or null when the workload has no pods. */
export type Shape = (m: Moment) => { cpu: number; memMiB: number } | null;

export function samplesOf(durationMs: number, shape: Shape, seed = 1, noise = 0.01): UsageSample[] {
  const random = seededRandom(seed);
  const samples: UsageSample[] = [];
  for (let index = 0; index < durationMs / STEP_MS; index++) {
    const t = START_MS + index * STEP_MS;
    const day = Math.floor((index * STEP_MS) / DAY_MS);
    const usage = shape({ index, day, hour: ((index * STEP_MS) % DAY_MS) / HOUR_MS });
    const jitter = () => 1 + gaussian(random, noise);
    samples.push(
      usage === null
        ? { t, present: false }
        : { t, present: true, cpuCores: usage.cpu * jitter(), memoryBytes: usage.memMiB * MIB * jitter() },
    );
  }
  return samples;
}

export function historyOf(samples: UsageSample[], ooms: OomEvent[] = []): ContainerHistory {
  return { stepMs: STEP_MS, samples, ooms };
}

export function learn(
  history: ContainerHistory,
  config: RecommenderConfig = defaultConfig,
): RecommenderState {
  return foldHistory(emptyState(config), history, config);
}

export function recommendFor(
  history: ContainerHistory,
  config: RecommenderConfig = defaultConfig,
): Recommendation {
  return recommend(learn(history, config), config);
}

/** 0 at 04:00, 1 at 16:00. */
export const dailyLoad = (hour: number): number => 0.5 - 0.5 * Math.cos((2 * Math.PI * (hour - 4)) / 24);

export const shapes = {
  steady: (() => ({ cpu: 0.25, memMiB: 600 })) as Shape,
  diurnal: ((m) => ({ cpu: 0.1 + dailyLoad(m.hour), memMiB: 800 + 400 * dailyLoad(m.hour) })) as Shape,
  /** CPU bursts for 10 minutes every 4 hours; one 5-minute memory spike to 1500 MiB on day 5. */
  bursty: ((m) => ({
    cpu: m.index % 48 < 2 ? 1.5 : 0.15,
    memMiB: m.day === 5 && m.index % 288 === 100 ? 1500 : 500,
  })) as Shape,
  /** 50 MiB a day on top of 400 MiB. */
  growth: ((m) => ({ cpu: 0.3, memMiB: 400 + 50 * (m.index / 288) })) as Shape,
  /** Present 08:00-18:00 only. */
  paused: ((m) => (m.hour >= 8 && m.hour < 18 ? { cpu: 0.4, memMiB: 700 } : null)) as Shape,
};
