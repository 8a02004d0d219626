import { describe, expect, it } from "vitest";
import { parseCheckpoint, serializeCheckpoint } from "./checkpoint.ts";
import { withDefaults } from "./config.ts";
import { foldHistory } from "./fold.ts";
import { requestPeak } from "./memory-windows.ts";
import { recommend } from "./recommend.ts";
import { emptyState } from "./state.ts";
import type { Shape } from "./test-support.ts";
import {
  DAY_MS,
  GIB,
  HOUR_MS,
  historyOf,
  learn,
  MIB,
  recommendFor,
  START_MS,
  samplesOf,
  shapes,
} from "./test-support.ts";
import type { UsageSample } from "./types.ts";
import { Reason } from "./types.ts";

const EIGHT_DAYS = 8 * DAY_MS;

describe("recommendations per usage pattern", () => {
  it.each([
    { name: "steady", shape: shapes.steady, cpu: [0.28, 0.32], memMiB: [690, 760] },
    { name: "diurnal", shape: shapes.diurnal, cpu: [1.0, 1.35], memMiB: [1300, 1520] },
    { name: "bursty", shape: shapes.bursty, cpu: [0.17, 0.2], memMiB: [575, 640] },
  ])("sizes a $name workload from its percentile plus the 15% margin", ({ shape, cpu, memMiB }) => {
    const rec = recommendFor(historyOf(samplesOf(EIGHT_DAYS, shape)));
    expect(rec.status).toBe("ok");
    expect(rec.cpuRequestCores.target).toBeGreaterThanOrEqual(cpu[0] ?? 0);
    expect(rec.cpuRequestCores.target).toBeLessThanOrEqual(cpu[1] ?? 0);
    expect(rec.memoryRequestBytes.target / MIB).toBeGreaterThanOrEqual(memMiB[0] ?? 0);
    expect(rec.memoryRequestBytes.target / MIB).toBeLessThanOrEqual(memMiB[1] ?? 0);
  });

  it("keeps the memory limit above a short spike it keeps out of the request", () => {
    const rec = recommendFor(historyOf(samplesOf(EIGHT_DAYS, shapes.bursty)));
    expect(rec.memoryRequestBytes.target).toBeLessThan(1000 * MIB);
    expect(rec.memoryLimitBytes.target).toBeGreaterThan(1500 * MIB);
    expect(rec.reasons).toContain(Reason.memoryShortSpikeDiscounted);
    expect(rec.reasons).toContain(Reason.limitCoversRawPeak);
  });

  it.each([
    { windows: 1, coversSpike: false },
    { windows: 2, coversSpike: false },
    { windows: 8, coversSpike: true },
  ])(
    "keeps the limit above a week-old spike only when limitPeakWindows ($windows) reaches back to it",
    ({ windows, coversSpike }) => {
      const config = withDefaults({ limitPeakWindows: windows });
      // One 5-minute 4 GiB spike on day 1, then 500 MiB for six more days.
      const samples = samplesOf(
        7 * DAY_MS + HOUR_MS,
        (m) => ({ cpu: 0.2, memMiB: m.day === 1 && m.index % 288 === 100 ? 4096 : 500 }),
        1,
        0,
      );
      const limit = recommend(learn(historyOf(samples), config), config).memoryLimitBytes.target;
      expect(limit > 4 * GIB).toBe(coversSpike);
    },
  );

  it("tracks slow memory growth ahead of the percentile of past peaks", () => {
    const history = historyOf(samplesOf(EIGHT_DAYS, shapes.growth, 1, 0.005));
    const rec = recommendFor(history);
    const withoutTrend = recommendFor(history, withDefaults({ trendMinWindows: 1000 }));
    const levelTomorrow = (400 + 50 * 9) * MIB;
    expect(rec.reasons).toContain(Reason.memoryGrowthTrend);
    expect(rec.memoryRequestBytes.target).toBeGreaterThan(levelTomorrow);
    expect(rec.memoryLimitBytes.target).toBeGreaterThan(levelTomorrow);
    expect(rec.memoryRequestBytes.target).toBeGreaterThan(withoutTrend.memoryRequestBytes.target);
  });

  it("finds no trend in steady or diurnal memory", () => {
    for (const shape of [shapes.steady, shapes.diurnal]) {
      expect(recommendFor(historyOf(samplesOf(EIGHT_DAYS, shape))).reasons).not.toContain(
        Reason.memoryGrowthTrend,
      );
    }
  });
});

