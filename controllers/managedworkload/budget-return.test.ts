// The awake budget charges the forecast only for awake time the idle window alone would not have spent. A workload
// back under Napwake's watch (let go and managed again, scaled to zero outside it and up) gets a full idle window
// from its return, whatever activity came before: that window is the clock's, not the forecast's.
import { describe, expect, it } from "vitest";
import type { ManagedWorkload } from "../../api/managedworkload.ts";
import { dailyPatternState } from "./forecast-fixtures.ts";
import { ForecastBook, type PredictionStatus } from "./forecasting.ts";

const minute = 60_000;
const returnedAt = Date.parse("2026-11-23T09:45:00Z");
const state = dailyPatternState(returnedAt, 21); // traffic 10:00-12:00 daily: trusted

function returned(prediction: PredictionStatus): ManagedWorkload {
  return {
    apiVersion: "napwake.dev/v1alpha1",
    kind: "ManagedWorkload",
    metadata: {
      name: "web.deployment",
      namespace: "shop",
      uid: "u1",
      creationTimestamp: new Date(returnedAt - 180 * minute).toISOString(),
    },
    spec: { targetRef: { kind: "Deployment", name: "web" }, idle: { window: "30m" } },
    status: {
      phase: "Awake",
      prediction,
      conditions: [
        {
          type: "Paused",
          status: "False",
          reason: "Active",
          message: "the workload is awake",
          lastTransitionTime: new Date(returnedAt).toISOString(),
        },
      ],
    },
  };
}

/** Looks every 30 s (the awake check interval) for an hour and a minute: the threshold shown with the hourly save. */
function thresholdAfterAnHour(knownActivityMs: number | null): number | undefined {
  const book = new ForecastBook();
  let prediction: PredictionStatus = { phase: "x", confidence: 0, state };
  for (let t = returnedAt; t <= returnedAt + 61 * minute; t += minute / 2) {
    prediction =
      book.look("k", returned(prediction), t, 30 * minute, knownActivityMs).prediction ?? prediction;
  }
  return prediction.activityThreshold;
}

describe("the awake budget after a return under Napwake's watch", () => {
  it("charges the forecast nothing more for the idle window after the return when older activity is known", () => {
    const noneKnown = thresholdAfterAnHour(null);
    expect(noneKnown).toBeDefined();
    expect(thresholdAfterAnHour(returnedAt - 180 * minute)).toBe(noneKnown);
  });
});
