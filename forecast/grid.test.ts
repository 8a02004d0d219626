import { describe, expect, it } from "vitest";
import { bucketEvents, bucketSamples, SLOT_MS, slotOf, slotStartMs } from "./grid.ts";

const T0 = slotStartMs(1000);

describe("sample grid", () => {
  it("maps a timestamp to its 15-minute slot and back", () => {
    expect(slotOf(T0 + SLOT_MS - 1)).toBe(1000);
    expect(slotOf(T0 + SLOT_MS)).toBe(1001);
  });

  it.each([
    { name: "sums samples in the same slot", samples: [1, 2], offsets: [0, 60_000], expected: [3, null] },
    {
      name: "leaves a slot without samples as a gap, not zero",
      samples: [4],
      offsets: [SLOT_MS],
      expected: [null, 4],
    },
    { name: "keeps an explicit zero sample as zero", samples: [0], offsets: [0], expected: [0, null] },
    {
      name: "drops negative and non-finite samples",
      samples: [-1, Number.NaN],
      offsets: [0, SLOT_MS],
      expected: [null, null],
    },
  ])("$name", ({ samples, offsets, expected }) => {
    const points = bucketSamples(
      samples.map((value, i) => ({ atMs: T0 + (offsets[i] ?? 0), value })),
      1000,
      1002,
    );
    expect(points.map((p) => p.value)).toEqual(expected);
  });

  it("counts events, with silence as zero and telemetry gaps as null", () => {
    const events = [T0 + 1, T0 + 2, T0 + 2 * SLOT_MS + 5];
    const gaps = [{ fromMs: T0 + SLOT_MS, toMs: T0 + SLOT_MS + 1 }];
    expect(bucketEvents(events, 1000, 1004, gaps).map((p) => p.value)).toEqual([2, null, 1, 0]);
  });
});
