import { describe, expect, it } from "vitest";
import { findCondition } from "../../api/conditions.ts";
import { annotations, labels } from "../../api/keys.ts";
import type {
  ManagedWorkload,
  ManagedWorkloadSpec,
  ManagedWorkloadStatus,
} from "../../api/managedworkload.ts";
import { statusChanged } from "../own-status.ts";
import { activityKnown, decide } from "./decide.ts";
import type { ActivitySample, Observation, TargetState } from "./observation.ts";

const t0 = Date.parse("2026-03-02T10:00:00Z");
const min = 60_000;
const iso = (ms: number) => new Date(ms).toISOString();

function mw(
  spec: Partial<ManagedWorkloadSpec> = {},
  status: ManagedWorkloadStatus = {},
  meta: Partial<ManagedWorkload["metadata"]> = {},
): ManagedWorkload {
  return {
    apiVersion: "napwake.dev/v1alpha1",
    kind: "ManagedWorkload",
    metadata: {
      name: "web.deployment",
      namespace: "shop",
      generation: 1,
      creationTimestamp: iso(t0 - 120 * min),
      ...meta,
    },
    spec: {
      targetRef: { kind: "Deployment", name: "web" },
      idle: { window: "30m", cpuThreshold: "50m" },
      ...spec,
    },
    status,
  };
}

function target(
  replicas: number,
  annotationsOn: Record<string, string> = {},
  labelsOn: Record<string, string> = {},
): TargetState {
  return {
    kind: "Deployment",
    name: "web",
    namespace: "shop",
    uid: "u1",
    replicas,
    labels: labelsOn,
    annotations: annotationsOn,
    managedFields: [],
  };
}

const idle = (atMs: number): ActivitySample => ({ atMs, cpuCores: 0.01, queries: [], errors: [] });
const busy = (atMs: number): ActivitySample => ({ atMs, cpuCores: 0.4, queries: [], errors: [] });

const scaledObjectAutoscalers = [{ kind: "ScaledObject" as const, name: "web" }];
const unheldScaledObject = {
  apiVersion: "keda.sh/v1alpha1",
  kind: "ScaledObject",
  metadata: { name: "web", namespace: "shop" },
  spec: { scaleTargetRef: { name: "web" } },
};
/** The decision on a `kubectl napwake resume` of a workload paused from 3 that `scaledObject` scales. */
function resumedWith(scaledObject: typeof unheldScaledObject) {
  return decide(
    observe({
      mw: mw({}, pausedStatus(t0 - 60 * min), {
        annotations: { [annotations.resumeRequested]: iso(t0 - 1000) },
      }),
      target: target(0, { [annotations.pausedFrom]: "3" }),
      autoscalers: scaledObjectAutoscalers,
      scaledObjects: [scaledObject],
    }),
  );
}

/** The ScaledObject held at zero by `manager` (Napwake's is "napwake"). */
const heldScaledObject = (manager: string) => ({
  ...unheldScaledObject,
  metadata: {
    ...unheldScaledObject.metadata,
    resourceVersion: "7",
    annotations: { "autoscaling.keda.sh/paused-replicas": "0" },
    managedFields: [
      {
        manager,
        operation: "Apply",
        fieldsV1: { "f:metadata": { "f:annotations": { "f:autoscaling.keda.sh/paused-replicas": {} } } },
      },
    ],
  },
});

function observe(over: Partial<Observation> = {}): Observation {
  return {
    nowMs: t0,
    mw: mw(),
    target: target(3),
    namespace: { labels: {}, annotations: {} },
    existingOwner: null,
    autoscalers: [],
    scaledObjects: [],
    activity: idle(t0),
    forecast: null,
    settings: {
      operatorNamespace: "napwake-system",
      checkIntervalMs: 30_000,
      pausedCheckIntervalMs: 300_000,
    },
    fieldManager: "napwake",
    ...over,
  };
}

const pausedCondition = (d: ReturnType<typeof decide>) =>
  d.status.conditions?.find((c) => c.type === "Paused");
const awakeFor = (minutes: number): ManagedWorkloadStatus => ({
  lastActivity: { time: iso(t0 - minutes * min), source: "cpu" },
});
/** `status` with its Paused condition `state` for `reason` since `sinceMs`. */
const withPaused = (
  status: ManagedWorkloadStatus,
  state: "True" | "False",
  reason: string,
  message: string,
  sinceMs: number,
): ManagedWorkloadStatus => ({
  ...status,
  conditions: [{ type: "Paused", status: state, reason, message, lastTransitionTime: iso(sinceMs) }],
});
const pausedStatus = (pausedAtMs: number): ManagedWorkloadStatus => ({
  phase: "Paused",
  pausedFrom: 3,
  pausedAt: iso(pausedAtMs),
});

