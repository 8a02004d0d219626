import { describe, expect, it } from "vitest";
import { setCondition, withOwnConditions } from "./conditions.ts";
import { conditionTypes, managedWorkloadConditionTypes, rightsizingConditionTypes } from "./keys.ts";
import type { Condition, ManagedWorkloadStatus } from "./managedworkload.ts";

const earlier = "2026-01-01T00:00:00.000Z";
const now = "2026-01-02T00:00:00.000Z";
const paused: Condition = {
  type: "Paused",
  status: "True",
  reason: "Idle",
  message: "idle",
  lastTransitionTime: earlier,
};

describe("setCondition", () => {
  it.each([
    { name: "keeps the transition time when the status stays", status: "True" as const, want: earlier },
    { name: "moves the transition time when the status flips", status: "False" as const, want: now },
  ])("$name", ({ status, want }) => {
    const [c] = setCondition([paused], { type: "Paused", status, reason: "Other", message: "m" }, now, 4);
    expect(c).toEqual({
      type: "Paused",
      status,
      reason: "Other",
      message: "m",
      lastTransitionTime: want,
      observedGeneration: 4,
    });
  });

  it("adds a condition it has not seen, stamped now", () => {
    const list = setCondition(
      [paused],
      { type: "Managed", status: "True", reason: "R", message: "m" },
      now,
      1,
    );
    expect(list.map((c) => [c.type, c.lastTransitionTime])).toEqual([
      ["Paused", earlier],
      ["Managed", now],
    ]);
  });

  it("does not change the list it was given", () => {
    const list = [paused];
    setCondition(list, { type: "Paused", status: "False", reason: "R", message: "m" }, now, 1);
    expect(list[0]).toBe(paused);
  });
});

describe("withOwnConditions", () => {
  const other: Condition = { ...paused, type: "PolicyChecked" };
  it.each([
    { name: "drops the conditions other tools set", conditions: [other, paused], want: [paused] },
    { name: "keeps an empty list empty, so removing the last one is applied", conditions: [], want: [] },
  ])("$name", ({ conditions, want }) => {
    expect(withOwnConditions({ phase: "Awake", conditions }, ["Paused"])).toEqual({
      phase: "Awake",
      conditions: want,
    });
  });

  it("sends no conditions field when status has none", () => {
    const status: ManagedWorkloadStatus = { phase: "Awake" };
    expect(withOwnConditions(status, ["Paused"])).toEqual({ phase: "Awake" });
  });
});

describe("the condition types each status is applied with", () => {
  it("hold every type Napwake sets, so none is removed by its own apply", () => {
    expect([...managedWorkloadConditionTypes, ...rightsizingConditionTypes].sort()).toEqual(
      Object.values(conditionTypes).sort(),
    );
  });
});