describe("CPU percentile", () => {
  // CPU evenly spread over [0, top] in a scrambled order. The histogram's bucket end would round the p90
  // up by about 4-5% in these cases, on top of the margin.
  const spreadUpTo =
    (top: number): Shape =>
    (m) => ({ cpu: (top * (((m.index * 37) % 100) + 0.5)) / 100, memMiB: 500 });
  const measure = (top: number) => {
    const samples = samplesOf(2 * DAY_MS, spreadUpTo(top), 1, 0);
    const usage = samples.flatMap((s) => (s.present ? [s.cpuCores] : [])).sort((a, b) => a - b);
    const truth = (fraction: number) => (usage[Math.ceil(fraction * usage.length) - 1] ?? 0) * 1.15;
    return { rec: recommendFor(historyOf(samples)), truth };
  };

  it.each([
    { top: 0.5, bound: "target", fraction: 0.9, within: 0.01 },
    { top: 0.951, bound: "target", fraction: 0.9, within: 0.01 },
    { top: 2, bound: "target", fraction: 0.9, within: 0.01 },
    { top: 0.951, bound: "lower", fraction: 0.5, within: 0.02 },
  ] as const)(
    "puts the CPU $bound at the p$fraction of usage up to $top cores plus 15%, not at its bucket end",
    ({ top, bound, fraction, within }) => {
      const { rec, truth } = measure(top);
      expect(Math.abs(rec.cpuRequestCores[bound] / truth(fraction) - 1)).toBeLessThan(within);
    },
  );
});

describe("short spikes and sustained levels", () => {
  const withMemory =
    (memMiB: (m: { index: number; day: number }) => number): Shape =>
    (m) => ({ cpu: 0.2, memMiB: memMiB(m) });
  // index % 288 === 144 is 12:00; 12 steps of 5 minutes is an hour.
  it.each([
    {
      name: "a single 5-minute spike",
      counts: false,
      at: (m: { index: number; day: number }) => m.day === 6 && m.index % 288 === 144,
    },
    {
      name: "a level held for an hour",
      counts: true,
      at: (m: { index: number; day: number }) => m.day === 6 && m.index % 288 >= 144 && m.index % 288 < 156,
    },
    {
      name: "a 5-minute spike recurring daily",
      counts: true,
      at: (m: { index: number; day: number }) => m.index % 288 === 144,
    },
  ])("$name sets the memory request: $counts", ({ counts, at }) => {
    const shape = withMemory((m) => (at(m) ? 1500 : 500));
    const rec = recommendFor(historyOf(samplesOf(EIGHT_DAYS, shape, 1, 0.002)));
    expect(rec.memoryRequestBytes.target >= 1500 * MIB).toBe(counts);
    expect(rec.memoryLimitBytes.target).toBeGreaterThan(1500 * MIB);
  });
});

describe("the windows a short spike must recur in", () => {
  const window = (rawPeak: number) => ({ atActiveMs: 0, rawPeak, levelPeak: 0, oomPeak: 0 });
  it.each([
    { windows: 1, counted: false },
    { windows: 2, counted: true },
  ])(
    "with spikeRecurrenceWindows $windows, a spike in two earlier windows counts: $counted",
    ({ windows, counted }) => {
      const config = withDefaults({ spikeRecurrenceWindows: windows, spikeRecurrenceCount: 2 });
      const peak = requestPeak(window(900 * MIB), [window(900 * MIB), window(900 * MIB)], config);
      expect(peak).toBe(counted ? 900 * MIB : 0);
    },
  );
});

describe("a memory level held across a change of step", () => {
  it("counts after a checkpoint kept at a finer step, once held as long as the persistence asks", () => {
    const config = withDefaults({});
    const steady = (from: number, count: number, stepMs: number, memMiB: number): UsageSample[] =>
      Array.from({ length: count }, (_, i) => ({
        t: from + i * stepMs,
        present: true,
        cpuCores: 0.1,
        memoryBytes: memMiB * MIB,
      }));
    const minute = 60_000;
    const fineState = foldHistory(emptyState(config), {
      stepMs: minute,
      samples: steady(START_MS, 60, minute, 500),
    });
    const restored = parseCheckpoint(serializeCheckpoint(fineState, config), config);
    if (!restored.ok) throw new Error(restored.error);
    const coarse = steady(START_MS + HOUR_MS, 24, 5 * minute, 800);
    const state = foldHistory(restored.value, { stepMs: 5 * minute, samples: coarse });
    expect(state.window.levelPeak).toBe(800 * MIB);
  });
});

