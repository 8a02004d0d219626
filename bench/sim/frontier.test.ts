import { describe, expect, it } from "vitest";
import { forecastConfig } from "../../forecast/index.ts";
import { generateTrace, SYNTHETIC_PROFILES } from "../traces/synthetic.ts";
import {
  bestWithinAwakeBudget,
  type FrontierPoint,
  onGridEdge,
  pointOf,
  replayFrontier,
  settingsGrid,
} from "./frontier.ts";
import { replayPolicy } from "./replay.ts";
import { everyTwoHours } from "./test-traces.ts";

const MIN = 60_000;
const START = Date.UTC(2024, 0, 1);

const point = (coldStartChange: number, awakeChange: number, idleWindowMinutes = 10): FrontierPoint => ({
  activityProbability: 0.3,
  idleWindowMinutes,
  coldStartChange,
  awakeChange,
});

describe("best point within the awake budget", () => {
  it.each<{ name: string; points: FrontierPoint[]; best: FrontierPoint | null }>([
    {
      name: "picks the fewest cold starts among points awake no longer than the baseline",
      points: [point(-0.6, 0.02), point(-0.4, -0.01), point(-0.45, 0)],
      best: point(-0.45, 0),
    },
    { name: "finds none when every point is awake longer", points: [point(-0.7, 0.01)], best: null },
    { name: "finds none on an empty grid", points: [], best: null },
    {
      name: "keeps the first of equal points",
      points: [point(-0.5, -0.1, 3), point(-0.5, -0.2, 5)],
      best: point(-0.5, -0.1, 3),
    },
  ])("$name", ({ points, best }) => {
    expect(bestWithinAwakeBudget(points)).toEqual(best);
  });
});

describe("grid edges", () => {
  it.each([
    { setting: { activityProbability: 0.3, idleWindowMinutes: 10 }, edge: false },
    { setting: { activityProbability: 0.2, idleWindowMinutes: 10 }, edge: true },
    { setting: { activityProbability: 0.3, idleWindowMinutes: 25 }, edge: true },
  ])("says whether $setting lies on the border of the grid", ({ setting, edge }) => {
    expect(onGridEdge(setting, [0.2, 0.3, 0.4], [5, 10, 25])).toBe(edge);
  });
});

describe("frontier replay", () => {
  const trace = everyTwoHours(START);
  const policy = { name: "c", idleWindowMs: 15 * MIN, useForecast: true };

  it("crosses every chance with every idle window", () => {
    const grid = settingsGrid([0.2, 0.3], [5, 10, 15]);
    expect(grid).toHaveLength(6);
    expect(grid).toContainEqual({ activityProbability: 0.3, idleWindowMinutes: 15 });
  });

  it("measures each setting against the baseline, with and without the true chances", () => {
    const baseline = replayPolicy(trace, policy, forecastConfig());
    const settings = settingsGrid([0.35], [5, 15]);
    const frontier = replayFrontier(trace, policy, baseline, () => 0.5, settings);
    const [short, same] = frontier.engine;
    expect(same).toEqual(pointOf(settings[1] as (typeof settings)[1], baseline, baseline));
    expect(same?.awakeChange).toBe(0);
    // A shorter idle window keeps the workload awake less after each isolated request.
    expect(short?.awakeChange).toBeLessThan(0);
    expect(frontier.reference).toHaveLength(2);
  });

  it("replays the reference with the true chances once the forecast is trusted", () => {
    const office = SYNTHETIC_PROFILES[0] as (typeof SYNTHETIC_PROFILES)[0];
    const week = generateTrace({ ...office, days: 8 });
    const baseline = replayPolicy(
      week,
      { name: "a", idleWindowMs: 30 * MIN, useForecast: false },
      forecastConfig(),
    );
    const frontier = replayFrontier(week, policy, baseline, () => 0.9, settingsGrid([0.35], [10]));
    // Activity said certain at every hour vetoes every pause once the forecast is trusted (from day 4).
    expect(frontier.reference[0]?.awakeChange).toBeGreaterThan((frontier.engine[0]?.awakeChange ?? 0) + 0.3);
  });

  it("leaves the reference out when no true chances are known", () => {
    const baseline = replayPolicy(trace, policy, forecastConfig());
    expect(replayFrontier(trace, policy, baseline, null, settingsGrid([0.35], [5])).reference).toEqual([]);
  });
});