describe("decide: the pause and wake lifecycle", () => {
  it.each([
    {
      name: "pauses after the idle window when the forecast is quiet: record the count, then scale to zero",
      obs: observe({ mw: mw({}, awakeFor(31)) }),
      writes: [
        { kind: "record-paused-from", replicas: 3 },
        { kind: "scale", from: 3, to: 0 },
      ],
      phase: "Paused",
      event: "Paused",
    },
    {
      name: "stays awake inside the idle window",
      obs: observe({ mw: mw({}, awakeFor(10)) }),
      writes: [],
      phase: "Awake",
      event: undefined,
    },
    {
      name: "counts CPU above the threshold as activity, which restarts the idle window",
      obs: observe({ mw: mw({}, awakeFor(45)), activity: busy(t0) }),
      writes: [],
      phase: "Awake",
      event: undefined,
    },
    {
      name: "does not pause when the forecast vetoes it, and says so once per idle stretch",
      obs: observe({
        mw: mw({}, awakeFor(45)),
        forecast: { vetoPause: true, prewakeAtMs: null, reason: "traffic forecast at 10:20" },
      }),
      writes: [],
      phase: "Awake",
      event: "PauseVetoed",
    },
    {
      name: "pauses after the trusted forecast's shorter idle window, inside the workload's own",
      obs: observe({
        mw: mw({}, awakeFor(20)),
        forecast: { vetoPause: false, prewakeAtMs: null, reason: "quiet", idleWindowMs: 15 * min },
      }),
      writes: [
        { kind: "record-paused-from", replicas: 3 },
        { kind: "scale", from: 3, to: 0 },
      ],
      phase: "Paused",
      event: "Paused",
    },
    {
      name: "keeps the workload's own idle window without forecast advice",
      obs: observe({ mw: mw({}, awakeFor(20)) }),
      writes: [],
      phase: "Awake",
      event: undefined,
    },
    {
      name: "does not pause when pod CPU is unknown, and says why once",
      obs: observe({
        mw: mw({}, awakeFor(45)),
        activity: { atMs: t0, cpuCores: null, queries: [], errors: ["metrics.k8s.io unavailable"] },
      }),
      writes: [],
      phase: "Awake",
      event: "PauseSkipped",
    },
    {
      name: "does not pause when an activity query failed",
      obs: observe({
        mw: mw({}, awakeFor(45)),
        activity: {
          atMs: t0,
          cpuCores: 0,
          queries: [{ name: "queue", active: null, error: "timeout" }],
          errors: [],
        },
      }),
      writes: [],
      phase: "Awake",
      event: "PauseSkipped",
    },
    {
      name: "pauses on kubectl napwake pause even inside the idle window",
      obs: observe({
        mw: mw({}, awakeFor(1), { annotations: { [annotations.pauseRequested]: iso(t0 - 5_000) } }),
      }),
      writes: [
        { kind: "record-paused-from", replicas: 3 },
        { kind: "scale", from: 3, to: 0 },
      ],
      phase: "Paused",
      event: "Paused",
    },
    {
      name: "stays paused without new activity",
      obs: observe({
        mw: mw({}, pausedStatus(t0 - 60 * min)),
        target: target(0, { [annotations.pausedFrom]: "3" }),
        activity: null,
      }),
      writes: [],
      phase: "Paused",
      event: undefined,
    },
    {
      name: "wakes a paused workload on a request the doorman recorded: scale to the old count, then forget it",
      obs: observe({
        mw: mw({}, pausedStatus(t0 - 60 * min)),
        target: target(0, { [annotations.pausedFrom]: "3", [annotations.lastRequest]: iso(t0 - 1_000) }),
      }),
      writes: [{ kind: "scale", from: 0, to: 3 }, { kind: "forget-paused-from" }],
      phase: "Awake",
      event: "Resumed",
    },
    {
      name: "wakes on kubectl napwake resume",
      obs: observe({
        mw: mw({}, pausedStatus(t0 - 60 * min), {
          annotations: { [annotations.resumeRequested]: iso(t0 - 1_000) },
        }),
        target: target(0, { [annotations.pausedFrom]: "3" }),
      }),
      writes: [{ kind: "scale", from: 0, to: 3 }, { kind: "forget-paused-from" }],
      phase: "Awake",
      event: "Resumed",
    },
    {
      name: "pre-wakes a paused workload when the forecast says so",
      obs: observe({
        mw: mw({}, pausedStatus(t0 - 60 * min)),
        target: target(0, { [annotations.pausedFrom]: "3" }),
        forecast: { vetoPause: true, prewakeAtMs: t0 - 1_000, reason: "traffic forecast at 10:10" },
      }),
      writes: [{ kind: "scale", from: 0, to: 3 }, { kind: "forget-paused-from" }],
      phase: "Awake",
      event: "PreWake",
    },
    {
      name: "ignores a request older than the pause",
      obs: observe({
        mw: mw({}, pausedStatus(t0 - 60 * min)),
        target: target(0, { [annotations.pausedFrom]: "3", [annotations.lastRequest]: iso(t0 - 90 * min) }),
      }),
      writes: [],
      phase: "Paused",
      event: undefined,
    },
    {
      name: "treats a paused workload scaled up outside Napwake as awake and forgets its count",
      obs: observe({
        mw: mw({}, pausedStatus(t0 - 60 * min)),
        target: target(5, { [annotations.pausedFrom]: "3" }),
      }),
      writes: [{ kind: "forget-paused-from" }],
      phase: "Awake",
      event: "ScaledOutsideNapwake",
    },
    {
      name: "forgets, as no resume, the count a pause recorded but failed to scale down after",
      obs: observe({
        mw: mw({}, withPaused(awakeFor(31), "False", "Active", "the workload is awake", t0 - 100 * min)),
        target: target(3, { [annotations.pausedFrom]: "3" }),
      }),
      writes: [{ kind: "forget-paused-from" }],
      phase: "Awake",
      event: undefined,
    },
    {
      name: "finishes a resume KEDA answered first, from its minimum up to the count it was paused from",
      obs: observe({
        mw: mw({}, pausedStatus(t0 - 60 * min)),
        target: target(2, { [annotations.pausedFrom]: "5" }),
        autoscalers: [{ kind: "ScaledObject", name: "web", minReplicas: 2 }],
        scaledObjects: [unheldScaledObject],
      }),
      writes: [
        expect.objectContaining({ kind: "apply" }),
        { kind: "scale", from: 2, to: 5, finishesWake: true },
        { kind: "forget-paused-from" },
      ],
      phase: "Awake",
      event: "Resumed",
    },
    {
      name: "finishes a resume KEDA answered first at the very count it was paused from",
      obs: observe({
        mw: mw({}, pausedStatus(t0 - 60 * min)),
        target: target(2, { [annotations.pausedFrom]: "2" }),
        autoscalers: [{ kind: "ScaledObject", name: "web", minReplicas: 2 }],
        scaledObjects: [unheldScaledObject],
      }),
      writes: [expect.objectContaining({ kind: "apply" }), { kind: "forget-paused-from" }],
      phase: "Awake",
      event: "Resumed",
    },
    {
      name: "finishes one a trigger of a ScaledObject without a minimum answered first, from one",
      obs: observe({
        mw: mw({}, pausedStatus(t0 - 60 * min)),
        target: target(1, { [annotations.pausedFrom]: "3" }),
        autoscalers: scaledObjectAutoscalers,
        scaledObjects: [unheldScaledObject],
      }),
      writes: [
        expect.objectContaining({ kind: "apply" }),
        { kind: "scale", from: 1, to: 3, finishesWake: true },
        { kind: "forget-paused-from" },
      ],
      phase: "Awake",
      event: "Resumed",
    },
    {
      name: "finishes the resume though the ScaledObject cache still shows Napwake's own hold, behind its release",
      obs: observe({
        mw: mw({}, pausedStatus(t0 - 60 * min)),
        target: target(2, { [annotations.pausedFrom]: "5" }),
        autoscalers: [{ kind: "ScaledObject", name: "web", minReplicas: 2 }],
        scaledObjects: [heldScaledObject("napwake")],
      }),
      writes: [
        expect.objectContaining({ kind: "apply" }),
        { kind: "scale", from: 2, to: 5, finishesWake: true },
        { kind: "forget-paused-from" },
      ],
      phase: "Awake",
      event: "Resumed",
    },
    {
      name: "treats a workload at its ScaledObject's minimum as scaled outside while someone else holds it",
      obs: observe({
        mw: mw({}, pausedStatus(t0 - 60 * min)),
        target: target(2, { [annotations.pausedFrom]: "5" }),
        autoscalers: [{ kind: "ScaledObject", name: "web", minReplicas: 2 }],
        scaledObjects: [heldScaledObject("someone-else")],
      }),
      writes: [expect.objectContaining({ kind: "apply" }), { kind: "forget-paused-from" }],
      phase: "Awake",
      event: "ScaledOutsideNapwake",
    },
    {
      name: "treats a workload at its ScaledObject's minimum as scaled outside while KEDA is paused outright",
      obs: observe({
        mw: mw({}, pausedStatus(t0 - 60 * min)),
        target: target(2, { [annotations.pausedFrom]: "5" }),
        autoscalers: [{ kind: "ScaledObject", name: "web", minReplicas: 2 }],
        scaledObjects: [
          {
            ...unheldScaledObject,
            metadata: {
              ...unheldScaledObject.metadata,
              annotations: { "autoscaling.keda.sh/paused": "true" },
            },
          },
        ],
      }),
      writes: [expect.objectContaining({ kind: "apply" }), { kind: "forget-paused-from" }],
      phase: "Awake",
      event: "ScaledOutsideNapwake",
    },
    {
      name: "forgets, with no Event, a count a pause status never showed left at another count",
      obs: observe({
        mw: mw({}, withPaused(awakeFor(31), "False", "Active", "the workload is awake", t0 - 100 * min)),
        target: target(5, { [annotations.pausedFrom]: "3" }),
      }),
      writes: [{ kind: "forget-paused-from" }],
      phase: "Awake",
      event: undefined,
    },
    {
      name: "does not take KEDA's minimum for a resume of a pause status never showed",
      obs: observe({
        mw: mw({}, withPaused(awakeFor(31), "False", "Active", "the workload is awake", t0 - 100 * min)),
        target: target(2, { [annotations.pausedFrom]: "5" }),
        autoscalers: [{ kind: "ScaledObject", name: "web", minReplicas: 2 }],
        scaledObjects: [unheldScaledObject],
      }),
      writes: [expect.objectContaining({ kind: "apply" }), { kind: "forget-paused-from" }],
      phase: "Awake",
      event: undefined,
    },
    {
      name: "treats a workload a ScaledObject scales, found above its minimum while paused, as scaled outside",
      obs: observe({
        mw: mw({}, pausedStatus(t0 - 60 * min)),
        target: target(3, { [annotations.pausedFrom]: "5" }),
        autoscalers: [{ kind: "ScaledObject", name: "web", minReplicas: 2 }],
        scaledObjects: [unheldScaledObject],
      }),
      writes: [expect.objectContaining({ kind: "apply" }), { kind: "forget-paused-from" }],
      phase: "Awake",
      event: "ScaledOutsideNapwake",
    },
    {
      name: "finishes a resume that scaled up but died before forgetting the count",
      obs: observe({ mw: mw({}, {}), target: target(3, { [annotations.pausedFrom]: "3" }) }),
      writes: [{ kind: "forget-paused-from" }],
      phase: "Awake",
      event: "Resumed",
    },
    {
      name: "finishes a pause from the target's paused-from when status lost it",
      obs: observe({ mw: mw({}, {}), target: target(0, { [annotations.pausedFrom]: "3" }), activity: null }),
      writes: [],
      phase: "Paused",
      event: undefined,
    },
    {
      name: "leaves alone a target scaled to zero outside Napwake",
      obs: observe({ mw: mw({}, awakeFor(45)), target: target(0) }),
      writes: [],
      phase: "Unmanaged",
      event: "PauseSkipped",
    },
    {
      name: "lets an ignored target go",
      obs: observe({ target: target(3, {}, { [labels.ignore]: "" }) }),
      writes: [],
      phase: "Unmanaged",
      event: "LetGo",
    },
    {
      name: "resumes a paused target before letting it go when it becomes protected",
      obs: observe({
        mw: mw({ protected: true }, pausedStatus(t0 - 60 * min)),
        target: target(0, { [annotations.pausedFrom]: "3" }),
      }),
      writes: [{ kind: "scale", from: 0, to: 3 }, { kind: "forget-paused-from" }],
      phase: "Unmanaged",
      event: "LetGo",
    },
    {
      name: "protects workloads in a namespace annotated protected",
      obs: observe({
        mw: mw({}, awakeFor(45)),
        namespace: { labels: {}, annotations: { [annotations.protected]: "true" } },
      }),
      writes: [],
      phase: "Unmanaged",
      event: "LetGo",
    },
    {
      name: "protects Napwake's own namespace",
      obs: observe({
        mw: { ...mw({}, awakeFor(45)), metadata: { ...mw().metadata, namespace: "napwake-system" } },
      }),
      writes: [],
      phase: "Unmanaged",
      event: "LetGo",
    },
    {
      name: "resumes a paused target before letting it go while it is being deleted and no other owns the target",
      obs: observe({
        mw: mw({}, pausedStatus(t0 - 60 * min), { deletionTimestamp: iso(t0 - min) }),
        target: target(0, { [annotations.pausedFrom]: "3" }),
      }),
      writes: [{ kind: "scale", from: 0, to: 3 }, { kind: "forget-paused-from" }],
      phase: "Unmanaged",
      event: "LetGo",
    },
    {
      name: "never pauses a target while it is being deleted",
      obs: observe({ mw: mw({}, awakeFor(45), { deletionTimestamp: iso(t0 - min) }) }),
      writes: [],
      phase: "Unmanaged",
      event: "LetGo",
    },
    {
      name: "leaves a paused target as it is to the ManagedWorkload that takes over while it is being deleted",
      obs: observe({
        mw: mw({}, pausedStatus(t0 - 60 * min), { deletionTimestamp: iso(t0 - min) }),
        target: target(0, { [annotations.pausedFrom]: "3" }),
        existingOwner: "web-new",
      }),
      writes: [],
      phase: "Unmanaged",
      event: "PauseSkipped",
    },
    {
      name: "refuses a second owner of a target",
      obs: observe({ existingOwner: "web-old" }),
      writes: [],
      phase: "Unmanaged",
      event: "Refused",
    },
    {
      name: "reports a missing target",
      obs: observe({ target: null }),
      writes: [],
      phase: "Unmanaged",
      event: "PauseSkipped",
    },
    {
      name: "in dry-run decides to pause but never scales",
      obs: observe({ mw: mw({ dryRun: true }, awakeFor(45)) }),
      writes: [],
      phase: "DryRun",
      event: "DryRunPause",
    },
    {
      name: "wakes a paused workload put in dry-run",
      obs: observe({
        mw: mw({ dryRun: true }, pausedStatus(t0 - 60 * min)),
        target: target(0, { [annotations.pausedFrom]: "3" }),
      }),
      writes: [{ kind: "scale", from: 0, to: 3 }, { kind: "forget-paused-from" }],
      phase: "Awake",
      event: "Resumed",
    },
  ])("$name", ({ obs, writes, phase, event }) => {
    const d = decide(obs);
    expect(d.writes).toEqual(writes);
    expect(d.status.phase).toBe(phase);
    expect(d.events[0]?.reason).toBe(event);
  });
});

describe("decide: a paused target whose paused-from was removed while at zero", () => {
  it("shows no pause Napwake would not restore: no count held, not paused by Napwake", () => {
    const paused = withPaused(pausedStatus(t0 - 60 * min), "True", "Idle", "paused from 3", t0 - 60 * min);
    const d = decide(observe({ mw: mw({}, paused), target: target(0) }));
    expect(d.writes).toEqual([]);
    expect(d.status.phase).toBe("Unmanaged");
    expect(d.status.pausedFrom).toBeUndefined();
    expect(d.status.pausedAt).toBeUndefined();
    expect(findCondition(d.status.conditions, "Paused")).toMatchObject({
      status: "False",
      reason: "ScaledToZeroOutside",
    });
  });
});

describe("decide: the skip told while activity is unknown", () => {
  it("names the error in its note and reads the same whatever the error's wording, so it is told once", () => {
    const failing = (error: string) =>
      decide(
        observe({
          mw: mw({}, awakeFor(45)),
          activity: { atMs: t0, cpuCores: 0, queries: [{ name: "queue", active: null, error }], errors: [] },
        }),
      ).events[0];
    const first = failing("timeout after 10001ms");
    const second = failing("timeout after 10007ms");
    expect(first?.note).toBe(
      "idle window passed but activity is unknown: activity queries failed: queue: timeout after 10001ms",
    );
    expect(first?.sameAs).toBe("idle window passed but activity is unknown: activity queries failed: queue");
    expect(second?.sameAs).toBe(first?.sameAs);
  });
});

