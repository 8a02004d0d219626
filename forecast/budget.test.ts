import { describe, expect, it } from "vitest";
import { idleWindowAwakeMs, spendBudget } from "./budget.ts";
import { forecastConfig } from "./config.ts";
import { SLOT_MS } from "./grid.ts";

const config = forecastConfig({ activityProbability: 0.35, budgetGain: 0.05, budgetShare: 1 });
const MIN = 60_000;

describe("the awake budget", () => {
  it.each([
    {
      name: "raises the threshold after awake time beyond the idle window's",
      awake: 4,
      baseline: 0,
      moves: "up",
    },
    { name: "lowers it after awake time short of the idle window's", awake: 0, baseline: 4, moves: "down" },
    { name: "keeps it when the two agree", awake: 3, baseline: 3, moves: "nowhere" },
  ])("$name", ({ awake, baseline, moves }) => {
    const next = spendBudget(0.35, { awakeMs: awake * SLOT_MS, baselineAwakeMs: baseline * SLOT_MS }, config);
    if (moves === "up") expect(next).toBeGreaterThan(0.35);
    if (moves === "down") expect(next).toBeLessThan(0.35);
    if (moves === "nowhere") expect(next).toBe(0.35);
  });

  it("moves by the configured log-odds per slot overspent, so a spend and its repayment cancel", () => {
    const logit = (p: number) => Math.log(p / (1 - p));
    const up = spendBudget(0.35, { awakeMs: 2 * SLOT_MS, baselineAwakeMs: 0 }, config);
    expect(logit(up) - logit(0.35)).toBeCloseTo(2 * 0.05, 9);
    expect(spendBudget(up, { awakeMs: 0, baselineAwakeMs: 2 * SLOT_MS }, config)).toBeCloseTo(0.35, 9);
  });

  it("aims a little under the idle window's awake time: the same awake time is a small overspend", () => {
    const aimed = forecastConfig({ activityProbability: 0.35, budgetGain: 0.05, budgetShare: 0.99 });
    const next = spendBudget(0.35, { awakeMs: 100 * SLOT_MS, baselineAwakeMs: 100 * SLOT_MS }, aimed);
    const logit = (p: number) => Math.log(p / (1 - p));
    expect(logit(next) - logit(0.35)).toBeCloseTo(0.05 * 100 * 0.01, 9);
  });

  it.each([
    { name: "a long overspend", threshold: 0.35, awake: 10_000, baseline: 0, expected: 0.9 },
    { name: "a long underspend", threshold: 0.35, awake: 0, baseline: 10_000, expected: 0.1 },
    { name: "a threshold out of bounds", threshold: 5, awake: 0, baseline: 0, expected: 0.9 },
    {
      name: "a threshold that is not a number",
      threshold: Number.NaN,
      awake: 0,
      baseline: 0,
      expected: 0.35,
    },
    { name: "a spend that is not a number", threshold: 0.5, awake: Number.NaN, baseline: 0, expected: 0.5 },
  ])("stays within its bounds after $name", ({ threshold, awake, baseline, expected }) => {
    const next = spendBudget(
      threshold,
      { awakeMs: awake * SLOT_MS, baselineAwakeMs: baseline * SLOT_MS },
      config,
    );
    expect(next).toBeCloseTo(expected, 9);
  });
});

describe("what an idle window alone keeps awake", () => {
  const from = 1_000 * MIN;
  it.each([
    { name: "nothing without any activity", activity: [null], expected: 0 },
    {
      name: "nothing once the window after the last activity has passed",
      activity: [from - 40 * MIN],
      expected: 0,
    },
    { name: "the rest of the window after earlier activity", activity: [from - 25 * MIN], expected: 5 },
    { name: "from activity within the stretch to its end", activity: [from + 6 * MIN], expected: 4 },
    {
      name: "the union of the windows of the activity before and within the stretch",
      activity: [from - 28 * MIN, from + 5 * MIN],
      expected: 7,
    },
    {
      name: "the same window once, however often it is given",
      activity: [from - 25 * MIN, from - 25 * MIN],
      expected: 5,
    },
  ])("is $name", ({ activity, expected }) => {
    expect(idleWindowAwakeMs(from, from + 10 * MIN, activity, 30 * MIN)).toBe(expected * MIN);
  });
});
