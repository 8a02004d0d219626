import { describe, expect, it } from "vitest";
import { annotations } from "../../api/keys.ts";
import type { RightsizingPolicy, RightsizingPolicySpec } from "../../api/rightsizingpolicy.ts";
import { resolveModes } from "../../rightsizing/modes.ts";
import { decidePolicyStatus, policyReach, SeenValues, selectionInputs } from "./policy-status.ts";

const ready = { metricsSourceHealthy: true, enoughHistory: true, inPlaceResizeAvailable: true };
const now = "2026-11-30T10:00:00.000Z";
const later = "2026-11-30T11:00:00.000Z";

const policy = (name: string, spec: Partial<RightsizingPolicySpec>): RightsizingPolicy => ({
  apiVersion: "napwake.dev/v1alpha1",
  kind: "RightsizingPolicy",
  metadata: { name, generation: 2 },
  spec: { selector: {}, ...spec },
});

const web = (name: string, annotations: Record<string, string> = {}) => ({
  kind: "Deployment" as const,
  namespace: "shop",
  name,
  labels: { tier: "web" },
  annotations,
});
const batch = (name: string) => ({ kind: "StatefulSet" as const, namespace: "shop", name, labels: {} });

/** Each policy's reach over `workloads`, resolved as the controller resolves them. */
function reachOf(policies: RightsizingPolicy[], workloads: ReturnType<typeof web | typeof batch>[]) {
  return policyReach(
    workloads.map((workload) =>
      resolveModes({
        workload,
        namespaceLabels: { "kubernetes.io/metadata.name": "shop" },
        policies,
        readiness: ready,
      }),
    ),
  );
}

describe("a RightsizingPolicy's reach", () => {
  const webOnly = policy("web", {
    priority: 10,
    selector: { workloadSelector: { matchLabels: { tier: "web" } } },
    cpu: { mode: "auto-patch" },
  });
  const everything = policy("everything", { memory: { mode: "audit" } });

  it.each([
    {
      name: "governs every workload it selects when nothing else sets its resources",
      policies: [webOnly, everything],
      want: { web: { selected: 2, governed: 2 }, everything: { selected: 3, governed: 3 } },
    },
    {
      name: "keeps governing through the resource only it sets, where a higher-priority policy takes the other",
      policies: [webOnly, policy("everything", { memory: { mode: "audit" }, cpu: { mode: "audit" } })],
      // On the web workloads CPU goes to "web"; memory, set by "everything" alone, keeps it governing there.
      want: { web: { selected: 2, governed: 2 }, everything: { selected: 3, governed: 3 } },
    },
    {
      name: "governs nothing when a higher-priority policy sets all it sets",
      policies: [webOnly, policy("low-cpu", { selector: { kinds: ["Deployment"] }, cpu: { mode: "off" } })],
      want: { web: { selected: 2, governed: 2 }, "low-cpu": { selected: 2, governed: 0 } },
    },
    {
      name: "governs the workloads whose apply strategy it gives, though it sets no resource",
      policies: [policy("rollouts", { priority: 20, strategy: { type: "rollout" } }), webOnly],
      want: { rollouts: { selected: 3, governed: 3 }, web: { selected: 2, governed: 2 } },
    },
  ])("$name", ({ policies, want }) => {
    const reach = reachOf(policies, [web("api"), web("shop"), batch("jobs")]);
    expect(Object.fromEntries(reach)).toEqual(want);
  });

  it("still governs a workload whose annotation sets the mode: its bounds apply", () => {
    const reach = reachOf([webOnly], [web("api", { [annotations.cpuMode]: "off" })]);
    expect(reach.get("web")).toEqual({ selected: 1, governed: 1 });
  });
});

describe("a RightsizingPolicy's status", () => {
  const p = policy("web", { cpu: { mode: "audit" } });

  it.each([
    {
      name: "is in effect while it governs every workload it selects",
      reach: { selected: 3, governed: 3 },
      want: { status: "True", reason: "Governing", message: "governs the 3 workloads it selects" },
    },
    {
      name: "names the share it governs when others take some",
      reach: { selected: 3, governed: 1 },
      want: {
        status: "True",
        reason: "Governing",
        message: expect.stringMatching(/^governs 1 of the 3 workloads/),
      },
    },
    {
      name: "says it is outranked, and how to govern, when it governs none it selects",
      reach: { selected: 1, governed: 0 },
      want: { status: "False", reason: "Outranked", message: expect.stringMatching(/raise spec.priority/) },
    },
    {
      name: "says to check the selector when it selects nothing",
      reach: undefined,
      want: { status: "False", reason: "NoWorkloads", message: expect.stringMatching(/check spec.selector/) },
    },
  ])("$name", ({ reach, want }) => {
    const status = decidePolicyStatus(p, reach, now);
    expect(status.observedGeneration).toBe(2);
    expect(status.matchedWorkloads).toBe(reach?.governed ?? 0);
    expect(status.conditions).toEqual([
      { type: "InEffect", ...want, lastTransitionTime: now, observedGeneration: 2 },
    ]);
  });

  it("keeps the condition's transition time until it flips", () => {
    const first = decidePolicyStatus(p, { selected: 2, governed: 2 }, now);
    const again = decidePolicyStatus({ ...p, status: first }, { selected: 5, governed: 4 }, later);
    expect(again.conditions?.[0]?.lastTransitionTime).toBe(now);
    expect(again.matchedWorkloads).toBe(4);
    const flipped = decidePolicyStatus({ ...p, status: again }, { selected: 5, governed: 0 }, later);
    expect(flipped.conditions?.[0]).toMatchObject({ status: "False", lastTransitionTime: later });
  });
});

describe("telling the changes that can move a policy's reach from the others", () => {
  it("reports a first sighting, a new value and a deletion, not a repeat", () => {
    const seen = new SeenValues();
    expect(seen.changed("k", "1")).toBe(true);
    expect(seen.changed("k", "1")).toBe(false);
    expect(seen.changed("k", "2")).toBe(true);
    expect(seen.changed("k", undefined)).toBe(true);
    expect(seen.changed("k", undefined)).toBe(false);
  });

  type Meta = { labels?: Record<string, string>; annotations?: Record<string, string> };
  it.each<{ name: string; other: Meta; changes: boolean }>([
    { name: "a new label", other: { labels: { tier: "web", team: "a" } }, changes: true },
    {
      name: "a mode annotation",
      other: { labels: { tier: "web" }, annotations: { [annotations.cpuMode]: "off" } },
      changes: true,
    },
    {
      name: "another annotation",
      other: { labels: { tier: "web" }, annotations: { note: "x" } },
      changes: false,
    },
  ])("counts $name as a change of what selection reads: $changes", ({ other, changes }) => {
    const before = selectionInputs({ labels: { tier: "web" } });
    expect(selectionInputs(other) !== before).toBe(changes);
  });
});