describe("decide: a target at zero whose paused-from is no count a scale could restore", () => {
  it.each([
    ["above int32", "2147483648"],
    ["not a number", "three"],
  ])("names the annotation and its fix, and writes nothing the API server would refuse (%s)", (_, raw) => {
    const paused = withPaused(pausedStatus(t0 - 60 * min), "True", "Idle", "paused from 3", t0 - 60 * min);
    const d = decide(observe({ mw: mw({}, paused), target: target(0, { [annotations.pausedFrom]: raw }) }));
    expect(d.writes).toEqual([]);
    expect(d.status.pausedFrom).toBeUndefined();
    expect(findCondition(d.status.conditions, "Paused")).toMatchObject({
      status: "False",
      reason: "PausedFromInvalid",
    });
    expect(d.events).toEqual([
      expect.objectContaining({
        type: "Warning",
        reason: "PauseSkipped",
        note: expect.stringContaining(
          `napwake.dev/paused-from="${raw}", which is no replica count (1 to 2147483647)`,
        ),
      }),
    ]);
  });

  it("keeps Napwake's hold at zero on a ScaledObject: a pause was meant, and KEDA would scale it up", () => {
    const d = decide(
      observe({
        mw: mw({}, pausedStatus(t0 - 60 * min)),
        target: target(0, { [annotations.pausedFrom]: "2147483648" }),
        autoscalers: scaledObjectAutoscalers,
        scaledObjects: [heldScaledObject("napwake")],
      }),
    );
    expect(d.writes).toEqual([]);
    expect(d.events.map((e) => e.reason)).toEqual(["PauseSkipped"]);
  });

  it("forgets it on an awake workload, as a readable count is forgotten once awake", () => {
    const d = decide(
      observe({ mw: mw({}, awakeFor(1)), target: target(3, { [annotations.pausedFrom]: "2147483648" }) }),
    );
    expect(d.writes).toEqual([{ kind: "forget-paused-from" }]);
    expect(d.status.phase).toBe("Awake");
  });

  it("is written over by the count of a pause decided on the awake workload", () => {
    const d = decide(
      observe({ mw: mw({}, awakeFor(45)), target: target(3, { [annotations.pausedFrom]: "three" }) }),
    );
    expect(d.writes).toEqual([
      { kind: "record-paused-from", replicas: 3 },
      { kind: "scale", from: 3, to: 0 },
    ]);
  });

  it("resumes to the largest count int32 holds", () => {
    const d = decide(
      observe({
        mw: mw({}, pausedStatus(t0 - 60 * min)),
        target: target(0, {
          [annotations.pausedFrom]: "2147483647",
          [annotations.lastRequest]: iso(t0 - min),
        }),
      }),
    );
    expect(d.writes).toContainEqual({ kind: "scale", from: 0, to: 2147483647 });
  });
});

describe("decide: a record of undone pauses stamped ahead of now", () => {
  it("holds pauses off one hold-off from the first check, not from the time ahead", () => {
    const ahead = {
      ...awakeFor(40),
      pausesUndone: { count: 1, lastAt: iso(t0 + 3 * 24 * 60 * min), manager: "argocd-controller" },
    };
    const first = decide(observe({ mw: mw({}, ahead) }));
    expect(first.writes).toEqual([]);
    expect(first.status.pausesUndone?.lastAt).toBe(iso(t0));
    // The hour's hold-off from then has passed; the workload has been idle all along.
    const later = t0 + 61 * min;
    const next = decide(observe({ nowMs: later, mw: mw({}, first.status), activity: idle(later) }));
    expect(next.writes).toContainEqual({ kind: "scale", from: 3, to: 0 });
  });
});

describe("decide: a pause that failed after recording its count", () => {
  it("leaves the status as it was: not resumed, no activity, still idle since before", () => {
    const awake = withPaused(awakeFor(31), "False", "Active", "the workload is awake", t0 - 100 * min);
    const d = decide(observe({ mw: mw({}, awake), target: target(3, { [annotations.pausedFrom]: "3" }) }));
    expect(pausedCondition(d)).toMatchObject({ status: "False", reason: "Active" });
    expect(d.status.lastActivity).toEqual(awake.lastActivity);
    expect(d.summary).toMatch(/whose pause status never showed/);
  });

  it("wakes a workload found at another count from now, with no activity made up (an HPA scaling down is none)", () => {
    const awake = withPaused(awakeFor(31), "False", "Active", "the workload is awake", t0 - 100 * min);
    const d = decide(
      observe({
        mw: mw({}, awake),
        target: target(2, { [annotations.pausedFrom]: "3" }),
        autoscalers: [{ kind: "HorizontalPodAutoscaler", name: "web" }],
      }),
    );
    expect(d.writes).toEqual([{ kind: "forget-paused-from" }]);
    expect(d.events).toEqual([]);
    expect(d.status.lastActivity).toEqual(awake.lastActivity);
    expect(pausedCondition(d)).toMatchObject({ status: "False", lastTransitionTime: iso(t0) });
  });
});

describe("decide: the PauseVetoed Event", () => {
  const veto = (reason: string) => ({ vetoPause: true, prewakeAtMs: null, reason });
  const vetoed = (nowMs: number, lastActivityMs: number, reason: string) =>
    decide(
      observe({
        nowMs,
        mw: mw({}, { lastActivity: { time: iso(lastActivityMs), source: "cpu" } }),
        activity: idle(nowMs),
        forecast: veto(reason),
      }),
    ).events;

  it("is the same skip through one idle stretch, as the expected activity moves from slot to slot", () => {
    const [first] = vetoed(t0, t0 - 45 * min, "activity forecast from 10:15");
    // Later, in a quarter hour the forecast calls quiet, with a shorter window in force.
    const [later] = decide(
      observe({
        nowMs: t0 + 15 * min,
        mw: mw({}, { lastActivity: { time: iso(t0 - 45 * min), source: "cpu" } }),
        activity: idle(t0 + 15 * min),
        forecast: { ...veto("activity forecast from 10:45"), idleWindowMs: 10 * min },
      }),
    ).events;
    expect(first).toMatchObject({ reason: "PauseVetoed", kind: "skip", note: later?.note });
    expect(first?.note).toBe(
      "idle for the idle window but not paused: the forecast expects activity within it and the pre-wake lead " +
        "(status.prediction.nextActivity says when)",
    );
    expect(later?.fingerprint).toBe(first?.fingerprint);
  });

  it("is a new one for the next idle stretch", () => {
    const [first] = vetoed(t0, t0 - 45 * min, "activity forecast from 10:15");
    const [next] = vetoed(t0 + 60 * min, t0 + 20 * min, "activity forecast from 11:15");
    expect(next?.fingerprint).not.toBe(first?.fingerprint);
  });
});

describe("decide: what the forecast decided shows in the Paused condition", () => {
  it.each([
    {
      name: "a vetoed pause is reason ForecastVeto, with the forecast's why",
      obs: observe({
        mw: mw({}, awakeFor(45)),
        forecast: { vetoPause: true, prewakeAtMs: null, reason: "activity forecast at 10:20" },
      }),
      reason: "ForecastVeto",
      message: /pause vetoed: activity forecast at 10:20/,
    },
    {
      name: "an awake workload the forecast did not speak for stays reason Active",
      obs: observe({ mw: mw({}, awakeFor(10)) }),
      reason: "Active",
      message: /awake/,
    },
    {
      name: "a pre-woken workload keeps reason PreWake on the checks after the wake",
      obs: observe({
        mw: mw(
          {},
          withPaused(awakeFor(90), "False", "PreWake", "pre-wake: activity forecast at 10:10", t0 - min),
        ),
      }),
      reason: "PreWake",
      message: /pre-wake: activity forecast at 10:10/,
    },
    {
      name: "a workload awake after a vetoed pause goes back to reason Active",
      obs: observe({
        mw: mw({}, withPaused(awakeFor(10), "False", "ForecastVeto", "pause vetoed", t0 - 60 * min)),
      }),
      reason: "Active",
      message: /awake/,
    },
    {
      name: "a pause blocked by unknown activity is reason ActivityUnknown, which the awake budget does not pay",
      obs: observe({
        mw: mw({}, awakeFor(45)),
        activity: { atMs: t0, cpuCores: null, queries: [], errors: ["metrics.k8s.io unavailable"] },
      }),
      reason: "ActivityUnknown",
      message: /^not pausing: pod CPU unknown$/,
    },
    {
      name: "a pause the forecast vetoes while activity is unknown is reason ActivityUnknown: it could not be made",
      obs: observe({
        mw: mw({}, awakeFor(45)),
        activity: { atMs: t0, cpuCores: null, queries: [], errors: ["metrics.k8s.io unavailable"] },
        forecast: { vetoPause: true, prewakeAtMs: null, reason: "activity forecast at 10:20" },
      }),
      reason: "ActivityUnknown",
      message: /^not pausing: pod CPU unknown$/,
    },
    {
      name: "a pre-woken workload still starting keeps reason PreWake through a veto, activity unknown or not",
      obs: observe({
        // Woken 20 minutes ago, 30 before the forecast activity; the trusted window (15 min) has passed.
        mw: mw(
          { forecast: { prewake: "30m" } },
          withPaused(awakeFor(90), "False", "PreWake", "pre-wake: activity forecast at 10:10", t0 - 20 * min),
        ),
        activity: { atMs: t0, cpuCores: null, queries: [], errors: ["metrics.k8s.io unavailable"] },
        forecast: {
          vetoPause: true,
          prewakeAtMs: t0 - 20 * min,
          reason: "activity forecast at 10:10",
          idleWindowMs: 15 * min,
        },
      }),
      reason: "PreWake",
      message: /pre-wake: activity forecast at 10:10/,
    },
    {
      name: "a pause the forecast vetoes while a sync loop's undo holds pausing off is reason PauseUndone",
      obs: observe({
        mw: mw(
          {},
          {
            ...awakeFor(45),
            pausesUndone: {
              count: 2,
              lastAt: iso(t0 - 60 * min),
              tool: "argocd",
              manager: "argocd-controller",
            },
          },
        ),
        forecast: { vetoPause: true, prewakeAtMs: null, reason: "activity forecast at 10:20" },
      }),
      reason: "PauseUndone",
      message: /argocd-controller set spec.replicas back after the last 2 pauses/,
    },
    {
      name: "a pause blocked by a failed activity query names the query, not its error, so status stays put",
      obs: observe({
        mw: mw({}, awakeFor(45)),
        activity: { ...idle(t0), queries: [{ name: "queue", active: null, error: "timeout after 5003 ms" }] },
      }),
      reason: "ActivityUnknown",
      message: /^not pausing: activity queries failed: queue$/,
    },
    {
      name: "a workload woken by a GitOps tool setting a pause back keeps reason UndoneByGitOps on the next check",
      obs: observe({
        mw: mw(
          {},
          withPaused(
            awakeFor(1),
            "False",
            "UndoneByGitOps",
            "argocd-controller set spec.replicas back",
            t0 - min,
          ),
        ),
      }),
      reason: "UndoneByGitOps",
      message: /set spec.replicas back/,
    },
    {
      name: "a pre-wake is reason PreWake",
      obs: observe({
        mw: mw({}, pausedStatus(t0 - 60 * min)),
        target: target(0, { [annotations.pausedFrom]: "3" }),
        forecast: { vetoPause: false, prewakeAtMs: t0 - 1_000, reason: "activity forecast at 10:10" },
      }),
      reason: "PreWake",
      message: /pre-wake: activity forecast at 10:10/,
    },
    {
      name: "a wake on activity is reason Resumed",
      obs: observe({
        mw: mw({}, pausedStatus(t0 - 60 * min)),
        target: target(0, { [annotations.pausedFrom]: "3", [annotations.lastRequest]: iso(t0 - 1_000) }),
      }),
      reason: "Resumed",
      message: /resumed to 3 replicas/,
    },
  ])("$name", ({ obs, reason, message }) => {
    const c = pausedCondition(decide(obs));
    expect(c?.status).toBe("False");
    expect(c?.reason).toBe(reason);
    expect(c?.message).toMatch(message);
  });
});

describe("decide: notes", () => {
  it("count one replica as one replica", () => {
    const d = decide(observe({ mw: mw({}, awakeFor(31)), target: target(1) }));
    expect(d.events[0]?.note).toMatch(/^paused from 1 replica: /);
  });
});

