import { describe, expect, it } from "vitest";
import { type AdmissionDecision, applyMutation, type KubeObject } from "./admission.ts";
import { deployment, workloadRequest } from "./test-requests.ts";
import { type OwnerLookup, stampWorkload, validateWorkload } from "./workloads.ts";

const operator = "system:serviceaccount:napwake-system:napwake-operator";
const owners: OwnerLookup = {
  ownerOf: (namespace, kind, name) =>
    namespace === "shop" && name.startsWith("owned") ? `mw-${kind}-${name}` : undefined,
};

function stamped(decision: AdmissionDecision, object: KubeObject): KubeObject {
  expect(decision.allowed).toBe(true);
  return decision.allowed ? applyMutation(object, decision.patch ?? []) : object;
}

describe("stampWorkload", () => {
  it.each([
    {
      name: "stamps managed-by on a created workload a ManagedWorkload targets",
      object: deployment("owned-web"),
      old: undefined,
      username: "alice",
      want: { "napwake.dev/managed-by": "mw-Deployment-owned-web" },
    },
    {
      name: "corrects a managed-by that names the wrong owner",
      object: deployment("owned-web", { annotations: { "napwake.dev/managed-by": "someone-else", a: "b" } }),
      old: undefined,
      username: "alice",
      want: { "napwake.dev/managed-by": "mw-Deployment-owned-web", a: "b" },
    },
    {
      name: "removes a stale managed-by when no ManagedWorkload targets the workload",
      object: deployment("web", { annotations: { "napwake.dev/managed-by": "gone", a: "b" } }),
      old: deployment("web", { annotations: { "napwake.dev/managed-by": "gone", a: "b" } }),
      username: "alice",
      want: { a: "b" },
    },
    {
      name: "stamps paused-from when the operator scales N to 0 through the main resource",
      object: deployment("web", { replicas: 0 }),
      old: deployment("web", { replicas: 3 }),
      username: operator,
      want: { "napwake.dev/paused-from": "3" },
    },
    {
      name: "keeps a paused-from the operator set itself",
      object: deployment("web", { replicas: 0, annotations: { "napwake.dev/paused-from": "5" } }),
      old: deployment("web", { replicas: 3 }),
      username: operator,
      want: { "napwake.dev/paused-from": "5" },
    },
    {
      name: "does not stamp paused-from when someone else scales to 0",
      object: deployment("web", { replicas: 0 }),
      old: deployment("web", { replicas: 3 }),
      username: "alice",
      want: undefined,
    },
    {
      name: "does not stamp paused-from when the workload was already at 0",
      object: deployment("web", { replicas: 0 }),
      old: deployment("web", { replicas: 0 }),
      username: operator,
      want: undefined,
    },
    {
      name: "does not stamp paused-from on a scale-up",
      object: deployment("web", { replicas: 4 }),
      old: deployment("web", { replicas: 0 }),
      username: operator,
      want: undefined,
    },
    {
      name: "does not stamp paused-from on a create at 0",
      object: deployment("web", { replicas: 0 }),
      old: undefined,
      username: operator,
      want: undefined,
    },
    {
      name: "stamps both facts in one write",
      object: deployment("owned-api", { replicas: 0 }),
      old: deployment("owned-api", {
        replicas: 7,
        annotations: { "napwake.dev/managed-by": "mw-Deployment-owned-api" },
      }),
      username: operator,
      want: { "napwake.dev/managed-by": "mw-Deployment-owned-api", "napwake.dev/paused-from": "7" },
    },
  ])("$name", ({ object, old, username, want }) => {
    const decision = stampWorkload(workloadRequest(object, { oldObject: old, username }), owners, {
      operatorUsername: operator,
    });
    const result = stamped(decision, object);
    expect(result.metadata?.annotations).toEqual(want);
    // Nothing else is touched.
    expect({ ...result, metadata: { ...result.metadata, annotations: undefined } }).toEqual({
      ...object,
      metadata: { ...object.metadata, annotations: undefined },
    });
  });

  it("answers with no patch when nothing changes", () => {
    const object = deployment("owned-web", {
      annotations: { "napwake.dev/managed-by": "mw-Deployment-owned-web" },
    });
    expect(stampWorkload(workloadRequest(object), owners, { operatorUsername: operator })).toEqual({
      allowed: true,
      patch: [],
    });
  });

  it("looks the owner up by the kind of the workload", () => {
    const object = { ...deployment("owned-db"), kind: "StatefulSet" };
    const result = stamped(
      stampWorkload(workloadRequest(object), owners, { operatorUsername: operator }),
      object,
    );
    expect(result.metadata?.annotations?.["napwake.dev/managed-by"]).toBe("mw-StatefulSet-owned-db");
  });

  it("patches JSON Pointer-escaped keys correctly", () => {
    const object = deployment("owned-web");
    const decision = stampWorkload(workloadRequest(object), owners, { operatorUsername: operator });
    expect(decision.allowed && decision.patch).toEqual([
      {
        op: "add",
        path: "/metadata/annotations",
        value: { "napwake.dev/managed-by": "mw-Deployment-owned-web" },
      },
    ]);
    const annotated = deployment("owned-web", { annotations: { a: "b" } });
    const second = stampWorkload(workloadRequest(annotated), owners, { operatorUsername: operator });
    expect(second.allowed && second.patch).toEqual([
      { op: "add", path: "/metadata/annotations/napwake.dev~1managed-by", value: "mw-Deployment-owned-web" },
    ]);
  });

  it("lets a lookup failure surface to the server, which fails open", () => {
    const failing: OwnerLookup = {
      ownerOf: () => {
        throw new Error("ManagedWorkload cache not synced");
      },
    };
    expect(() =>
      stampWorkload(workloadRequest(deployment("web")), failing, { operatorUsername: operator }),
    ).toThrow(/not synced/);
  });

  it("leaves other kinds alone", () => {
    const request = {
      ...workloadRequest(deployment("owned-x")),
      kind: { group: "", version: "v1", kind: "Pod" },
    };
    expect(stampWorkload(request, owners, { operatorUsername: operator })).toEqual({ allowed: true });
  });
});