describe("OOM kills", () => {
  const killedAt = 1.5 * GIB;
  const oom = { t: START_MS + 2 * DAY_MS, memoryBytes: killedAt, limitBytes: killedAt };

  it.each([
    { name: "right after the kill", days: 3, reason: Reason.memoryOomBump },
    { name: "two weeks of low usage later", days: 17, reason: Reason.memoryOomFloor },
  ])("never recommends memory below the usage that was OOM-killed ($name)", ({ days, reason }) => {
    const rec = recommendFor(historyOf(samplesOf(days * DAY_MS, shapes.steady), [oom]));
    expect(rec.memoryRequestBytes.target).toBeGreaterThanOrEqual(killedAt);
    expect(rec.memoryRequestBytes.lower).toBeGreaterThanOrEqual(killedAt);
    expect(rec.memoryLimitBytes.target).toBeGreaterThanOrEqual(
      Math.max(killedAt + 100 * MIB, killedAt * 1.2),
    );
    expect(rec.reasons).toContain(reason);
  });

  // The kill capped the reading at the limit, so the bump is a need like a raw peak and gets the limit's
  // margin: a demand a little above the bump is not killed again (and the retained floor not ratcheted up).
  it.each([
    { name: "right after the kill", days: 3 },
    { name: "two weeks of low usage later", days: 17 },
  ])("keeps the memory limit at the OOM bump plus the 15% limit margin ($name)", ({ days }) => {
    const rec = recommendFor(historyOf(samplesOf(days * DAY_MS, shapes.steady), [oom]));
    expect(rec.memoryLimitBytes.target).toBeGreaterThanOrEqual(killedAt * 1.2 * 1.15);
  });

  it("bumps memory by max(used + 100 MiB, used x 1.2) in the window of the kill", () => {
    const small = { t: START_MS + 2 * DAY_MS, memoryBytes: 300 * MIB };
    const rec = recommendFor(historyOf(samplesOf(3 * DAY_MS, shapes.steady), [small]));
    expect(rec.reasons).toContain(Reason.memoryOomBump);
    expect(rec.memoryLimitBytes.target).toBeGreaterThanOrEqual(400 * MIB);
  });

  it("lets the floor go after a finite retention", () => {
    const config = withDefaults({ oomFloorRetentionMs: 7 * DAY_MS });
    const rec = recommendFor(historyOf(samplesOf(17 * DAY_MS, shapes.steady), [oom]), config);
    expect(rec.memoryRequestBytes.target).toBeLessThan(killedAt);
  });
});

describe("history length and confidence", () => {
  it.each([
    { hours: 0, status: "insufficient-history", confidence: 0 },
    { hours: 6, status: "insufficient-history", confidence: 0 },
    { hours: 24, status: "ok", confidence: 1 / 7 },
    { hours: 72, status: "ok", confidence: 3 / 7 },
    { hours: 24 * 7, status: "ok", confidence: 1 },
    { hours: 24 * 10, status: "ok", confidence: 1 },
  ])(
    "after $hours h of history the status is $status with confidence $confidence",
    ({ hours, status, confidence }) => {
      const rec = recommendFor(historyOf(samplesOf(hours * HOUR_MS, shapes.steady)));
      expect(rec.status).toBe(status);
      expect(rec.confidence).toBeCloseTo(confidence, 5);
      expect(rec.reasons.includes(Reason.insufficientHistory)).toBe(status !== "ok");
    },
  );

  it("narrows the upper bound as history grows", () => {
    const upper = (days: number) =>
      recommendFor(historyOf(samplesOf(days * DAY_MS, shapes.steady))).cpuRequestCores.upper;
    expect(upper(1)).toBeGreaterThan(upper(3));
    expect(upper(3)).toBeGreaterThan(upper(8));
  });
});

