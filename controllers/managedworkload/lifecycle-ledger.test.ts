import { describe, expect, it } from "vitest";
import { type Counted, type DecidedOn, LifecycleLedger, specSeen } from "./lifecycle-ledger.ts";
import type { Write } from "./observation.ts";

const pausedAt = "2026-11-30T10:00:00Z";
const scaleUp: Write = { kind: "scale", from: 0, to: 3 };
const forget: Write = { kind: "forget-paused-from" };
const resume: Write[] = [scaleUp, forget];
const pause: Write[] = [
  { kind: "record-paused-from", replicas: 3 },
  { kind: "scale", from: 3, to: 0 },
];

/** One reconcile: the decision's writes, those that landed (a prefix: the first that fails ends the reconcile). */
type Reconcile = { writes: Write[]; landed: number; source: string; pausedAt?: string; spec?: string };

function counted(reconciles: Reconcile[], ledger = new LifecycleLedger()): Counted[] {
  const all: Counted[] = [];
  for (const r of reconciles) {
    const decided: DecidedOn = {
      pausedAt: "pausedAt" in r ? r.pausedAt : pausedAt,
      source: r.source,
      spec: "spec" in r ? r.spec : "uid-1/4",
    };
    ledger.decided("shop/web", r.writes, decided);
    for (const write of r.writes.slice(0, r.landed)) {
      const c = ledger.landed("shop/web", write, decided);
      if (c) all.push(c);
    }
  }
  return all;
}

const wake = (source: string): Counted => ({ kind: "wake", source });

describe("counting pauses and wakes as writes land", () => {
  it.each<{ name: string; reconciles: Reconcile[]; want: Counted[] }>([
    {
      name: "a pause, when its scale to zero lands",
      reconciles: [
        {
          writes: [
            { kind: "record-paused-from", replicas: 3 },
            { kind: "scale", from: 3, to: 0 },
          ],
          landed: 2,
          source: "cpu",
        },
      ],
      want: [{ kind: "pause" }],
    },
    {
      name: "a wake once, though its resume is decided again, after all its writes landed, from a cache behind them",
      reconciles: [
        // Its status write failed after both writes landed; the retry read the workload still paused.
        { writes: resume, landed: 2, source: "manual" },
        { writes: resume, landed: 2, source: "manual" },
      ],
      want: [wake("manual")],
    },
    {
      name: "a pause once, though decided again from a cache that had not seen its scale to zero",
      reconciles: [
        { writes: pause, landed: 2, source: "cpu" },
        { writes: pause, landed: 2, source: "cpu" },
      ],
      want: [{ kind: "pause" }],
    },
    {
      name: "each pause of a workload paused, woken and paused again",
      reconciles: [
        { writes: pause, landed: 2, source: "cpu", spec: "uid-1/4" },
        { writes: resume, landed: 2, source: "manual", spec: "uid-1/5" },
        { writes: pause, landed: 2, source: "cpu", spec: "uid-1/6" },
      ],
      want: [{ kind: "pause" }, wake("manual"), { kind: "pause" }],
    },
    {
      name: "each pause of a workload deleted and made again under its name, at the same generation",
      reconciles: [
        { writes: pause, landed: 2, source: "cpu", spec: "uid-1/1" },
        { writes: pause, landed: 2, source: "cpu", spec: "uid-2/1" },
      ],
      want: [{ kind: "pause" }, { kind: "pause" }],
    },
    {
      name: "each pause where the generation is not known",
      reconciles: [
        { writes: pause, landed: 2, source: "cpu", spec: undefined },
        { writes: pause, landed: 2, source: "cpu", spec: undefined },
      ],
      want: [{ kind: "pause" }, { kind: "pause" }],
    },
    {
      name: "a resume, once, with what woke it",
      reconciles: [{ writes: resume, landed: 2, source: "manual" }],
      want: [wake("manual")],
    },
    {
      name: "a resume whose forget failed, once: finishing it counts nothing more",
      reconciles: [
        { writes: resume, landed: 1, source: "manual" },
        { writes: [forget], landed: 1, source: "cpu" },
      ],
      want: [wake("manual")],
    },
    {
      name: "a resume KEDA brought up first, at the scale from its minimum, with what woke it",
      reconciles: [
        { writes: resume, landed: 0, source: "forecast" },
        { writes: [{ kind: "scale", from: 1, to: 3, finishesWake: true }, forget], landed: 2, source: "cpu" },
      ],
      want: [wake("forecast")],
    },
    {
      name: "a resume KEDA brought to the very count it was paused from, as its pause is forgotten",
      reconciles: [
        { writes: resume, landed: 0, source: "manual" },
        { writes: [forget], landed: 1, source: "cpu" },
      ],
      want: [wake("manual")],
    },
    {
      name: "a resume KEDA answered first and then let go, as its pause is forgotten",
      reconciles: [
        { writes: resume, landed: 0, source: "dry-run" },
        { writes: [forget], landed: 1, source: "cpu" },
      ],
      want: [wake("dry-run")],
    },
    {
      name: "nothing for a pause that never happened, forgotten as it is let go",
      reconciles: [{ writes: [forget], landed: 1, source: "cpu" }],
      want: [],
    },
    {
      name: "nothing more when an autoscaler moved the count before the forget was made again",
      reconciles: [
        { writes: resume, landed: 1, source: "manual" },
        { writes: [forget], landed: 1, source: "scale-up" },
      ],
      want: [wake("manual")],
    },
    {
      name: "nothing for a later pause forgotten, from a resume owed for an earlier one",
      reconciles: [
        { writes: resume, landed: 0, source: "manual" },
        { writes: [forget], landed: 1, source: "cpu", pausedAt: "2026-11-30T12:00:00Z" },
      ],
      want: [],
    },
    {
      name: "a resume once, though KEDA scaled it down before its failed forget was made again",
      reconciles: [
        { writes: resume, landed: 1, source: "manual" },
        { writes: [{ kind: "scale", from: 1, to: 3, finishesWake: true }, forget], landed: 2, source: "cpu" },
      ],
      want: [wake("manual")],
    },
    {
      name: "nothing for a resume decided but not made, when the workload is later scaled up outside",
      reconciles: [
        { writes: resume, landed: 0, source: "manual" },
        { writes: [], landed: 0, source: "cpu" },
        { writes: [forget], landed: 1, source: "scale-up" },
      ],
      want: [],
    },
    {
      name: "a scale from KEDA's minimum decided by an operator that did not see the resume, with what it reads",
      reconciles: [
        { writes: [{ kind: "scale", from: 1, to: 3, finishesWake: true }, forget], landed: 2, source: "cpu" },
      ],
      want: [wake("cpu")],
    },
  ])("counts $name", ({ reconciles, want }) => {
    expect(counted(reconciles)).toEqual(want);
  });

  it("names a workload's spec by its uid and generation, and none without a generation", () => {
    expect(specSeen({ uid: "uid-1", generation: 4 })).toBe("uid-1/4");
    expect(specSeen({ uid: "uid-1" })).toBeUndefined();
  });

  it("forgets what a deleted ManagedWorkload was owed", () => {
    const ledger = new LifecycleLedger();
    counted([{ writes: resume, landed: 0, source: "manual" }], ledger);
    ledger.forget("shop/web");
    expect(counted([{ writes: [forget], landed: 1, source: "cpu" }], ledger)).toEqual([]);
  });
});
