import { describe, expect, it } from "vitest";
import { parseQuantity } from "../../kube/quantity.ts";
import { policyRanges, quantityWithin } from "./policy-bounds.ts";

const MIB = 2 ** 20;
const open = { min: 0, max: Number.POSITIVE_INFINITY };

describe("a recommended value as status shows it", () => {
  it.each([
    {
      what: "rounds memory up to a whole Mi, never below what was recommended (a minimum, an OOM floor)",
      value: 300.4 * MIB,
      range: open,
      shown: "301Mi",
    },
    {
      what: "keeps a whole Mi that arithmetic left a rounding error above",
      value: 300 * MIB * (1 + 1e-13),
      range: open,
      shown: "300Mi",
    },
    {
      what: "rounds memory up past a decimal minimum the recommender held it at (100M is 96Mi)",
      value: 1e8,
      range: open,
      shown: "96Mi",
    },
    {
      what: "rounds down to stay under a decimal max",
      value: 1e9,
      range: { min: 0, max: 1e9 },
      shown: "953Mi",
    },
    {
      what: "rounds up to stay over a decimal min",
      value: 1e8,
      range: { min: 1e8, max: 1e12 },
      shown: "96Mi",
    },
    {
      what: "gives exact bytes under a max below one Mi, never a request of none",
      value: 512_000,
      range: { min: 0, max: 512_000 },
      shown: "512000",
    },
    {
      what: "gives exact bytes when no whole Mi fits between the bounds",
      value: 1e9,
      range: { min: 1e9, max: 1e9 },
      shown: "1000000000",
    },
  ])("$what", ({ value, range, shown }) => {
    expect(quantityWithin(value, range, "bytes")).toBe(shown);
  });

  it.each([
    { what: "rounds to whole millicores without bounds", value: 0.2004, range: open, shown: "200m" },
    {
      what: "keeps under a max between two millicores",
      value: 0.0025,
      range: { min: 0, max: 0.0025 },
      shown: "2m",
    },
    {
      what: "gives nanocores under a max below one millicore, never a request of none",
      value: 0.0004,
      range: { min: 0, max: 0.0004 },
      shown: "400000n",
    },
    {
      what: "brings a value kept from before the bounds changed within them, in nanocores",
      value: 0.25,
      range: { min: 0, max: 0.0005 },
      shown: "500000n",
    },
    {
      what: "gives nanocores when no whole millicore fits between the bounds",
      value: 0.0015,
      range: { min: 0.0015, max: 0.0015 },
      shown: "1500000n",
    },
  ])("$what", ({ value, range, shown }) => {
    expect(quantityWithin(value, range, "cores")).toBe(shown);
  });

  it("brings a memory value kept from before the bounds changed within them, in bytes", () => {
    expect(quantityWithin(300 * 2 ** 20, { min: 1_000_100, max: 1_000_200 }, "bytes")).toBe("1000200");
  });

  it("shows a value that parses back within the bounds, for bounds across the decimal and binary units", () => {
    for (const max of [1e9, 5e8, 123456789, 2 ** 30, 1.5e9]) {
      for (const value of [max * 0.5, max * 0.999, max]) {
        const shown = parseQuantity(quantityWithin(value, { min: 0, max }, "bytes"));
        expect(shown).toBeLessThanOrEqual(max);
      }
    }
  });
});

describe("a policy's bounds", () => {
  it.each([
    {
      what: "quantities",
      cpu: { min: "250m", max: "4" },
      memory: { max: "1Gi" },
      want: [0.25, 4, 0, 2 ** 30],
    },
    {
      what: "bare numbers, as YAML reads `max: 4`",
      cpu: { max: 4 },
      memory: { min: 67108864 },
      want: [0, 4, 2 ** 26, Number.POSITIVE_INFINITY],
    },
  ])("reads $what", ({ cpu, memory, want }) => {
    const settingsOf = (s: object) => ({ mode: "audit", settings: { mode: "audit", ...s } }) as never;
    const ranges = policyRanges({ cpu: settingsOf(cpu), memory: settingsOf(memory) });
    expect([ranges.cpu.min, ranges.cpu.max, ranges.memory.min, ranges.memory.max]).toEqual(want);
  });
});
