// Folds new history into a recommender state. Pure: returns a new state, the input is untouched.
// Only samples and events newer than the state's foldedUntil are used, so a caller resuming from a
// checkpoint can pass overlapping history safely; events newer than the batch's last sample are left
// for the next batch.

import type { RecommenderConfig } from "./config.ts";
import { defaultConfig } from "./config.ts";
import { addSample } from "./histogram.ts";
import { breakPersistence, closeWindowIfDue, observeMemory, persistenceSamples } from "./memory-windows.ts";
import { activeOomFloor, oomBump } from "./oom.ts";
import type { RecommenderState } from "./state.ts";
import { copyState, cpuScheme } from "./state.ts";
import type { ContainerHistory, OomEvent, UsageSample } from "./types.ts";

type TimedItem =
  | { readonly t: number; readonly order: 0; readonly sample: UsageSample }
  | { readonly t: number; readonly order: 1; readonly oom: OomEvent }
  | { readonly t: number; readonly order: 2 };

// Events after samples at the same instant: an OOM is reported after the usage that led to it. Events
// later than the newest sample wait for the next fold, so the cursor never skips samples still to come.
function timeline(history: ContainerHistory, after: number): TimedItem[] {
  const until = history.samples.reduce((latest, s) => Math.max(latest, s.t), Number.NEGATIVE_INFINITY);
  const events: TimedItem[] = [
    ...(history.ooms ?? []).map((oom) => ({ t: oom.t, order: 1 as const, oom })),
    ...(history.restarts ?? []).map((r) => ({ t: r.t, order: 2 as const })),
  ];
  const items: TimedItem[] = [
    ...history.samples.map((sample) => ({ t: sample.t, order: 0 as const, sample })),
    ...events.filter((e) => e.t <= until),
  ];
  return items.filter((item) => item.t > after).sort((a, b) => a.t - b.t || a.order - b.order);
}

/** The state with the new history folded in; the given state is not modified. */
export function foldHistory(
  state: RecommenderState,
  history: ContainerHistory,
  config: RecommenderConfig = defaultConfig,
): RecommenderState {
  const next = copyState(state);
  const persistence = persistenceSamples(config, history.stepMs);
  for (const item of timeline(history, state.foldedUntil ?? Number.NEGATIVE_INFINITY)) {
    if (item.order === 0) foldSample(next, item.sample, history.stepMs, persistence, config);
    else if (item.order === 1) foldOom(next, item.oom, config);
    else foldRestart(next);
    next.foldedUntil = Math.max(next.foldedUntil ?? item.t, item.t);
  }
  return next;
}

function foldSample(
  state: RecommenderState,
  sample: UsageSample,
  stepMs: number,
  persistence: number,
  config: RecommenderConfig,
): void {
  const missedSteps =
    state.lastSampleAt === null ? 0 : Math.round((sample.t - state.lastSampleAt) / stepMs) - 1;
  if (missedSteps > 0) {
    state.absentSamples += missedSteps;
    breakPersistence(state);
  }
  state.firstSampleAt ??= sample.t;
  state.lastSampleAt = sample.t;
  if (!sample.present) {
    state.absentSamples += 1;
    breakPersistence(state);
    return;
  }
  state.presentSamples += 1;
  state.activeMs += stepMs;
  addSample(state.cpu, cpuScheme(config), sample.cpuCores, 1, state.activeMs, config.cpuHalfLifeMs);
  observeMemory(state, sample.memoryBytes, persistence);
  closeWindowIfDue(state, config);
}

function foldOom(state: RecommenderState, oom: OomEvent, config: RecommenderConfig): void {
  // The kill proves the container needed more than it had: the larger of the reading and the limit hit.
  const used = Math.max(oom.memoryBytes, oom.limitBytes ?? 0);
  state.window.oomPeak = Math.max(state.window.oomPeak, oomBump(used, config));
  state.oom = {
    count: state.oom.count + 1,
    lastAt: oom.t,
    lastActiveMs: state.activeMs,
    floorBytes: Math.max(activeOomFloor(state, config), used),
  };
  breakPersistence(state);
}

function foldRestart(state: RecommenderState): void {
  state.restarts += 1;
  breakPersistence(state);
}
