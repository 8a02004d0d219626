import { describe, expect, it } from "vitest";
import type { ManagedWorkload } from "../../api/managedworkload.ts";
import { otherOwner } from "./owner.ts";

function mw(
  name: string,
  opts: { target?: string; kind?: "Deployment" | "StatefulSet"; created?: string; deleting?: boolean } = {},
): ManagedWorkload {
  return {
    apiVersion: "napwake.dev/v1alpha1",
    kind: "ManagedWorkload",
    metadata: {
      name,
      namespace: "shop",
      ...(opts.created === "" ? {} : { creationTimestamp: opts.created ?? "2026-01-01T00:00:00Z" }),
      ...(opts.deleting ? { deletionTimestamp: "2026-02-01T00:00:00Z" } : {}),
    },
    spec: { targetRef: { kind: opts.kind ?? "Deployment", name: opts.target ?? "web" } },
  };
}

const older = "2025-06-01T00:00:00Z";

describe("otherOwner: which other ManagedWorkload manages the target instead", () => {
  it.each([
    { name: "none when it is alone", self: mw("a"), others: [], want: null },
    {
      name: "none when the others target other workloads",
      self: mw("b"),
      others: [mw("a", { target: "api" })],
      want: null,
    },
    {
      name: "none when the other targets a StatefulSet of the same name",
      self: mw("b"),
      others: [mw("a", { kind: "StatefulSet" })],
      want: null,
    },
    { name: "an older one", self: mw("b"), others: [mw("a", { created: older })], want: "a" },
    { name: "none when it is the older", self: mw("a", { created: older }), others: [mw("b")], want: null },
    { name: "of the same age, the one whose name sorts first", self: mw("b"), others: [mw("a")], want: "a" },
    {
      name: "one with a creation time over itself without",
      self: mw("a", { created: "" }),
      others: [mw("b")],
      want: "b",
    },
    {
      name: "none when the older one is being deleted",
      self: mw("b"),
      others: [mw("a", { created: older, deleting: true })],
      want: null,
    },
    {
      name: "a younger one while it is itself being deleted",
      self: mw("a", { created: older, deleting: true }),
      others: [mw("b")],
      want: "b",
    },
    {
      name: "none while it is being deleted and so is the other",
      self: mw("a", { deleting: true }),
      others: [mw("b", { deleting: true })],
      want: null,
    },
    {
      name: "the oldest of several",
      self: mw("c"),
      others: [mw("b", { created: "2025-09-01T00:00:00Z" }), mw("a", { created: older })],
      want: "a",
    },
  ])("$name", ({ self, others, want }) => {
    expect(otherOwner(self, [self, ...others])).toBe(want);
    expect(otherOwner(self, [...others].reverse())).toBe(want);
  });
});