describe("decide: a wake's reason kept on the Paused condition", () => {
  it("is judged at the spec's generation: observedGeneration moves on, the transition time stays", () => {
    const woken = iso(t0 - 5 * min);
    const status: ManagedWorkloadStatus = {
      ...awakeFor(5),
      conditions: [
        {
          type: "Paused",
          status: "False",
          reason: "Resumed",
          message: "resumed to 3 replicas",
          lastTransitionTime: woken,
          observedGeneration: 1,
        },
      ],
    };
    const d = decide(observe({ mw: mw({}, status, { generation: 3 }) }));
    expect(pausedCondition(d)).toEqual({
      type: "Paused",
      status: "False",
      reason: "Resumed",
      message: "resumed to 3 replicas",
      lastTransitionTime: woken,
      observedGeneration: 3,
    });
  });
});

describe("decide: a vetoed pause that could not have been made anyway", () => {
  it("sends the PauseSkipped Warning that names why, not PauseVetoed", () => {
    const d = decide(
      observe({
        mw: mw({}, awakeFor(45)),
        activity: { atMs: t0, cpuCores: null, queries: [], errors: ["metrics.k8s.io unavailable"] },
        forecast: { vetoPause: true, prewakeAtMs: null, reason: "activity forecast at 10:20" },
      }),
    );
    expect(d.events).toMatchObject([{ type: "Warning", reason: "PauseSkipped" }]);
  });
});

describe("decide: CPU while a pre-woken workload starts", () => {
  const wokenMinutesAgo = (minutes: number, reason: string): ManagedWorkloadStatus => ({
    lastActivity: { time: iso(t0 - 90 * min), source: "cpu" },
    conditions: [
      {
        type: "Paused",
        status: "False",
        reason,
        message: "woken",
        lastTransitionTime: iso(t0 - minutes * min),
      },
    ],
  });
  /** Woken by Argo CD setting a pause back `minutes` ago; the condition's reason and when it changed may differ. */
  const undoneMinutesAgo = (minutes: number, reason: string): ManagedWorkloadStatus => ({
    ...wokenMinutesAgo(Math.min(minutes, 1), reason),
    pausesUndone: { count: 1, lastAt: iso(t0 - minutes * min), tool: "argocd", manager: "argocd-controller" },
  });
  it.each([
    {
      name: "is its start-up, not traffic, within the pre-wake lead (10 min by default)",
      status: wokenMinutesAgo(1, "PreWake"),
      spec: {},
      counted: false,
    },
    {
      name: "is traffic once the lead has passed",
      status: wokenMinutesAgo(11, "PreWake"),
      spec: {},
      counted: true,
    },
    {
      name: "follows spec.forecast.prewake",
      status: wokenMinutesAgo(3, "PreWake"),
      spec: { forecast: { prewake: "2m" } },
      counted: true,
    },
    {
      name: "is traffic after a wake the forecast did not make",
      status: wokenMinutesAgo(1, "Resumed"),
      spec: {},
      counted: true,
    },
    {
      name: "is its start-up, not traffic, after a sync loop set a pause back",
      status: undoneMinutesAgo(1, "UndoneByGitOps"),
      spec: {},
      counted: false,
    },
    {
      name: "is still start-up after a sync loop's wake once a hold-off shows instead",
      status: undoneMinutesAgo(7, "PauseUndone"),
      spec: {},
      counted: false,
    },
    {
      name: "is its start-up, not traffic, after a wake for dry-run",
      status: wokenMinutesAgo(1, "DryRun"),
      spec: { dryRun: true },
      counted: false,
    },
    {
      name: "is traffic once the lead after a wake for dry-run has passed",
      status: wokenMinutesAgo(11, "DryRun"),
      spec: { dryRun: true },
      counted: true,
    },
    {
      name: "is traffic once the lead after a sync loop's wake has passed",
      status: undoneMinutesAgo(11, "UndoneByGitOps"),
      spec: {},
      counted: true,
    },
  ])("$name", ({ status, spec, counted }) => {
    const d = decide(observe({ mw: mw(spec, status), activity: busy(t0) }));
    expect(d.status.lastActivity?.time === iso(t0)).toBe(counted);
  });

  it.each([
    {
      name: "is traffic when the pre-wake came after its slot began (the operator was down then)",
      slotFromMs: t0 - 6 * min,
      counted: true,
    },
    {
      name: "is start-up while the slot the pre-wake was for is ahead",
      slotFromMs: t0 + 9 * min,
      counted: false,
    },
  ])("$name", ({ slotFromMs, counted }) => {
    const advice = { vetoPause: true, prewakeAtMs: slotFromMs - 10 * min, reason: "activity forecast" };
    const d = decide(
      observe({ mw: mw({}, wokenMinutesAgo(1, "PreWake")), activity: busy(t0), forecast: advice }),
    );
    expect(d.status.lastActivity?.time === iso(t0)).toBe(counted);
  });

  it("learns no activity from the start-up of a paused workload put in dry-run", () => {
    const woke = decide(
      observe({
        mw: mw({ dryRun: true }, pausedStatus(t0 - 60 * min)),
        target: target(0, { [annotations.pausedFrom]: "3" }),
      }),
    );
    expect(pausedCondition(woke)).toMatchObject({ status: "False", reason: "DryRun" });
    const later = t0 + 2 * min;
    const d = decide(observe({ nowMs: later, mw: mw({ dryRun: true }, woke.status), activity: busy(later) }));
    expect(d.status.lastActivity?.time).not.toBe(iso(later));
  });

  it("stays start-up through a lead longer than the idle window, where the forecast vetoes the pause", () => {
    // Pre-woken 20 minutes ago, 30 minutes before the forecast activity; the trusted window (15 min) has passed.
    const advice = { vetoPause: true, prewakeAtMs: t0 - 20 * min, reason: "activity forecast from 10:10" };
    const spec = { forecast: { prewake: "30m" } };
    let status = wokenMinutesAgo(20, "PreWake");
    for (const at of [t0, t0 + 5 * min]) {
      const d = decide(
        observe({
          nowMs: at,
          mw: mw(spec, status),
          activity: busy(at),
          forecast: { ...advice, idleWindowMs: 15 * min },
        }),
      );
      expect(d.writes).toEqual([]);
      expect(d.status.lastActivity?.time).toBe(iso(t0 - 90 * min));
      expect(pausedCondition(d)).toMatchObject({ reason: "PreWake", lastTransitionTime: iso(t0 - 20 * min) });
      status = d.status;
    }
  });
});

describe("decide: kubectl napwake requests", () => {
  it("does not act on a pause stamped finer than the webhook admits, whose record would not fit status", () => {
    const awake = withPaused(awakeFor(5), "False", "Active", "the workload is awake", t0 - 60 * min);
    // Stored before the webhook checked stamps, or while it was off: Date.parse reads it, status has no room.
    const stamp = `${iso(t0 - 2_000).slice(0, -1)}${"1".repeat(40)}Z`;
    expect(Date.parse(stamp)).not.toBeNaN();
    const d = decide(
      observe({ mw: mw({}, awake, { annotations: { [annotations.pauseRequested]: stamp } }) }),
    );
    expect(d.writes).not.toContainEqual({ kind: "scale", from: 3, to: 0 });
    expect(d.status.lastHandledPauseRequest).toBeUndefined();
  });

  it.each([
    { what: "the same time as the pause request that paused it", afterMs: 0 },
    { what: "after that request, though before the reconcile that made the pause", afterMs: 1 },
  ])("wakes on a resume stamped $what: a tie errs toward awake", ({ afterMs }) => {
    const requestedMs = t0 - 2_000;
    const awake = withPaused(awakeFor(5), "False", "Active", "the workload is awake", t0 - 60 * min);
    const asked = { annotations: { [annotations.pauseRequested]: iso(requestedMs) } };
    const pause = decide(observe({ mw: mw({}, awake, asked) }));
    expect(pause.writes).toContainEqual({ kind: "scale", from: 3, to: 0 });
    const both = {
      annotations: { ...asked.annotations, [annotations.resumeRequested]: iso(requestedMs + afterMs) },
    };
    const later = t0 + 2_000;
    const d = decide(
      observe({
        nowMs: later,
        mw: mw({}, pause.status, both),
        target: target(0, { [annotations.pausedFrom]: "3" }),
        activity: null,
      }),
    );
    expect(d.writes).toContainEqual({ kind: "scale", from: 0, to: 3 });
  });

  it("leaves a pause the idle clock made later alone, though that resume still stands", () => {
    const requestedMs = t0 - 120 * min;
    const annotationsOn = {
      [annotations.pauseRequested]: iso(requestedMs),
      [annotations.resumeRequested]: iso(requestedMs + 1),
    };
    const idlePause = withPaused(
      { ...pausedStatus(t0 - 10 * min), lastHandledPauseRequest: iso(requestedMs) },
      "True",
      "Idle",
      "paused from 3 replicas",
      t0 - 10 * min,
    );
    const d = decide(
      observe({
        mw: mw({}, idlePause, { annotations: annotationsOn }),
        target: target(0, { [annotations.pausedFrom]: "3" }),
        activity: null,
      }),
    );
    expect(d.writes.filter((w) => w.kind === "scale")).toEqual([]);
  });

  it.each<{
    name: string;
    annotationsOn: Record<string, string>;
    targetAnnotations: Record<string, string>;
    note: string;
  }>([
    {
      name: "names a resume request as what woke the workload, not as activity",
      annotationsOn: { [annotations.resumeRequested]: iso(t0 - 1_000) },
      targetAnnotations: {},
      note: `resumed to 3 replicas: kubectl napwake resume at ${iso(t0 - 1_000)}`,
    },
    {
      name: "names activity as activity",
      annotationsOn: {},
      targetAnnotations: { [annotations.lastRequest]: iso(t0 - 1_000) },
      note: `resumed to 3 replicas: activity at ${iso(t0 - 1_000)} while paused`,
    },
  ])("$name", ({ annotationsOn, targetAnnotations, note }) => {
    const d = decide(
      observe({
        mw: mw({}, pausedStatus(t0 - 60 * min), { annotations: annotationsOn }),
        target: target(0, { [annotations.pausedFrom]: "3", ...targetAnnotations }),
      }),
    );
    expect(d.events.map((e) => e.note)).toEqual([note]);
  });

  const pausedByHand: ManagedWorkloadStatus = {
    ...pausedStatus(t0 - 10 * min),
    conditions: [
      {
        type: "Paused",
        status: "True",
        reason: "Requested",
        message: "paused from 3 replicas: kubectl napwake pause",
        lastTransitionTime: iso(t0 - 10 * min),
      },
    ],
  };
  const prewakeDue = { vetoPause: true, prewakeAtMs: t0 - 1_000, reason: "traffic forecast at 10:10" };
  // A pause by hand whose status write was lost: scaled to zero on kubectl napwake pause ten minutes ago, its
  // status still shows it awake since an hour ago.
  const lostPauseStatus: ManagedWorkloadStatus = {
    ...awakeFor(20),
    conditions: [
      {
        type: "Paused",
        status: "False",
        reason: "Resumed",
        message: "resumed to 3 replicas",
        lastTransitionTime: iso(t0 - 60 * min),
      },
    ],
  };
  const byHand = { annotations: { [annotations.pauseRequested]: iso(t0 - 10 * min) } };

  it("keeps a workload paused by hand through the forecast's pre-wake, look after look", () => {
    let status = pausedByHand;
    for (const look of [0, 1, 2]) {
      const d = decide(
        observe({
          nowMs: t0 + look * 5 * min,
          mw: mw({}, status),
          target: target(0, { [annotations.pausedFrom]: "3" }),
          forecast: prewakeDue,
        }),
      );
      expect(d.writes).toEqual([]);
      expect(d.status.phase).toBe("Paused");
      status = d.status;
    }
  });

  it("turns a pause by the idle clock into one by hand on kubectl napwake pause, so the forecast does not pre-wake it", () => {
    const idlePause: ManagedWorkloadStatus = {
      ...pausedStatus(t0 - 60 * min),
      conditions: [
        {
          type: "Paused",
          status: "True",
          reason: "Idle",
          message: "paused from 3 replicas: idle for 30m",
          lastTransitionTime: iso(t0 - 60 * min),
        },
      ],
    };
    const d = decide(
      observe({
        mw: mw({}, idlePause, byHand),
        target: target(0, { [annotations.pausedFrom]: "3" }),
        forecast: prewakeDue,
      }),
    );
    expect(d.writes).toEqual([]);
    expect(pausedCondition(d)).toMatchObject({
      status: "True",
      reason: "Requested",
      message: `paused from 3 replicas: kubectl napwake pause at ${iso(t0 - 10 * min)}`,
      lastTransitionTime: iso(t0 - 60 * min),
    });
    // A request from before the idle pause is an old one (it would have made that pause one by hand).
    const older = { annotations: { [annotations.pauseRequested]: iso(t0 - 90 * min) } };
    const prewoken = decide(
      observe({
        mw: mw({}, idlePause, older),
        target: target(0, { [annotations.pausedFrom]: "3" }),
        forecast: prewakeDue,
      }),
    );
    expect(prewoken.writes).toContainEqual({ kind: "scale", from: 0, to: 3 });
  });

  it("keeps a pause by hand one when its status write was lost, until the workload is next woken", () => {
    const d = decide(
      observe({
        mw: mw({}, lostPauseStatus, byHand),
        target: target(0, { [annotations.pausedFrom]: "3" }),
        forecast: prewakeDue,
      }),
    );
    expect(d.writes).toEqual([]);
    expect(pausedCondition(d)).toMatchObject({ status: "True", reason: "Requested" });
    // A pause request from before the workload's last wake is an old one: the forecast wakes this pause.
    const older = { annotations: { [annotations.pauseRequested]: iso(t0 - 90 * min) } };
    const woken = decide(
      observe({
        mw: mw({}, lostPauseStatus, older),
        target: target(0, { [annotations.pausedFrom]: "3" }),
        forecast: prewakeDue,
      }),
    );
    expect(woken.writes).toContainEqual({ kind: "scale", from: 0, to: 3 });
  });

  it("does not pause again, on the old request, a workload woken from a pause by hand whose status was lost", () => {
    const wake = decide(
      observe({
        mw: mw({}, lostPauseStatus, byHand),
        target: target(0, { [annotations.pausedFrom]: "3", [annotations.lastRequest]: iso(t0 - 1_000) }),
      }),
    );
    expect(wake.writes).toContainEqual({ kind: "scale", from: 0, to: 3 });
    expect(pausedCondition(wake)).toMatchObject({ status: "False", lastTransitionTime: iso(t0) });
    const after = decide(observe({ nowMs: t0 + 30_000, mw: mw({}, wake.status, byHand), target: target(3) }));
    expect(after.writes).toEqual([]);
    expect(after.status.phase).toBe("Awake");
  });

  it("still wakes a workload paused by hand on a request", () => {
    const d = decide(
      observe({
        mw: mw({}, pausedByHand),
        target: target(0, { [annotations.pausedFrom]: "3", [annotations.lastRequest]: iso(t0 - 1_000) }),
        forecast: prewakeDue,
      }),
    );
    expect(d.writes).toContainEqual({ kind: "scale", from: 0, to: 3 });
  });

  const requested = (pause: number, resume: number) => ({
    annotations: { [annotations.pauseRequested]: iso(pause), [annotations.resumeRequested]: iso(resume) },
  });

  it("does not replay an older pause after a resume, even from a status the cache has not caught up with", () => {
    // Status still says Paused (stale), the workload is back at 3, resume came after the pause.
    const stale = mw({}, pausedStatus(t0 - 60 * min), requested(t0 - 20_000, t0 - 10_000));
    const d = decide(observe({ mw: stale, target: target(3) }));
    expect(d.writes).toEqual([]);
    expect(d.status.phase).toBe("Awake");
  });

  it("wakes for a resume stamped in the same millisecond as the pause: a tie errs toward awake", () => {
    const paused = mw({}, pausedStatus(t0 - 60 * min), requested(t0 - 10_000, t0 - 10_000));
    const d = decide(
      observe({ mw: paused, target: target(0, { [annotations.pausedFrom]: "3" }), activity: null }),
    );
    expect(d.writes).toContainEqual({ kind: "scale", from: 0, to: 3 });
  });

  it("does not wake for an older resume after a pause, even from a stale pause time", () => {
    const stale = mw({}, pausedStatus(t0 - 60 * min), requested(t0 - 10_000, t0 - 20_000));
    const d = decide(
      observe({ mw: stale, target: target(0, { [annotations.pausedFrom]: "3" }), activity: null }),
    );
    expect(d.writes).toEqual([]);
    expect(d.status.phase).toBe("Paused");
  });
});