describe("validateWorkload", () => {
  it.each([
    {
      name: "allows a workload without napwake metadata",
      object: deployment("web"),
      old: undefined,
      allowed: true,
    },
    {
      name: "allows good napwake metadata",
      object: deployment("web", {
        annotations: { "napwake.dev/paused-from": "2", "napwake.dev/cpu-mode": "audit" },
        labels: { "napwake.dev/managed": "true" },
      }),
      old: undefined,
      allowed: true,
    },
    {
      name: "refuses a malformed annotation on create",
      object: deployment("web", { annotations: { "napwake.dev/paused-from": "lots" } }),
      old: undefined,
      allowed: false,
    },
    {
      name: "refuses a malformed managed label",
      object: deployment("web", { labels: { "napwake.dev/managed": "yes" } }),
      old: undefined,
      allowed: false,
    },
    {
      name: "refuses an unknown napwake annotation added on update",
      object: deployment("web", { annotations: { "napwake.dev/sleep": "now" } }),
      old: deployment("web"),
      allowed: false,
    },
    {
      name: "lets an update through that leaves a stored bad value unchanged",
      object: deployment("web", { replicas: 5, annotations: { "napwake.dev/paused-from": "lots" } }),
      old: deployment("web", { annotations: { "napwake.dev/paused-from": "lots" } }),
      allowed: true,
    },
  ])("$name", ({ object, old, allowed }) => {
    expect(validateWorkload(workloadRequest(object, { oldObject: old })).allowed).toBe(allowed);
  });

  it("refuses with code 422 and a message naming the workload, the annotation, the value and the fix", () => {
    const object = deployment("web", { annotations: { "napwake.dev/paused-from": "0" } });
    expect(validateWorkload(workloadRequest(object))).toEqual({
      allowed: false,
      code: 422,
      message:
        'Napwake refuses Deployment shop/web: annotation napwake.dev/paused-from="0" is invalid: it must be a ' +
        "positive integer up to 2147483647 (the replica count to restore on resume). " +
        'Fix: set it to a value like "3", or remove it.',
    });
  });
});
