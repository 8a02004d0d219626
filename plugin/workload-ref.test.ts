import { describe, expect, it } from "vitest";
import type { ManagedWorkload, TargetKind } from "../api/managedworkload.ts";
import { parseWorkloadRef, resolveWorkload } from "./workload-ref.ts";

describe("parseWorkloadRef", () => {
  it.each([
    ["web", { kind: null, name: "web" }],
    ["deployment/web", { kind: "Deployment", name: "web" }],
    ["deploy/web", { kind: "Deployment", name: "web" }],
    ["deployments.apps/web", { kind: "Deployment", name: "web" }],
    ["statefulset/db", { kind: "StatefulSet", name: "db" }],
    ["StatefulSet/db", { kind: "StatefulSet", name: "db" }],
    ["sts/db", { kind: "StatefulSet", name: "db" }],
  ])("reads %s", (text, ref) => {
    expect(parseWorkloadRef(text)).toEqual(ref);
  });

  it.each([
    ["daemonset/agent", 'Napwake manages Deployments and StatefulSets, not "daemonset"'],
    ["deployment/", "is not a workload"],
    ["/web", "is not a workload"],
    ["a/b/c", "is not a workload"],
    ["", "is not a workload"],
  ])("refuses %j", (text, message) => {
    expect(parseWorkloadRef(text)).toEqual({ error: expect.stringContaining(message) });
  });
});

function mw(
  name: string,
  kind: TargetKind,
  target: string,
  created = "2030-01-01T00:00:00Z",
): ManagedWorkload {
  return {
    apiVersion: "napwake.dev/v1alpha1",
    kind: "ManagedWorkload",
    metadata: { name, namespace: "shop", creationTimestamp: created },
    spec: { targetRef: { kind, name: target } },
  };
}

describe("resolveWorkload", () => {
  const mws = [
    mw("web.deployment", "Deployment", "web"),
    mw("db.statefulset", "StatefulSet", "db"),
    mw("cache-owner", "StatefulSet", "cache"),
    mw("web", "StatefulSet", "web"),
  ];

  it.each([
    ["a bare name as a Deployment", { kind: null, name: "web" }, "web.deployment"],
    ["a kind and name by its target", { kind: "StatefulSet", name: "db" }, "db.statefulset"],
    ["a StatefulSet sharing a Deployment's name", { kind: "StatefulSet", name: "web" }, "web"],
    ["a bare ManagedWorkload name", { kind: null, name: "cache-owner" }, "cache-owner"],
    [
      "a bare name as a StatefulSet, when no Deployment of it is managed",
      { kind: null, name: "cache" },
      "cache-owner",
    ],
  ] as const)("finds %s", (_, ref, name) => {
    const found = resolveWorkload(ref, mws);
    expect(found.kind === "managed" && found.mw.metadata.name).toBe(name);
  });

  it.each([
    ["a workload nothing targets", { kind: "Deployment", name: "api" }, { kind: "Deployment", name: "api" }],
    ["a bare name as a Deployment", { kind: null, name: "api" }, { kind: "Deployment", name: "api" }],
    [
      "a ManagedWorkload name given with a kind",
      { kind: "StatefulSet", name: "cache-owner" },
      {
        kind: "StatefulSet",
        name: "cache-owner",
      },
    ],
  ] as const)("reports %s as unmanaged", (_, ref, target) => {
    expect(resolveWorkload(ref, mws)).toEqual({ kind: "unmanaged", target });
  });

  it("picks the oldest of two owners, as the controller does", () => {
    const owners = [
      mw("newer", "Deployment", "api", "2030-01-02T00:00:00Z"),
      mw("older", "Deployment", "api", "2030-01-01T00:00:00Z"),
    ];
    const found = resolveWorkload({ kind: "Deployment", name: "api" }, owners);
    expect(found.kind === "managed" && found.mw.metadata.name).toBe("older");
  });

  it.each([
    [
      "skips an older owner being deleted: the younger one owns the target",
      [
        {
          ...mw("old", "Deployment", "api", "2030-01-01T00:00:00Z"),
          metadata: {
            name: "old",
            namespace: "shop",
            creationTimestamp: "2030-01-01T00:00:00Z",
            deletionTimestamp: "2030-01-03T00:00:00Z",
          },
        },
        mw("new", "Deployment", "api", "2030-01-02T00:00:00Z"),
      ],
      "new",
    ],
    [
      "counts an owner without a creation time as the newest",
      [mw("untimed", "Deployment", "api", ""), mw("timed", "Deployment", "api", "2030-01-02T00:00:00Z")],
      "timed",
    ],
  ])("%s, as the controller does", (_, owners, name) => {
    const found = resolveWorkload({ kind: "Deployment", name: "api" }, owners);
    expect(found.kind === "managed" && found.mw.metadata.name).toBe(name);
  });
});
