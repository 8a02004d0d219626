import { describe, expect, it } from "vitest";
import { forecastConfig } from "./config.ts";
import { OCCUPANCY } from "./probability.ts";
import { MAX_SLOT_CHANCE, NO_SILENCE, nextSilence, type Silence, silenceLikelihood } from "./silence.ts";

const config = forecastConfig();
const started: Silence = { slots: 2, evidence: 2, quietRun: 0 };

describe("silence where activity was expected", () => {
  it.each<{ name: string; from: Silence; value: number; expected: number; to: Silence }>([
    {
      name: "grows by -ln(1 - chance) for a silent slot where activity was expected",
      from: NO_SILENCE,
      value: 0,
      expected: 0.8,
      to: { slots: 1, evidence: -Math.log(0.2), quietRun: 0 },
    },
    {
      name: "caps the chance of a single slot, so one slot never makes a strong case",
      from: NO_SILENCE,
      value: 0,
      expected: 1,
      to: { slots: 1, evidence: -Math.log(1 - MAX_SLOT_CHANCE), quietRun: 0 },
    },
    { name: "ends with activity", from: started, value: 1, expected: 0.8, to: NO_SILENCE },
    {
      name: "is kept as it was through a gap where activity was expected: nobody watched (an operator restart)",
      from: started,
      value: Number.NaN,
      expected: 0.8,
      to: started,
    },
    {
      name: "starts its quiet run again at a gap where activity was expected: quiet slots around it are not in a row",
      from: { ...started, quietRun: config.missedResetQuietSlots - 1 },
      value: Number.NaN,
      expected: 0.8,
      to: { ...started, quietRun: 0 },
    },
    {
      name: "counts a gap where none was expected towards the quiet slots that end it",
      from: { ...started, quietRun: config.missedResetQuietSlots - 1 },
      value: Number.NaN,
      expected: 0.05,
      to: NO_SILENCE,
    },
    {
      name: "carries through a short lull where nothing was expected",
      from: started,
      value: 0,
      expected: 0.05,
      to: { ...started, quietRun: 1 },
    },
    {
      name: "ends after enough quiet slots in a row",
      from: { ...started, quietRun: config.missedResetQuietSlots - 1 },
      value: 0,
      expected: 0.05,
      to: NO_SILENCE,
    },
  ])("$name", ({ from, value, expected, to }) => {
    const next = nextSilence(from, value, expected, OCCUPANCY, config);
    expect(next.slots).toBe(to.slots);
    expect(next.quietRun).toBe(to.quietRun);
    expect(next.evidence).toBeCloseTo(to.evidence, 9);
  });

  it.each([
    { silence: NO_SILENCE, likelihood: 1 },
    { silence: { slots: 3, evidence: 3 * -Math.log(0.1), quietRun: 0 }, likelihood: 0.001 },
  ])("gives the chance of the whole silence ($likelihood)", ({ silence, likelihood }) => {
    expect(silenceLikelihood(silence)).toBeCloseTo(likelihood, 9);
  });
});