describe("decide: status", () => {
  it("records paused-from and the pause time on a pause", () => {
    const d = decide(observe({ mw: mw({}, awakeFor(31)) }));
    expect(d.status).toMatchObject({
      pausedFrom: 3,
      pausedAt: iso(t0),
      phase: "Paused",
      observedGeneration: 1,
    });
    expect(d.status.conditions?.find((c) => c.type === "Paused")).toMatchObject({
      status: "True",
      lastTransitionTime: iso(t0),
    });
  });

  it("clears paused-from from the status of an awake workload whose resume never reached status", () => {
    const stale = mw(
      {},
      { ...pausedStatus(t0 - 60 * min), lastActivity: { time: iso(t0 - 1000), source: "manual" } },
    );
    const d = decide(observe({ mw: stale, target: target(3) }));
    expect(d.status.phase).toBe("Awake");
    expect(d.status.pausedFrom).toBeUndefined();
    expect(d.status.pausedAt).toBeUndefined();
  });

  it("decides but never scales when the whole operator runs with --dry-run", () => {
    const obs = observe({ mw: mw({}, awakeFor(45)) });
    const d = decide({ ...obs, settings: { ...obs.settings, dryRun: true } });
    expect(d.writes).toEqual([]);
    expect(d.status.phase).toBe("DryRun");
  });

  it("adds up the replica-hours dry-run held back", () => {
    const earlier = mw(
      { dryRun: true },
      {
        ...awakeFor(90),
        dryRun: { wouldPauseSince: iso(t0 - 60 * min), accountedAt: iso(t0 - 60 * min), heldReplicaHours: 1 },
      },
    );
    const d = decide(observe({ mw: earlier }));
    expect(d.status.dryRun).toEqual({
      wouldPauseSince: iso(t0 - 60 * min),
      accountedAt: iso(t0),
      heldReplicaHours: 4,
    });
  });

  it("adds to dry-run's total at most once per check interval, so status does not change on every reconcile", () => {
    const accounted = {
      wouldPauseSince: iso(t0 - 60 * min),
      accountedAt: iso(t0 - 10_000),
      heldReplicaHours: 1,
    };
    const d = decide(observe({ mw: mw({ dryRun: true }, { ...awakeFor(90), dryRun: accounted }) }));
    expect(d.status.dryRun).toEqual(accounted);
  });

  it("decides the same status a few seconds later while it would pause: no idle time running on in it", () => {
    const awake = withPaused(awakeFor(31), "False", "Active", "the workload is awake", t0 - 120 * min);
    const first = decide(observe({ mw: mw({ dryRun: true }, awake) }));
    expect(first.status.phase).toBe("DryRun");
    const again = decide(
      observe({ nowMs: t0 + 2_000, mw: mw({ dryRun: true }, first.status), activity: idle(t0) }),
    );
    expect(again.status).toEqual(first.status);
    expect(findCondition(again.status.conditions, "DryRun")?.message).toBe(
      `dry-run: would pause 3 replicas since ${iso(t0)} (idle for the idle window)`,
    );
  });

  it("keeps dry-run's total when the workload turns active again", () => {
    const earlier = mw(
      { dryRun: true },
      { ...awakeFor(90), dryRun: { wouldPauseSince: iso(t0 - 60 * min), heldReplicaHours: 4 } },
    );
    expect(decide(observe({ mw: earlier, activity: busy(t0) })).status.dryRun).toEqual({
      heldReplicaHours: 4,
    });
  });

  it("asks to look again when the idle window will have passed", () => {
    expect(decide(observe({ mw: mw({}, awakeFor(29.9)) })).requeueAfterMs).toBeLessThanOrEqual(30_000);
  });

  it("holds a KEDA ScaledObject while pausing and releases Napwake's hold on resume", () => {
    const autoscalers = scaledObjectAutoscalers;
    const pause = decide(
      observe({ mw: mw({}, awakeFor(31)), autoscalers, scaledObjects: [unheldScaledObject] }),
    );
    expect(pause.writes.map((w) => w.kind)).toEqual(["record-paused-from", "apply", "scale"]);
    const held = heldScaledObject("napwake");
    const resume = resumedWith(held);
    expect(resume.writes.map((w) => w.kind)).toEqual(["apply", "scale", "forget-paused-from"]);
  });

  describe("a hold at zero Napwake applied, with no pause of its own behind it", () => {
    const autoscalers = scaledObjectAutoscalers;
    const release = {
      kind: "apply",
      object: {
        apiVersion: "keda.sh/v1alpha1",
        kind: "ScaledObject",
        metadata: { name: "web", namespace: "shop" },
      },
    };

    it("is released by a resume decided before the ScaledObject cache showed it", () => {
      // The ScaledObject's informer is behind the Deployment's: the hold made with the pause is not seen yet.
      const resume = resumedWith(unheldScaledObject);
      expect(resume.writes).toMatchObject([
        release,
        { kind: "scale", from: 0, to: 3 },
        { kind: "forget-paused-from" },
      ]);
    });

    it("is released from an awake workload once the ScaledObject cache shows it", () => {
      const d = decide(
        observe({
          mw: mw({}, awakeFor(1)),
          target: target(3),
          autoscalers,
          scaledObjects: [heldScaledObject("napwake")],
        }),
      );
      expect(d.writes).toMatchObject([release]);
      expect(d.events).toContainEqual(
        expect.objectContaining({ reason: "ScaledObjectReleased", kind: "skip", fingerprint: "web@7" }),
      );
      expect(d.status.phase).toBe("Awake");
    });

    it("is told once per version of the hold: a cache that has not seen the release decides it again alike", () => {
      const released = (resourceVersion: string) =>
        decide(
          observe({
            mw: mw({}, awakeFor(1)),
            target: target(3),
            autoscalers,
            scaledObjects: [
              {
                ...heldScaledObject("napwake"),
                metadata: { ...heldScaledObject("napwake").metadata, resourceVersion },
              },
            ],
          }),
        ).events.find((e) => e.reason === "ScaledObjectReleased");
      expect(released("7")).toEqual(released("7"));
      expect(released("7")?.kind).toBe("skip");
      expect(released("9")?.fingerprint).toBe("web@9");
    });

    it("is released for a workload created again after it was deleted while paused", () => {
      const d = decide(
        observe({
          mw: mw({}, { phase: "Unmanaged" }),
          target: target(3),
          autoscalers,
          scaledObjects: [heldScaledObject("napwake")],
        }),
      );
      expect(d.writes).toMatchObject([release]);
    });

    it("is released for a workload left at zero, so KEDA scales it again", () => {
      const d = decide(
        observe({ target: target(0), autoscalers, scaledObjects: [heldScaledObject("napwake")] }),
      );
      expect(d.writes).toMatchObject([release]);
      expect(d.status.phase).toBe("Unmanaged");
    });

    it("is released for a workload Napwake lets go of", () => {
      const d = decide(
        observe({
          target: target(3, { [annotations.protected]: "true" }),
          autoscalers,
          scaledObjects: [heldScaledObject("napwake")],
        }),
      );
      expect(d.writes).toMatchObject([release]);
    });

    it("is kept by a decision that pauses, and someone else's hold is never released", () => {
      const pause = decide(
        observe({ mw: mw({}, awakeFor(31)), autoscalers, scaledObjects: [heldScaledObject("napwake")] }),
      );
      expect(pause.writes.map((w) => w.kind)).toEqual(["record-paused-from", "scale"]);
      const theirs = decide(
        observe({
          target: target(3),
          autoscalers,
          scaledObjects: [heldScaledObject("kubectl")],
          activity: busy(t0),
        }),
      );
      expect(theirs.writes).toEqual([]);
    });
  });

  it("does not pause a workload whose ScaledObject someone else holds at a count other than zero", () => {
    const so = {
      apiVersion: "keda.sh/v1alpha1",
      kind: "ScaledObject",
      metadata: {
        name: "web",
        namespace: "shop",
        annotations: { "autoscaling.keda.sh/paused-replicas": "3" },
      },
      spec: { scaleTargetRef: { name: "web" } },
    };
    const autoscalers = [{ kind: "ScaledObject" as const, name: "web" }];
    const d = decide(observe({ mw: mw({}, awakeFor(31)), autoscalers, scaledObjects: [so] }));
    expect(d.writes).toEqual([]);
    expect(d.events).toMatchObject([
      { reason: "PauseSkipped", note: expect.stringMatching(/held at 3 replicas/) },
    ]);
    expect(pausedCondition(d)).toMatchObject({ status: "False", reason: "HeldElsewhere" });
  });
});