describe("paused periods", () => {
  const pausedSamples = samplesOf(21 * DAY_MS, shapes.paused);
  const presentOnly = pausedSamples.filter((s) => s.present);

  it("does not let time without pods pull the recommendation down", () => {
    // Present two hours a day: fed as zero usage, the p90 would be zero.
    const rarely: Shape = (m) => (m.hour >= 9 && m.hour < 11 ? { cpu: 0.4, memMiB: 700 } : null);
    const samples = samplesOf(21 * DAY_MS, rarely);
    const withAbsent = recommendFor(historyOf(samples));
    const asZeros = recommendFor(
      historyOf(
        samples.map(
          (s): UsageSample => (s.present ? s : { ...s, present: true, cpuCores: 0, memoryBytes: 0 }),
        ),
      ),
    );
    expect(withAbsent.cpuRequestCores.target).toBeGreaterThan(0.4);
    expect(withAbsent.memoryRequestBytes.target).toBeGreaterThan(700 * MIB);
    expect(asZeros.cpuRequestCores.target).toBeLessThan(0.1);
    expect(withAbsent.reasons).toContain(Reason.pausedTimeExcluded);
  });

  it("counts only present time as history", () => {
    const rec = recommendFor(historyOf(pausedSamples.slice(0, 5 * 288)));
    expect(rec.historyMs).toBe(5 * 10 * HOUR_MS);
    expect(rec.confidence).toBeCloseTo(Math.min(1, rec.historyMs / (7 * DAY_MS)), 5);
  });

  it("treats missing samples like absent ones", () => {
    const gappy = recommendFor(historyOf(presentOnly));
    const explicit = recommendFor(historyOf(pausedSamples));
    expect(gappy).toEqual(explicit);
  });
});

describe("bounds", () => {
  const oom = { t: START_MS + 3 * DAY_MS, memoryBytes: 900 * MIB };
  it.each([
    ["steady", historyOf(samplesOf(EIGHT_DAYS, shapes.steady))],
    ["diurnal", historyOf(samplesOf(EIGHT_DAYS, shapes.diurnal))],
    ["bursty", historyOf(samplesOf(EIGHT_DAYS, shapes.bursty))],
    ["growth", historyOf(samplesOf(EIGHT_DAYS, shapes.growth))],
    ["oom", historyOf(samplesOf(EIGHT_DAYS, shapes.steady), [oom])],
    ["paused", historyOf(samplesOf(EIGHT_DAYS, shapes.paused))],
    ["short", historyOf(samplesOf(2 * HOUR_MS, shapes.steady))],
    ["empty", historyOf([])],
    // One day at 600 MiB among 400: it sets the request's upper percentile, not the limit's target.
    [
      "one high day",
      historyOf(samplesOf(EIGHT_DAYS, (m) => ({ cpu: 0.2, memMiB: m.day === 4 ? 600 : 400 }), 1, 0)),
    ],
  ])("orders lower <= target <= upper and limit >= request, bound for bound (%s)", (_name, history) => {
    const rec = recommendFor(history);
    for (const b of [rec.cpuRequestCores, rec.memoryRequestBytes, rec.memoryLimitBytes]) {
      expect(b.lower).toBeLessThanOrEqual(b.target);
      expect(b.target).toBeLessThanOrEqual(b.upper);
      expect(Number.isFinite(b.upper)).toBe(true);
    }
    for (const bound of ["lower", "target", "upper"] as const) {
      expect(rec.memoryLimitBytes[bound]).toBeGreaterThanOrEqual(rec.memoryRequestBytes[bound]);
    }
    expect(rec.cpuRequestCores.target).toBeGreaterThanOrEqual(0.01);
    expect(rec.memoryRequestBytes.target).toBeGreaterThanOrEqual(12 * MIB);
  });
});

describe("incremental folding", () => {
  const samples = samplesOf(EIGHT_DAYS, shapes.diurnal);
  const oom = { t: START_MS + 5 * DAY_MS, memoryBytes: 1.4 * GIB };

  it("gives the same result folded day by day as in one go", () => {
    let state = learn(historyOf([]));
    for (let day = 0; day < 8; day++) {
      const today = samples.filter(
        (s) => s.t >= START_MS + day * DAY_MS && s.t < START_MS + (day + 1) * DAY_MS,
      );
      state = foldHistory(state, historyOf(today, [oom]));
    }
    expect(recommend(state)).toEqual(recommend(learn(historyOf(samples, [oom]))));
  });

  it("ignores samples it has already folded", () => {
    const once = learn(historyOf(samples));
    const twice = foldHistory(once, historyOf(samples));
    expect(twice).toEqual(once);
  });

  it("does not modify the state it is given", () => {
    const before = learn(historyOf(samples.slice(0, 100)));
    const snapshot = structuredClone(before);
    foldHistory(before, historyOf(samples));
    expect(before).toEqual(snapshot);
  });
});
