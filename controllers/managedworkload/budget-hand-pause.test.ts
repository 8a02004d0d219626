// The awake budget credits the forecast with awake time its shorter idle window saved. A pause by hand saves the
// same time after the last activity, but spec.idle.window alone would have paused at the request too: the credit
// is not the forecast's to spend on vetoes and pre-wakes elsewhere.
import { describe, expect, it } from "vitest";
import type { ManagedWorkload } from "../../api/managedworkload.ts";
import { dailyPatternState } from "./forecast-fixtures.ts";
import { ForecastBook, type PredictionStatus } from "./forecasting.ts";

const minute = 60_000;
const pausedAt = Date.parse("2026-11-23T11:50:00Z");
const lastActivity = pausedAt - minute;
const state = dailyPatternState(pausedAt, 21); // traffic 10:00-12:00 daily: trusted

function pausedWith(reason: "Requested" | "Idle", prediction: PredictionStatus | undefined): ManagedWorkload {
  return {
    apiVersion: "napwake.dev/v1alpha1",
    kind: "ManagedWorkload",
    metadata: { name: "web.deployment", namespace: "shop", uid: "u1" },
    // The default budget: trusted window 15m, spec.idle.window 30m.
    spec: { targetRef: { kind: "Deployment", name: "web" }, idle: { window: "30m" } },
    status: {
      phase: "Paused",
      pausedFrom: 2,
      pausedAt: new Date(pausedAt).toISOString(),
      lastActivity: { time: new Date(lastActivity).toISOString(), source: "request" },
      conditions: [
        {
          type: "Paused",
          status: "True",
          reason,
          message:
            reason === "Requested"
              ? "paused from 2 replicas: kubectl napwake pause at 2026-11-23T11:50:00Z"
              : "paused",
          lastTransitionTime: new Date(pausedAt).toISOString(),
        },
      ],
      ...(prediction ? { prediction } : {}),
    },
  };
}

/** Looks every 5 minutes (the paused check interval) for an hour and a minute: the threshold shown with the hourly save. */
function thresholdAfterAnHour(reason: "Requested" | "Idle"): {
  threshold: number | undefined;
  phase: string | undefined;
} {
  const book = new ForecastBook();
  let prediction: PredictionStatus | undefined = { phase: "x", confidence: 0, state };
  for (let t = pausedAt; t <= pausedAt + 61 * minute; t += 5 * minute) {
    prediction = book.look("k", pausedWith(reason, prediction), t, 30 * minute, lastActivity).prediction;
  }
  return { threshold: prediction?.activityThreshold, phase: prediction?.phase };
}

describe("the awake budget and a pause by hand", () => {
  it("credits a pause the forecast's shorter window made: the threshold falls", () => {
    const { threshold, phase } = thresholdAfterAnHour("Idle");
    expect(phase).toMatch(/^active/);
    expect(threshold).toBeLessThan(0.35);
  });

  it("credits the forecast nothing for a pause made by hand, which the idle window alone would have made too", () => {
    const { threshold, phase } = thresholdAfterAnHour("Requested");
    expect(phase).toMatch(/^active/);
    expect(threshold).toBe(0.35);
  });
});