describe("decide: recovering from a status write that was lost", () => {
  const pausedCondition = (atMs: number) => ({
    type: "Paused",
    status: "True" as const,
    reason: "Idle",
    message: "paused from 3 replicas",
    lastTransitionTime: iso(atMs),
  });
  const scaleWrites = (writes: { kind: string }[]) => writes.filter((w) => w.kind === "scale");

  it("gives a workload scaled up by hand while its status still says paused a full idle window", () => {
    const status = {
      ...pausedStatus(t0 - 100 * min),
      lastActivity: { time: iso(t0 - 130 * min), source: "cpu" as const },
      conditions: [pausedCondition(t0 - 100 * min)],
    };
    const d = decide(observe({ mw: mw({}, status), target: target(3) }));
    expect(scaleWrites(d.writes)).toEqual([]);
    expect(d.status.phase).toBe("Awake");
  });

  it("wakes a paused target on a request newer than the last activity when the pause never reached status", () => {
    const status = awakeFor(60);
    const paused = target(0, {
      [annotations.pausedFrom]: "3",
      [annotations.lastRequest]: iso(t0 - 5 * min),
    });
    const d = decide(observe({ mw: mw({}, status), target: paused, activity: null }));
    expect(scaleWrites(d.writes)).toEqual([{ kind: "scale", from: 0, to: 3 }]);
  });

  it("records the pause as no later than the last activity it knew of, so later requests still wake it", () => {
    const paused = target(0, { [annotations.pausedFrom]: "3" });
    const d = decide(observe({ mw: mw({}, awakeFor(60)), target: paused, activity: null }));
    expect(d.status.pausedAt).toBe(iso(t0 - 60 * min));
  });
});

describe("decide: the operator's clock stepping back", () => {
  it("takes Napwake's own activity stamp from ahead of now as now, and writes it back so", () => {
    // Busy until just now by the old clock, which then stepped back 20 minutes; this sample is idle.
    const status = { ...awakeFor(0), lastActivity: { time: iso(t0 + 20 * min), source: "cpu" as const } };
    const d = decide(observe({ mw: mw({}, status), activity: idle(t0) }));
    expect(d.writes).toEqual([]);
    expect(d.status.lastActivity?.time).toBe(iso(t0));
  });

  it("takes a wake stamped ahead of now as now, so the workload pauses after its idle window, not after the step", () => {
    // Woken by a resume at what a clock two hours fast read as 12:00 (really 10:00), idle since.
    const ahead = withPaused(
      { lastActivity: { time: iso(t0 + 120 * min), source: "manual" } },
      "False",
      "Resumed",
      "resumed",
      t0 + 120 * min,
    );
    const first = decide(observe({ mw: mw({}, ahead), activity: idle(t0) }));
    expect(pausedCondition(first)).toMatchObject({ status: "False", lastTransitionTime: iso(t0) });
    const later = t0 + 31 * min;
    const d = decide(observe({ nowMs: later, mw: mw({}, first.status), activity: idle(later) }));
    expect(d.writes).toContainEqual({ kind: "scale", from: 3, to: 0 });
  });
});

describe("decide: a workload back under Napwake's watch", () => {
  /** Awake and busy five hours ago, then outside Napwake's watch in the way given, for three hours. */
  function unmanagedSince(outside: Partial<Observation>): ManagedWorkloadStatus {
    const awake = decide(observe({ nowMs: t0 - 300 * min, mw: mw(), activity: busy(t0 - 300 * min) }));
    const away = decide(observe({ nowMs: t0 - 180 * min, mw: mw({}, awake.status), ...outside }));
    expect(away.status.phase).toBe("Unmanaged");
    return away.status;
  }

  it.each([
    { how: "scaled to zero by someone else, then up again", outside: { target: target(0), activity: null } },
    {
      how: "let go for the ignore label, which is now removed",
      outside: { target: target(3, {}, { [labels.ignore]: "" }) },
    },
  ])("gets a full idle window when $how, at this reconcile and the next", ({ outside }) => {
    const back = decide(observe({ mw: mw({}, unmanagedSince(outside)), target: target(3) }));
    expect(back.writes).toEqual([]);
    expect(back.status.phase).toBe("Awake");
    const next = decide(observe({ nowMs: t0 + 60_000, mw: mw({}, back.status), target: target(3) }));
    expect(next.writes).toEqual([]);
    const later = decide(observe({ nowMs: t0 + 31 * min, mw: mw({}, next.status), target: target(3) }));
    expect(later.writes.map((w) => w.kind)).toContain("scale");
  });
});

describe("decide: stamps from a clock a little ahead", () => {
  const paused = target(0, { [annotations.pausedFrom]: "3" });
  it.each([
    { name: "wakes on a resume request 1.5 s ahead of this clock", aheadMs: 1_500, wakes: true },
    {
      name: "ignores a stamp an hour ahead: a broken clock must not keep a workload awake",
      aheadMs: 60 * min,
      wakes: false,
    },
  ])("$name", ({ aheadMs, wakes }) => {
    const requested = mw({}, pausedStatus(t0 - 60 * min), {
      annotations: { [annotations.resumeRequested]: iso(t0 + aheadMs) },
    });
    const d = decide(observe({ mw: requested, target: paused, activity: null }));
    expect(d.writes.some((w) => w.kind === "scale")).toBe(wakes);
  });

  it("uses up a pause request stamped ahead, made while paused, with the wake traffic brings in the same look", () => {
    const idlePause: ManagedWorkloadStatus = {
      ...pausedStatus(t0 - 60 * min),
      lastActivity: { time: iso(t0 - 90 * min), source: "cpu" },
      conditions: [
        {
          type: "Paused",
          status: "True",
          reason: "Idle",
          message: "paused from 3 replicas",
          lastTransitionTime: iso(t0 - 60 * min),
        },
      ],
    };
    const requested = { annotations: { [annotations.pauseRequested]: iso(t0 + 3 * min) } };
    const wake = decide(
      observe({
        mw: mw({}, idlePause, requested),
        target: target(0, { [annotations.pausedFrom]: "3", [annotations.lastRequest]: iso(t0) }),
        activity: null,
      }),
    );
    expect(wake.writes).toContainEqual({ kind: "scale", from: 0, to: 3 });
    const after = decide(
      observe({
        nowMs: t0 + 4 * min,
        mw: mw({}, wake.status, requested),
        target: target(3, { [annotations.lastRequest]: iso(t0) }),
        activity: idle(t0 + 4 * min),
      }),
    );
    expect(after.writes).toEqual([]);
  });

  it("pauses once on a pause request stamped ahead: a wake before the stamp does not bring it back", () => {
    // A laptop 3 minutes ahead: the request reads 10:03 when this clock reads 10:00.
    const requested = { annotations: { [annotations.pauseRequested]: iso(t0 + 3 * min) } };
    const pause = decide(observe({ mw: mw({}, awakeFor(1), requested) }));
    expect(pause.writes).toContainEqual({ kind: "scale", from: 3, to: 0 });
    // A request wakes it a minute later, before the stamp's time.
    const wake = decide(
      observe({
        nowMs: t0 + min,
        mw: mw({}, pause.status, requested),
        target: target(0, { [annotations.pausedFrom]: "3", [annotations.lastRequest]: iso(t0 + min) }),
        activity: null,
      }),
    );
    expect(wake.writes).toContainEqual({ kind: "scale", from: 0, to: 3 });
    for (const at of [t0 + 90_000, t0 + 5 * min]) {
      const after = decide(
        observe({
          nowMs: at,
          mw: mw({}, wake.status, requested),
          target: target(3, { [annotations.lastRequest]: iso(t0 + min) }),
          activity: idle(at),
        }),
      );
      expect(after.writes).toEqual([]);
      expect(after.status.phase).toBe("Awake");
    }
  });
});

describe("decide: the DryRun condition", () => {
  const wouldPause = {
    type: "DryRun",
    status: "True" as const,
    reason: "WouldPause",
    message: "dry-run: would pause 3 replicas",
    lastTransitionTime: iso(t0 - 60 * min),
  };
  it.each([
    { name: "flips to False once dry-run is off", dryRun: false, reason: "Off" },
    { name: "flips to False while nothing would be paused", dryRun: true, reason: "WouldNotPause" },
  ])("$name", ({ dryRun, reason }) => {
    const status = { ...awakeFor(5), conditions: [wouldPause] };
    const d = decide(observe({ mw: mw({ dryRun }, status) }));
    const condition = d.status.conditions?.find((c) => c.type === "DryRun");
    expect(condition).toMatchObject({ status: "False", reason });
  });

  it("is not added to a workload that was never in dry-run", () => {
    const d = decide(observe({ mw: mw({}, awakeFor(5)) }));
    expect(d.status.conditions?.find((c) => c.type === "DryRun")).toBeUndefined();
  });
});

