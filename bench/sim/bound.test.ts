import { describe, expect, it } from "vitest";
import { coldStartBound } from "./bound.ts";

const rates = (...values: number[]) => Float64Array.from(values);

describe("the fewest cold starts within an awake budget", () => {
  it.each([
    {
      name: "catches a share of steady traffic in proportion to the time awake",
      rates: rates(0.5, 0.5, 0.5, 0.5),
      awake: 1,
      expected: 2,
      min: 1.5,
    },
    {
      name: "spends the budget on the minutes with the highest rates",
      rates: rates(0.1, 0.9, 0.2, 0.8),
      awake: 2,
      expected: 2,
      min: 0.3,
    },
    {
      name: "counts a part of a minute at that minute's rate",
      rates: rates(0.4, 1, 0.2),
      awake: 1.5,
      expected: 1.6,
      min: 0.4,
    },
    { name: "leaves nothing when awake the whole time", rates: rates(1, 2), awake: 5, expected: 3, min: 0 },
    { name: "leaves every burst when never awake", rates: rates(1, 2), awake: 0, expected: 3, min: 3 },
    { name: "treats a negative budget as none", rates: rates(1), awake: -2, expected: 1, min: 1 },
  ])("$name", ({ rates, awake, expected, min }) => {
    const bound = coldStartBound(rates, awake);
    expect(bound.expectedStarts).toBeCloseTo(expected, 9);
    expect(bound.minColdStarts).toBeCloseTo(min, 9);
  });

  it("leaves the rates it was given as they were", () => {
    const given = rates(0.3, 0.1, 0.2);
    coldStartBound(given, 1);
    expect([...given]).toEqual([0.3, 0.1, 0.2]);
  });
});
