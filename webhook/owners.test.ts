import { describe, expect, it } from "vitest";
import type { KubeObject } from "./admission.ts";
import { cachedOwnerLookup, ownerAmong } from "./owners.ts";

function mw(
  name: string,
  target: { kind: string; name: string },
  opts: { namespace?: string; created?: string; deleting?: boolean } = {},
): KubeObject {
  return {
    apiVersion: "napwake.dev/v1alpha1",
    kind: "ManagedWorkload",
    metadata: {
      name,
      namespace: opts.namespace ?? "shop",
      creationTimestamp: opts.created ?? "2026-01-01T00:00:00Z",
      ...(opts.deleting ? { deletionTimestamp: "2026-01-02T00:00:00Z" } : {}),
    },
    spec: { targetRef: { apiVersion: "apps/v1", ...target } },
  };
}

const web = { kind: "Deployment", name: "web" };

describe("ownerAmong", () => {
  it.each([
    { name: "finds the ManagedWorkload targeting the workload", mws: [mw("a", web)], want: "a" },
    {
      name: "answers undefined when none does",
      mws: [mw("a", { kind: "Deployment", name: "api" })],
      want: undefined,
    },
    {
      name: "does not confuse kinds",
      mws: [mw("a", { kind: "StatefulSet", name: "web" })],
      want: undefined,
    },
    { name: "looks in the namespace only", mws: [mw("a", web, { namespace: "other" })], want: undefined },
    { name: "leaves out one being deleted", mws: [mw("a", web, { deleting: true })], want: undefined },
    {
      name: "picks the oldest of several",
      mws: [
        mw("young", web, { created: "2026-03-01T00:00:00Z" }),
        mw("old", web, { created: "2026-02-01T00:00:00Z" }),
      ],
      want: "old",
    },
    {
      name: "breaks a tie on age by name",
      mws: [mw("b", web), mw("a", web)],
      want: "a",
    },
    {
      name: "breaks a tie by name when neither has a creation time, whatever the list's order",
      mws: [mw("a", web, { created: "" }), mw("b", web, { created: "" })],
      want: "a",
    },
    {
      name: "takes one with a creation time over one without",
      mws: [mw("a", web, { created: "" }), mw("b", web, { created: "2026-03-01T00:00:00Z" })],
      want: "b",
    },
    {
      name: "passes over an older one being deleted",
      mws: [mw("old", web, { created: "2025-01-01T00:00:00Z", deleting: true }), mw("new", web)],
      want: "new",
    },
  ])("$name", ({ mws, want }) => {
    expect(ownerAmong(mws, "shop", "Deployment", "web")).toBe(want);
  });
});

describe("cachedOwnerLookup", () => {
  it("throws until the cache has synced, so the handlers fail open", () => {
    expect(() => cachedOwnerLookup(() => undefined).ownerOf("shop", "Deployment", "web")).toThrow(
      /not synced/,
    );
  });

  it("reads the namespace's ManagedWorkloads from the cache", () => {
    const lookup = cachedOwnerLookup((ns) => (ns === "shop" ? [mw("a", web)] : []));
    expect(lookup.ownerOf("shop", "Deployment", "web")).toBe("a");
    expect(lookup.ownerOf("other", "Deployment", "web")).toBeUndefined();
  });
});
