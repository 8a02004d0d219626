import { describe, expect, it } from "vitest";
import { decodeCheckpoint, encodeCheckpoint, parseCheckpoint, serializeCheckpoint } from "./checkpoint.ts";
import { defaultConfig, withDefaults } from "./config.ts";
import { foldHistory } from "./fold.ts";
import { recommend } from "./recommend.ts";
import { emptyState } from "./state.ts";
import { DAY_MS, GIB, historyOf, learn, START_MS, samplesOf, shapes } from "./test-support.ts";

const samples = samplesOf(14 * DAY_MS, shapes.diurnal);
const oom = { t: START_MS + 3 * DAY_MS, memoryBytes: 1.6 * GIB, limitBytes: 1.5 * GIB };
const learned = learn(historyOf(samples, [oom]));

function restore(text: string) {
  const result = parseCheckpoint(text, defaultConfig);
  if (!result.ok) throw new Error(result.error);
  return result.value;
}

function expectClose(a: ReturnType<typeof recommend>, b: ReturnType<typeof recommend>) {
  expect(a.status).toBe(b.status);
  expect(a.reasons).toEqual(b.reasons);
  for (const key of ["cpuRequestCores", "memoryRequestBytes", "memoryLimitBytes"] as const) {
    for (const bound of ["lower", "target", "upper"] as const) {
      expect(a[key][bound]).toBeCloseTo(b[key][bound], -Math.log10(b[key][bound] * 0.001));
    }
  }
}

describe("checkpoints", () => {
  it("round-trips to the same recommendation", () => {
    expectClose(recommend(restore(serializeCheckpoint(learned, defaultConfig))), recommend(learned));
  });

  it("resumes from a checkpoint with only the newer samples", () => {
    const firstWeek = samples.filter((s) => s.t < START_MS + 7 * DAY_MS);
    const restored = restore(serializeCheckpoint(learn(historyOf(firstWeek, [oom])), defaultConfig));
    const newer = samples.filter((s) => s.t > (restored.lastSampleAt ?? 0));
    expectClose(recommend(foldHistory(restored, historyOf(newer))), recommend(learned));
  });

  it("records the time of the last sample folded in", () => {
    expect(encodeCheckpoint(learned, defaultConfig).at).toBe(samples[samples.length - 1]?.t);
    expect(encodeCheckpoint(emptyState(defaultConfig), defaultConfig).at).toBeNull();
  });

  it("stays small: under 1.5 KB for two weeks of history", () => {
    const size = Buffer.byteLength(serializeCheckpoint(learned, defaultConfig));
    expect(size).toBeLessThan(1500);
  });

  const valid = encodeCheckpoint(learned, defaultConfig);
  it.each([
    ["not JSON", "{nope"],
    ["null", "null"],
    ["an unknown version", JSON.stringify({ ...valid, v: 2 })],
    ["a missing version", JSON.stringify({ ...valid, v: undefined })],
    ["a missing histogram", JSON.stringify({ ...valid, cpu: undefined })],
    ["a bucket out of range", JSON.stringify({ ...valid, cpu: [0, 1, 5000, 10] })],
    ["an odd histogram", JSON.stringify({ ...valid, mem: [0, 1, 3] })],
    ["a negative weight", JSON.stringify({ ...valid, mem: [0, 1, 3, -4] })],
    ["a truncated window", JSON.stringify({ ...valid, rw: [1, 2, 3] })],
    ["text where numbers belong", JSON.stringify({ ...valid, n: ["a", 1, 2] })],
  ])("returns an error value, not a throw, for %s", (_name, text) => {
    const result = parseCheckpoint(text, defaultConfig);
    expect(result.ok).toBe(false);
  });

  it("keeps only the windows this configuration reads from a checkpoint made under a larger window count", () => {
    const wider = withDefaults({ trendWindows: 12 });
    const keptWider = learn(historyOf(samples), wider).recentWindows;
    expect(keptWider).toHaveLength(12);
    const restored = restore(serializeCheckpoint(learn(historyOf(samples), wider), wider));
    const ends = (windows: readonly { atActiveMs: number }[]) => windows.map((w) => w.atActiveMs);
    expect(ends(restored.recentWindows)).toEqual(ends(keptWider.slice(-8)));
    // And it stays at that count as windows close.
    const later = samplesOf(17 * DAY_MS, shapes.diurnal).filter((s) => s.t > (restored.lastSampleAt ?? 0));
    expect(foldHistory(restored, historyOf(later)).recentWindows).toHaveLength(8);
  });

  it("refuses a checkpoint made with another bucket scheme", () => {
    const result = decodeCheckpoint(valid, withDefaults({ bucketGrowthRatio: 1.1 }));
    expect(result).toEqual({ ok: false, error: "checkpoint bucket scheme differs from the configuration" });
  });
});
