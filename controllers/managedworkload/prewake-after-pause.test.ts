// The awake budget steers the chance threshold while a workload sits paused: a pause the forecast allowed must not
// be undone, minutes later, by a pre-wake for a quarter hour the pause was judged on.
import { describe, expect, it } from "vitest";
import type { ManagedWorkload } from "../../api/managedworkload.ts";
import { encodeEngine } from "../../forecast/codec.ts";
import { forecastConfig } from "../../forecast/config.ts";
import { createEngine, observeAll } from "../../forecast/engine.ts";
import { SLOT_MS } from "../../forecast/grid.ts";
import { decideClock } from "./activity-clock.ts";
import { ForecastBook } from "./forecasting.ts";

const config = forecastConfig();
const monday = Date.parse("2026-11-02T00:00:00Z") / SLOT_MS;

/** Three weeks with activity 10:00-12:00 every third day, then a quiet Monday: about a 31% chance on Tuesday. */
function savedState(): string {
  const first = monday - 21 * 96;
  const points = Array.from({ length: 21 * 96 + 96 + 40 }, (_, i) => {
    const hour = Math.floor((i % 96) / 4);
    const day = Math.floor(i / 96);
    return { slot: first + i, value: day < 21 && day % 3 === 0 && hour >= 10 && hour < 12 ? 1 : 0 };
  });
  const engine = observeAll(createEngine(config), points, config).engine;
  expect(engine.phase).toMatch(/^active/);
  const encoded = encodeEngine(engine);
  if (!encoded.ok) throw new Error(encoded.error.message);
  return encoded.value;
}

describe("awake budget and the pause the forecast allowed", () => {
  it("does not pre-wake, minutes after a pause, for a quarter hour the pause had judged quiet", () => {
    const state = savedState();
    const activityMs = Date.parse("2026-11-03T10:00:00Z");
    const book = new ForecastBook();
    let phase = "Awake";
    let pausedAt: number | null = null;
    let woken: { at: number; reason: string } | null = null;
    let windowAtPauseMs = 0;
    for (let t = activityMs + 30_000; t < activityMs + 2 * 3_600_000 && !woken; t += 30_000) {
      const mw: ManagedWorkload = {
        apiVersion: "napwake.dev/v1alpha1",
        kind: "ManagedWorkload",
        metadata: { name: "w", namespace: "n", uid: "u", creationTimestamp: "2026-10-01T00:00:00Z" },
        spec: { targetRef: { kind: "Deployment", name: "w" }, idle: { window: "1h" } },
        status: { phase, prediction: { phase: "active-weekly", confidence: 0.8, state } },
      } as ManagedWorkload;
      const look = book.look("k", mw, t, 60 * 60_000, activityMs, true);
      const advice = look.advice;
      const out = decideClock({
        nowMs: t,
        lastActivityMs: activityMs,
        awakeSinceMs: null,
        pausedSinceMs: pausedAt,
        paused: phase === "Paused",
        idleWindowMs: advice?.idleWindowMs ?? 60 * 60_000,
        forecast: advice,
      });
      if (out.action === "pause") {
        phase = "Paused";
        pausedAt = t;
        windowAtPauseMs = advice?.idleWindowMs ?? 0;
      } else if (out.action === "wake") woken = { at: t, reason: out.reason };
    }
    expect(pausedAt).not.toBeNull();
    // Judged quiet over its idle window and the pre-wake lead: the first slot after that is pre-woken for, a lead
    // before it, so never within the idle window of the pause, and never late.
    expect(woken).not.toBeNull();
    expect(woken?.at).toBeGreaterThanOrEqual((pausedAt ?? 0) + windowAtPauseMs);
    expect(woken?.reason).toMatch(/woken 10m before it$/);
  });
});
