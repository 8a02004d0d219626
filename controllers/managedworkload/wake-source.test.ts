import { describe, expect, it } from "vitest";
import type { ActivitySource, ManagedWorkloadStatus } from "../../api/managedworkload.ts";
import { wakeSource } from "./controller.ts";

const wokenFor = (reason: string, source?: ActivitySource): ManagedWorkloadStatus => ({
  conditions: [
    {
      type: "Paused",
      status: "False",
      reason,
      message: "woken",
      lastTransitionTime: "2026-11-23T09:00:00.000Z",
    },
  ],
  ...(source ? { lastActivity: { time: "2026-11-23T08:00:00.000Z", source } } : {}),
});

describe("wakeSource: what the wakes metric counts a wake under", () => {
  it.each([
    { name: "a pre-wake is the forecast's", status: wokenFor("PreWake", "cpu"), source: "forecast" },
    {
      name: "a wake for dry-run is dry-run's, not the last activity's",
      status: wokenFor("DryRun", "cpu"),
      source: "dry-run",
    },
    { name: "a resume is its activity's", status: wokenFor("Resumed", "request"), source: "request" },
    { name: "a resume with no activity known is unknown", status: wokenFor("Resumed"), source: "unknown" },
  ])("$name", ({ status, source }) => {
    expect(wakeSource(status)).toBe(source);
  });
});
