import type { V1Deployment } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { annotations } from "../../api/keys.ts";
import type { ManagedWorkload } from "../../api/managedworkload.ts";
import { knownActivity } from "./controller.ts";

const now = Date.parse("2026-03-02T10:00:00Z");
const iso = (ms: number) => new Date(ms).toISOString();
const mw = (lastActivityMs: number): ManagedWorkload => ({
  apiVersion: "napwake.dev/v1alpha1",
  kind: "ManagedWorkload",
  metadata: { name: "web.deployment", namespace: "shop" },
  spec: { targetRef: { kind: "Deployment", name: "web" } },
  status: { lastActivity: { time: iso(lastActivityMs), source: "cpu" } },
});
const target = (activityMs: number): V1Deployment => ({
  metadata: { annotations: { [annotations.activity]: iso(activityMs) } },
});

describe("the activity the awake budget accounts from", () => {
  it.each([
    { name: "the latest stamp", stampMs: now - 60_000, known: now - 60_000 },
    {
      name: "a stamp a little ahead, as stamped (the forecast counts it when first known)",
      stampMs: now + 60_000,
      known: now + 60_000,
    },
    {
      name: "not a stamp far ahead, which would hide the real activity",
      stampMs: now + 86_400_000,
      known: now - 600_000,
    },
  ])("takes $name", ({ stampMs, known }) => {
    expect(knownActivity(mw(now - 600_000), target(stampMs), now)).toBe(known);
  });
});
