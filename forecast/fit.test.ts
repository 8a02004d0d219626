import { describe, expect, it } from "vitest";
import { withoutIsolatedActivity } from "./fit.ts";
import { DAY_SLOTS } from "./grid.ts";

/** `days` days of zeros with `active` slots (index from the window's start) set to `value`. */
function window(days: number, active: readonly number[], value = 1): Float64Array {
  const values = new Float64Array(days * DAY_SLOTS);
  for (const i of active) values[i] = value;
  return values;
}

/** The indexes `withoutIsolatedActivity` leaves out (turns into unknown). */
function leftOut(values: Float64Array): number[] {
  const out = withoutIsolatedActivity(values);
  return [...out.keys()].filter((i) => Number.isNaN(out[i]) && !Number.isNaN(values[i]));
}

describe("what a refit fits and learns", () => {
  it.each([
    {
      name: "leaves out activity no other day saw at that time",
      active: [3 * DAY_SLOTS + 12],
      out: [3 * DAY_SLOTS + 12],
    },
    { name: "keeps activity another day saw at the same time", active: [12, 3 * DAY_SLOTS + 12], out: [] },
    {
      name: "keeps activity another day saw a quarter hour beside it",
      active: [13, 3 * DAY_SLOTS + 12],
      out: [],
    },
    {
      name: "leaves out activity two quarter hours from the other day's",
      active: [14, 3 * DAY_SLOTS + 12],
      out: [14, 3 * DAY_SLOTS + 12],
    },
    {
      name: "judges each quarter hour of a stretch on its own",
      active: [12, 13, 14, DAY_SLOTS + 14],
      out: [12],
    },
  ])("$name", ({ active, out }) => {
    expect(leftOut(window(14, active))).toEqual(out);
  });

  it("leaves out a burst however large, and keeps counts that repeat", () => {
    const values = window(14, [DAY_SLOTS + 56], 200_000);
    for (let day = 0; day < 14; day++) values[day * DAY_SLOTS + 36] = 1;
    expect(leftOut(values)).toEqual([DAY_SLOTS + 56]);
  });

  it("changes nothing in a window under two days: no other day to judge by", () => {
    const values = window(1, [12]);
    expect(withoutIsolatedActivity(values)).toBe(values);
  });
});
