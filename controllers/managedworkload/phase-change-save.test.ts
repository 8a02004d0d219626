// A phase change shows in status.prediction.phase and goes out as an Event at once; the state that status
// carries must say the same, or a restart within the hour restores the phase from before and announces the
// change again once the engine gets there.
import { describe, expect, it } from "vitest";
import type { ManagedWorkload } from "../../api/managedworkload.ts";
import {
  createEngine,
  decodeEngine,
  encodeEngine,
  forecastConfig,
  observeAll,
  slotOf,
} from "../../forecast/index.ts";
import { dailyPatternPoints } from "./forecast-fixtures.ts";
import { ForecastBook, type PredictionStatus } from "./forecasting.ts";

const minute = 60_000;
const iso = (ms: number) => new Date(ms).toISOString();

/** Traffic 10:00-12:00 daily from 2026-11-15, learned up to 2026-11-18 23:30: in shadow, two slots from trust. */
function shadowState(): { state: string; savedAtMs: number } {
  const config = forecastConfig();
  const savedAtMs = Date.parse("2026-11-18T23:30:00Z");
  const points = dailyPatternPoints(Date.parse("2026-11-23T00:00:00Z"), 8).filter(
    (p) => p.slot < slotOf(savedAtMs),
  );
  const engine = observeAll(createEngine(config), points, config).engine;
  const encoded = encodeEngine(engine);
  if (!encoded.ok) throw new Error(encoded.error.message);
  return { state: encoded.value, savedAtMs };
}

function awake(prediction: PredictionStatus | undefined): ManagedWorkload {
  return {
    apiVersion: "napwake.dev/v1alpha1",
    kind: "ManagedWorkload",
    metadata: { name: "web.deployment", namespace: "shop", uid: "u1" },
    spec: { targetRef: { kind: "Deployment", name: "web" }, forecast: { awakeBudget: "None" } },
    status: { phase: "Awake", ...(prediction ? { prediction } : {}) },
  };
}

describe("a phase change between two hourly saves", () => {
  const lastActivity = Date.parse("2026-11-18T11:59:00Z");

  /** Looks every 30 s from the save until `untilMs`; a new book (a restart) at each time in `restarts`. */
  function run(untilMs: number, restarts: number[] = []) {
    const { state, savedAtMs } = shadowState();
    let book = new ForecastBook();
    let prediction: PredictionStatus | undefined = {
      phase: "shadow",
      confidence: 0,
      state,
      savedAt: iso(savedAtMs),
    };
    const changes: string[] = [];
    const phases: { at: number; phase: string | undefined }[] = [];
    for (let t = savedAtMs; t <= untilMs; t += 30_000) {
      if (restarts.includes(t)) book = new ForecastBook();
      const look = book.look("k", awake(prediction), t, 30 * minute, lastActivity);
      prediction = look.prediction;
      phases.push({ at: t, phase: prediction?.phase });
      changes.push(...look.notices.filter((n) => n.reason === "ForecastPhaseChanged").map((n) => n.note));
      book.sent("k", look.notices);
    }
    return { prediction, changes, phases };
  }

  // The engine turns trusted when the 23:45 slot closes, at midnight; the next hourly save is due at 00:30.
  const midnight = Date.parse("2026-11-19T00:00:00Z");

  it("saves the state with the status that shows the new phase: status.prediction.state says the phase shown", () => {
    const { prediction, changes } = run(midnight + 10 * minute);
    expect(prediction?.phase).toBe("active-daily");
    expect(changes).toHaveLength(1);
    const saved = decodeEngine(prediction?.state ?? "", forecastConfig());
    if (!saved.ok) throw new Error(saved.error.message);
    expect(saved.value.phase).toBe(prediction?.phase);
  });

  it("keeps the phase across a restart ten minutes after it, and announces it once", () => {
    const restartAt = midnight + 10 * minute;
    const { changes, phases } = run(midnight + 3 * 60 * minute, [restartAt]);
    expect(phases.find((p) => p.at === restartAt)?.phase).toBe("active-daily");
    // "forecast shadow -> active-daily" once, not a second time after the restart.
    expect(changes).toHaveLength(1);
  });
});
