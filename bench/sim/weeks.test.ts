import { describe, expect, it } from "vitest";
import { compareWeeks, unsettledWeeks } from "./weeks.ts";

describe("cold starts week by week", () => {
  it.each([
    { name: "the learning week alone without a change", changeAtDay: null, weeks: [0] },
    { name: "the week a change on a Monday begins in", changeAtDay: 28, weeks: [0, 4] },
    { name: "the week holding a mid-week change", changeAtDay: 24, weeks: [0, 3] },
    { name: "the learning week once when the change falls in it", changeAtDay: 3, weeks: [0] },
  ])("leaves out $name", ({ changeAtDay, weeks }) => {
    expect(unsettledWeeks(changeAtDay)).toEqual(weeks);
  });

  it("compares the policies over the other weeks only", () => {
    const comparison = compareWeeks([50, 40, 60, 40], [30, 20, 55, 20], [0, 2]);
    expect(comparison.steady).toEqual({ baseline: 80, policy: 40, change: -0.5 });
  });

  it("counts a week one policy has no cold starts in as zero", () => {
    expect(compareWeeks([10, 10, 10], [5], [0]).steady).toEqual({ baseline: 20, policy: 0, change: -1 });
  });
});