describe("decide: a sync loop that undoes pauses", () => {
  const argoOwnsReplicas = {
    manager: "argocd-controller",
    operation: "Update",
    fieldsV1: { "f:spec": { "f:replicas": {} } },
  };
  const restoredBy = (replicas: number, managedFields: TargetState["managedFields"]) => ({
    ...target(replicas, { [annotations.pausedFrom]: "3" }),
    managedFields,
  });
  const undone = (count: number, lastAtMs: number): ManagedWorkloadStatus["pausesUndone"] => ({
    count,
    lastAt: iso(lastAtMs),
    tool: "argocd",
    manager: "argocd-controller",
  });

  it.each([
    { name: "to the count it was paused from", replicas: 3 },
    { name: "to another count", replicas: 5 },
  ])("records a pause Argo CD set back $name, with a Warning that says how to stop it", ({ replicas }) => {
    const d = decide(
      observe({ mw: mw({}, pausedStatus(t0 - 5 * min)), target: restoredBy(replicas, [argoOwnsReplicas]) }),
    );
    expect(d.writes).toEqual([{ kind: "forget-paused-from" }]);
    expect(d.status.phase).toBe("Awake");
    expect(d.status.pausesUndone).toEqual(undone(1, t0));
    // A sync is not traffic: the idle window counts from the wake, and the forecast does not learn it.
    expect(d.status.lastActivity).toEqual(pausedStatus(t0 - 5 * min).lastActivity);
    expect(pausedCondition(d)).toMatchObject({ status: "False", reason: "UndoneByGitOps" });
    expect(d.events).toMatchObject([
      {
        type: "Warning",
        reason: "PauseUndone",
        note: expect.stringMatching(/holds off pausing for 1 h.*ignoreDifferences/),
      },
    ]);
  });

  it("counts pauses undone in a row", () => {
    const status = { ...pausedStatus(t0 - 5 * min), pausesUndone: undone(2, t0 - 3 * 60 * min) };
    const d = decide(observe({ mw: mw({}, status), target: restoredBy(3, [argoOwnsReplicas]) }));
    expect(d.status.pausesUndone?.count).toBe(3);
    expect(d.events[0]?.note).toMatch(/3 in a row.*for 4 h/);
  });

  it.each([
    {
      name: "a resume of Napwake's own whose status write was lost (Napwake owns replicas)",
      status: pausedStatus(t0 - 5 * min),
      fields: [
        {
          manager: "napwake",
          operation: "Update",
          subresource: "scale",
          fieldsV1: { "f:spec": { "f:replicas": {} } },
        },
      ],
      event: "Resumed",
    },
    {
      name: "a pause that never reached its scale (no pausedAt in status)",
      status: {},
      fields: [argoOwnsReplicas],
      event: "Resumed",
    },
    {
      name: "kubectl scale by hand",
      status: pausedStatus(t0 - 5 * min),
      fields: [
        {
          manager: "kubectl",
          operation: "Update",
          subresource: "scale",
          fieldsV1: { "f:spec": { "f:replicas": {} } },
        },
      ],
      event: "ScaledOutsideNapwake",
    },
  ])("does not count $name as an undone pause", ({ status, fields, event }) => {
    const replicas = event === "Resumed" ? 3 : 5;
    const d = decide(observe({ mw: mw({}, status), target: restoredBy(replicas, fields) }));
    expect(d.status.pausesUndone).toBeUndefined();
    expect(d.events).toMatchObject([{ reason: event }]);
  });

  it.each([
    { name: "holds off a due pause within an hour of the first undo", count: 1, agoMin: 59, pauses: false },
    { name: "pauses again once the hour has passed", count: 1, agoMin: 61, pauses: true },
    { name: "holds off four hours after the third undo in a row", count: 3, agoMin: 239, pauses: false },
    {
      name: "holds off at most a day however many pauses were undone",
      count: 12,
      agoMin: 24 * 60 + 1,
      pauses: true,
    },
  ])("$name", ({ count, agoMin, pauses }) => {
    const status = { ...awakeFor(45), pausesUndone: undone(count, t0 - agoMin * min) };
    const d = decide(observe({ mw: mw({}, status) }));
    expect(d.writes.some((w) => w.kind === "scale")).toBe(pauses);
    if (!pauses) {
      expect(d.status.conditions?.find((c) => c.type === "Paused")).toMatchObject({
        status: "False",
        reason: "PauseUndone",
        message: expect.stringMatching(/argocd-controller set spec.replicas back/),
      });
      expect(d.requeueAfterMs).toBeLessThanOrEqual(30_000);
    }
  });

  it("pauses on kubectl napwake pause even while holding off", () => {
    const status = { ...awakeFor(45), pausesUndone: undone(1, t0 - 10 * min) };
    const d = decide(
      observe({ mw: mw({}, status, { annotations: { [annotations.pauseRequested]: iso(t0 - 1_000) } }) }),
    );
    expect(d.writes.some((w) => w.kind === "scale")).toBe(true);
  });

  it("forgets the undone pauses once a pause holds until Napwake wakes the workload", () => {
    const status = { ...pausedStatus(t0 - 60 * min), pausesUndone: undone(2, t0 - 5 * 60 * min) };
    const d = decide(
      observe({
        mw: mw({}, status),
        target: target(0, { [annotations.pausedFrom]: "3", [annotations.lastRequest]: iso(t0 - 1_000) }),
      }),
    );
    expect(d.writes).toContainEqual({ kind: "scale", from: 0, to: 3 });
    expect(d.events).toMatchObject([{ reason: "Resumed" }]);
    expect(d.status.pausesUndone).toBeUndefined();
  });

  it("keeps the undone pauses when Napwake wakes a pause that held less than an hour", () => {
    const status = { ...pausedStatus(t0 - 20 * min), pausesUndone: undone(2, t0 - 5 * 60 * min) };
    const d = decide(
      observe({
        mw: mw({}, status),
        target: target(0, { [annotations.pausedFrom]: "3", [annotations.lastRequest]: iso(t0 - 1_000) }),
      }),
    );
    expect(d.events).toMatchObject([{ reason: "Resumed" }]);
    expect(d.status.pausesUndone).toEqual(status.pausesUndone);
  });

  it("keeps the undone pauses when a resume interrupted before status is finished", () => {
    const status = { pausesUndone: undone(2, t0 - 5 * 60 * min) };
    const d = decide(observe({ mw: mw({}, status), target: target(3, { [annotations.pausedFrom]: "3" }) }));
    expect(d.events).toMatchObject([{ reason: "Resumed" }]);
    expect(d.status.pausesUndone).toEqual(status.pausesUndone);
  });

  it("starts the count again when the last undone pause was more than a week ago", () => {
    const status = { ...pausedStatus(t0 - 5 * min), pausesUndone: undone(4, t0 - 8 * 24 * 60 * min) };
    const d = decide(observe({ mw: mw({}, status), target: restoredBy(3, [argoOwnsReplicas]) }));
    expect(d.status.pausesUndone?.count).toBe(1);
  });

  it("in dry-run, which never scales, holds nothing off and stays in DryRun", () => {
    const status = { ...awakeFor(45), pausesUndone: undone(1, t0 - 10 * min) };
    const d = decide(observe({ mw: mw({ dryRun: true }, status) }));
    expect(d.status.phase).toBe("DryRun");
    expect(d.writes).toEqual([]);
  });
});

describe("activityKnown: whether a check may teach the forecast an idle slot", () => {
  it.each([
    { what: "a complete measurement", t: target(3), sample: idle(t0), want: true },
    {
      what: "a measurement without pod CPU",
      t: target(3),
      sample: { ...idle(t0), cpuCores: null },
      want: false,
    },
    {
      what: "a measurement whose activity query failed",
      t: target(3),
      sample: { ...idle(t0), queries: [{ name: "queue", active: null, error: "timeout" }] },
      want: false,
    },
    {
      what: "a paused workload with nothing to measure",
      t: target(0, { [annotations.pausedFrom]: "3" }),
      sample: null,
      want: true,
    },
    { what: "an awake workload not measured", t: target(3), sample: null, want: false },
    { what: "no target", t: null, sample: idle(t0), want: false },
  ])("$what: $want", ({ t, sample, want }) => {
    expect(activityKnown(t, sample as ActivitySample | null)).toBe(want);
  });
});

describe("decide: stamps and times from other clocks", () => {
  it("writes the same status at each look while a doorman stamp is a little ahead of this clock", () => {
    const ahead = { [annotations.lastRequest]: iso(t0 + 2 * min) };
    const first = decide(observe({ mw: mw({}, awakeFor(1)), target: target(3, ahead) }));
    const second = decide(
      observe({
        nowMs: t0 + 1_000,
        mw: mw({}, first.status),
        target: target(3, ahead),
        activity: idle(t0 + 1_000),
      }),
    );
    expect(first.status.lastActivity).toEqual({ time: iso(t0 + 2 * min), source: "request" });
    expect(statusChanged(first.status, second.status)).toBe(false);
  });

  it("wakes on a request a workload paused at a time ahead of this clock (a former leader's fast clock)", () => {
    const aheadPause: ManagedWorkloadStatus = {
      ...pausedStatus(t0 + 20 * min),
      lastActivity: { time: iso(t0 - 20 * min), source: "cpu" },
      conditions: [
        {
          type: "Paused",
          status: "True",
          reason: "Idle",
          message: "paused from 3 replicas",
          lastTransitionTime: iso(t0 + 20 * min),
        },
      ],
    };
    const d = decide(
      observe({
        mw: mw({}, aheadPause),
        target: target(0, { [annotations.pausedFrom]: "3", [annotations.lastRequest]: iso(t0 - 1_000) }),
        activity: null,
      }),
    );
    expect(d.writes).toContainEqual({ kind: "scale", from: 0, to: 3 });
  });
});

describe("decide: a pause made while a stamp ahead of this clock was known", () => {
  const kinds = (writes: { kind: string }[]) => writes.map((w) => w.kind);
  // The doorman's host is 2 minutes ahead: a request served at 10:00 is stamped 10:02.
  const stampedAhead = { [annotations.lastRequest]: iso(t0 + 2 * min) };
  const requested = { annotations: { [annotations.pauseRequested]: iso(t0 + 30_000) } };
  /** `kubectl napwake pause` 30 s after that request, made at once, and the next look's target. */
  function pausedByHand() {
    const look = decide(observe({ mw: mw({}, awakeFor(60)), target: target(3, stampedAhead) }));
    const pause = decide(
      observe({
        nowMs: t0 + 31_000,
        mw: mw({}, look.status, requested),
        target: target(3, stampedAhead),
        activity: idle(t0 + 31_000),
      }),
    );
    expect(kinds(pause.writes)).toEqual(["record-paused-from", "scale"]);
    return pause.status;
  }
  const paused = (extra: Record<string, string> = {}) =>
    target(0, { ...stampedAhead, [annotations.pausedFrom]: "3", ...extra });

  it("stays paused at the next look: the stamp was known when the pause was made", () => {
    const next = decide(
      observe({
        nowMs: t0 + 32_000,
        mw: mw({}, pausedByHand(), requested),
        target: paused(),
        activity: null,
      }),
    );
    expect(kinds(next.writes)).toEqual([]);
    expect(next.status.phase).toBe("Paused");
  });

  it.each([
    { name: "wakes on a later request from the same fast doorman", stamp: t0 + 2 * min + 40_000 },
    { name: "wakes on a later request stamped by a clock that is right", stamp: t0 + 40_000 },
  ])("$name", ({ stamp }) => {
    const next = decide(
      observe({
        nowMs: t0 + 41_000,
        mw: mw({}, pausedByHand(), requested),
        target: paused({ [annotations.lastRequest]: iso(stamp) }),
        activity: null,
      }),
    );
    expect(next.writes).toContainEqual({ kind: "scale", from: 0, to: 3 });
  });

  it("stays paused after a resume, then a pause, from a laptop 3 minutes ahead", () => {
    const resumeStamp = t0 + 3 * min;
    const resumed = { annotations: { [annotations.resumeRequested]: iso(resumeStamp) } };
    const look = decide(observe({ mw: mw({}, awakeFor(60), resumed) }));
    expect(look.status.lastActivity).toEqual({ time: iso(resumeStamp), source: "manual" });
    // A minute later, `kubectl napwake pause` from the same laptop, stamped after the resume as the plugin does.
    const both = {
      annotations: { ...resumed.annotations, [annotations.pauseRequested]: iso(resumeStamp + min) },
    };
    const pause = decide(
      observe({ nowMs: t0 + min, mw: mw({}, look.status, both), activity: idle(t0 + min) }),
    );
    expect(kinds(pause.writes)).toEqual(["record-paused-from", "scale"]);
    const next = decide(
      observe({
        nowMs: t0 + min + 1_000,
        mw: mw({}, pause.status, both),
        target: target(0, { [annotations.pausedFrom]: "3" }),
        activity: null,
      }),
    );
    expect(kinds(next.writes)).toEqual([]);
  });

  it("stays paused when the next leader's clock is a minute behind the one that paused it by hand", () => {
    const byHand = { annotations: { [annotations.pauseRequested]: iso(t0 - 1_000) } };
    // The old leader reads t0 + 1 min and pauses the busy workload on the request.
    const pause = decide(observe({ nowMs: t0 + min, mw: mw({}, {}, byHand), activity: busy(t0 + min) }));
    expect(kinds(pause.writes)).toEqual(["record-paused-from", "scale"]);
    // The new leader, whose clock is right, looks 30 s later; nothing happened meanwhile.
    const next = decide(
      observe({
        nowMs: t0 + 30_000,
        mw: mw({}, pause.status, byHand),
        target: target(0, { [annotations.pausedFrom]: "3" }),
        activity: null,
      }),
    );
    expect(kinds(next.writes)).toEqual([]);
    expect(next.status.phase).toBe("Paused");
  });
});

