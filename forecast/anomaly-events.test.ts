// The ActivityAnomaly a 0/1 series raises, against the advice decisions read from the same forecast.
import { describe, expect, it } from "vitest";
import {
  type AnomalyEvent,
  createEngine,
  decide,
  type ForecastEngine,
  forecastConfig,
  type GridPoint,
  isActive,
  observe,
  SLOT_MS,
} from "./index.ts";

const config = forecastConfig();

/** Sessions on a 0/1 series, as the operator learns them: activity that tends to go on once started. */
function sessions(days: number, seed: number, startSlot: number): GridPoint[] {
  let state = seed;
  const random = () => {
    state = (state * 16807) % 2147483647;
    return state / 2147483647;
  };
  let on = false;
  return Array.from({ length: days * 96 }, (_, i) => {
    const daySlot = i % 96;
    const busy = daySlot >= 32 && daySlot < 72 && Math.floor(i / 96) % 7 < 5;
    on = on ? random() < 0.85 : random() < (busy ? 0.3 : 0.03);
    return { slot: startSlot + i, value: on ? 1 : 0 };
  });
}

/** The anomalies of activity over 30 days of sessions, each with the engine that judged it. */
function activityAnomalies(seed: number): { event: AnomalyEvent; before: ForecastEngine; slot: number }[] {
  let engine = createEngine(config);
  const seen = [];
  for (const point of sessions(30, seed, Date.UTC(2024, 0, 1) / SLOT_MS)) {
    const step = observe(engine, point, config);
    for (const event of step.events) {
      if (event.kind === "anomaly" && event.direction === "above")
        seen.push({ event, before: engine, slot: point.slot });
    }
    engine = step.engine;
  }
  return seen;
}

describe("activity anomalies on a 0/1 series", () => {
  const seen = [1, 2, 3].flatMap(activityAnomalies);

  it("are raised at all (the check below is not empty)", () => {
    expect(seen.length).toBeGreaterThan(5);
  });

  it("are never raised for a quarter hour the trusted forecast expected activity in (a veto's or a pre-wake's)", () => {
    const contradicted = seen.filter(({ before, slot }) => {
      if (!isActive(before.phase)) return false;
      const decision = decide(before, { nowMs: slot * SLOT_MS + 60_000, idleWindowMs: 15 * 60_000 }, config);
      return decision.nextActivityAtMs === slot * SLOT_MS;
    });
    expect(contradicted.map(({ event }) => new Date(event.atMs).toISOString())).toEqual([]);
  });

  it("never say the forecast expected less than no activity", () => {
    const shown = seen.map(({ event }) => Math.min(event.expected, event.lower, event.upper));
    expect(shown.filter((v) => v < 0)).toEqual([]);
  });
});