describe("decide: activity stamped while a pause was being made", () => {
  /** The pause decided at t0 from a look that saw the workload idle for 40 minutes. */
  const pause = () => decide(observe({ mw: mw({}, awakeFor(40)) }));
  const lookAfter = (status: ManagedWorkloadStatus, on: Record<string, string>, meta = {}) =>
    decide(
      observe({
        nowMs: t0 + 1_000,
        mw: mw({}, status, meta),
        target: target(0, { [annotations.pausedFrom]: "3", ...on }),
        activity: null,
      }),
    );

  it.each([
    { name: "a request stamped 2 s before the pause, after the look it was decided from", stamp: t0 - 2_000 },
    { name: "a request stamped by a doorman whose clock is 20 s behind", stamp: t0 - 20_000 + 1_000 },
  ])("wakes the workload on $name", ({ stamp }) => {
    const paused = pause();
    expect(paused.status.pausedAt).toBe(iso(t0));
    const next = lookAfter(paused.status, { [annotations.lastRequest]: iso(stamp) });
    expect(next.writes).toContainEqual({ kind: "scale", from: 0, to: 3 });
    expect(next.status.lastActivity).toEqual({ time: iso(stamp), source: "request" });
  });

  it("wakes the workload on a kubectl napwake resume stamped just before the pause", () => {
    const next = lookAfter(
      pause().status,
      {},
      { annotations: { [annotations.resumeRequested]: iso(t0 - 500) } },
    );
    expect(next.writes).toContainEqual({ kind: "scale", from: 0, to: 3 });
  });

  it("stays paused on a stamp no newer than the last activity the pause knew of", () => {
    const known = iso(t0 - 40 * min);
    expect(lookAfter(pause().status, { [annotations.lastRequest]: known }).writes).toEqual([]);
    const older = iso(t0 - 50 * min);
    expect(lookAfter(pause().status, { [annotations.activity]: older }).writes).toEqual([]);
  });
});

describe("decide: the Paused condition and the let-go status", () => {
  it("decides the same status again right after a pause: no second status write", () => {
    const pause = decide(observe({ mw: mw({}, awakeFor(40)) }));
    const again = decide(
      observe({
        mw: mw({}, pause.status),
        target: target(0, { [annotations.pausedFrom]: "3" }),
        activity: null,
      }),
    );
    expect(statusChanged(pause.status, again.status)).toBe(false);
  });

  it("does not give a pause by hand, whose status write was lost, the message of the resume before it", () => {
    const resumedBefore: ManagedWorkloadStatus = {
      lastActivity: { time: iso(t0 - 20 * min), source: "cpu" },
      conditions: [
        {
          type: "Paused",
          status: "False",
          reason: "Resumed",
          message: "resumed to 3 replicas: activity while paused",
          lastTransitionTime: iso(t0 - 60 * min),
        },
      ],
    };
    const d = decide(
      observe({
        mw: mw({}, resumedBefore, { annotations: { [annotations.pauseRequested]: iso(t0 - 10 * min) } }),
        target: target(0, { [annotations.pausedFrom]: "3" }),
        activity: null,
      }),
    );
    expect(pausedCondition(d)).toMatchObject({
      status: "True",
      reason: "Requested",
      message: `paused from 3 replicas: kubectl napwake pause at ${iso(t0 - 10 * min)}`,
    });
  });

  it.each<{ how: string; spec: Partial<ManagedWorkloadSpec>; labelsOn: Record<string, string> }>([
    { how: "spec.protected", spec: { protected: true }, labelsOn: {} },
    { how: "the ignore label", spec: {}, labelsOn: { [labels.ignore]: "" } },
  ])("resumes a paused workload let go for $how and leaves no pause in its status", ({ spec, labelsOn }) => {
    const d = decide(
      observe({
        mw: mw(spec, pausedStatus(t0 - 10 * min)),
        target: target(0, { [annotations.pausedFrom]: "3" }, labelsOn),
        activity: null,
      }),
    );
    expect(d.writes).toContainEqual({ kind: "scale", from: 0, to: 3 });
    expect(d.status).toMatchObject({ phase: "Unmanaged" });
    expect(d.status.pausedFrom).toBeUndefined();
    expect(d.status.pausedAt).toBeUndefined();
  });
});

describe("decide: the tool that sets spec.replicas", () => {
  const helm = (replicas: boolean) => ({
    manager: "helm",
    operation: "Update",
    fieldsV1: { "f:spec": replicas ? { "f:replicas": {}, "f:template": {} } : { "f:template": {} } },
  });
  const napwakeScale = {
    manager: "napwake",
    operation: "Update",
    subresource: "scale",
    fieldsV1: { "f:spec": { "f:replicas": {} } },
  };

  it("is still reported once Napwake's own scale to zero has taken spec.replicas from it", () => {
    const awake = withPaused(awakeFor(31), "False", "Active", "the workload is awake", t0 - 120 * min);
    const pause = decide(
      observe({ mw: mw({}, awake), target: { ...target(3), managedFields: [helm(true)] } }),
    );
    expect(pause.status.gitOps?.tool).toBe("helm");
    const paused = {
      ...target(0, { [annotations.pausedFrom]: "3" }),
      managedFields: [helm(false), napwakeScale],
    };
    const next = decide(
      observe({ nowMs: t0 + 1_000, mw: mw({}, pause.status), target: paused, activity: null }),
    );
    expect(next.status.gitOps?.tool).toBe("helm");
    expect(findCondition(next.status.conditions, "GitOpsReplicas")).toMatchObject({
      status: "True",
      reason: "helm",
    });
  });

  it("is no longer reported once someone else has taken spec.replicas", () => {
    const reported = {
      ...awakeFor(1),
      gitOps: { tool: "helm" as const, manager: "helm", message: "helm sets it" },
    };
    const d = decide(
      observe({ mw: mw({}, reported), target: { ...target(3), managedFields: [helm(false)] } }),
    );
    expect(d.status.gitOps).toBeUndefined();
  });
});

describe("decide: dry-run", () => {
  it("records a pause request used up in dry-run as handled, so turning dry-run off does not pause a busy workload", () => {
    // Adopted two hours ago, in dry-run; asked to pause an hour ago; busy since.
    const requested = { annotations: { [annotations.pauseRequested]: iso(t0 - 60 * min) } };
    const status = { ...awakeFor(1), phase: "DryRun" as const };
    const inDryRun = decide(observe({ mw: mw({ dryRun: true }, status, requested), activity: busy(t0) }));
    expect(inDryRun.status.lastHandledPauseRequest).toBe(iso(t0 - 60 * min));
    const later = t0 + 30_000;
    const off = decide(
      observe({ nowMs: later, mw: mw({ dryRun: false }, inDryRun.status, requested), activity: busy(later) }),
    );
    expect(off.writes).toEqual([]);
    expect(off.status.phase).toBe("Awake");
  });

  it.each([
    { when: "before any activity since", activity: idle(t0), would: true },
    {
      when: "used up by activity after it, which a real pause would have woken on",
      activity: busy(t0),
      would: false,
    },
  ])("counts a pause request as a would-be pause $when", ({ activity, would }) => {
    const requested = { annotations: { [annotations.pauseRequested]: iso(t0 - 1_000) } };
    const d = decide(
      observe({ mw: mw({ dryRun: true }, { ...awakeFor(5), phase: "DryRun" }, requested), activity }),
    );
    expect(d.status.phase).toBe("DryRun");
    expect(d.status.dryRun?.wouldPauseSince !== undefined).toBe(would);
  });

  it.each([
    {
      why: "its activity is unknown",
      activity: { atMs: t0, cpuCores: null, queries: [], errors: ["no pod metrics yet"] },
    },
    { why: "its activity is measured idle", activity: idle(t0) },
  ])("stays in phase DryRun when, past its idle window, $why", ({ activity }) => {
    const d = decide(observe({ mw: mw({ dryRun: true }, { ...awakeFor(45), phase: "DryRun" }), activity }));
    expect(d.status.phase).toBe("DryRun");
  });
});

describe("decide: a StatefulSet that deletes its volumes when scaled down", () => {
  const deleting = (replicas: number, annotationsOn: Record<string, string> = {}): TargetState => ({
    ...target(replicas, annotationsOn),
    kind: "StatefulSet",
    deletesVolumesWhenScaled: true,
  });

  it("is never paused, and says how to let Napwake pause it", () => {
    const d = decide(observe({ mw: mw({}, awakeFor(45)), target: deleting(3) }));
    expect(d.writes).toEqual([]);
    expect(d.status.phase).toBe("Unmanaged");
    expect(d.status.conditions?.find((c) => c.type === "Managed")).toMatchObject({
      status: "False",
      reason: "DeletesVolumesWhenScaled",
      message: expect.stringContaining("set whenScaled: Retain"),
    });
  });

  it("is resumed if it was paused before its policy changed", () => {
    const d = decide(
      observe({
        mw: mw({}, pausedStatus(t0 - 10 * min)),
        target: deleting(0, { [annotations.pausedFrom]: "3" }),
        activity: null,
      }),
    );
    expect(d.writes).toContainEqual({ kind: "scale", from: 0, to: 3 });
  });
});

describe("decide: letting a paused workload go", () => {
  it("names, with the let-go that resumed it, the skip the next reconcile makes, so that one is not sent again", () => {
    const protectedMw = (status: ManagedWorkloadStatus) => mw({ protected: true }, status);
    const first = decide(
      observe({
        mw: protectedMw(pausedStatus(t0 - 60 * min)),
        target: target(0, { [annotations.pausedFrom]: "3" }),
      }),
    );
    const next = decide(observe({ nowMs: t0 + 1_000, mw: protectedMw(first.status), target: target(3) }));
    const [action] = first.events;
    const [skip] = next.events;
    expect(action).toMatchObject({ kind: "action", reason: "LetGo" });
    expect(skip).toMatchObject({ kind: "skip", reason: "LetGo" });
    expect(action?.settledAs).toBe(skip?.note);
    expect(skip?.fingerprint).toBeUndefined();
  });
});
