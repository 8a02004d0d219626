import { describe, expect, it } from "vitest";
import { admissionReview, applyMutation, mutationPatch, parseAdmissionReview } from "./admission.ts";
import { deployment, workloadRequest } from "./test-requests.ts";

const request = workloadRequest(deployment("web"));
const review = { apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", request };

describe("parseAdmissionReview", () => {
  it("reads a v1 review", () => {
    expect(parseAdmissionReview(review)).toEqual({ request });
  });

  it("defaults a missing userInfo", () => {
    const { userInfo: _, ...rest } = request;
    expect(parseAdmissionReview({ ...review, request: rest })).toEqual({
      request: { ...rest, userInfo: {} },
    });
  });

  it.each([
    { name: "not an object", body: [1], error: /JSON object/ },
    {
      name: "v1beta1",
      body: { ...review, apiVersion: "admission.k8s.io/v1beta1" },
      error: /admissionReviewVersions/,
    },
    { name: "another kind", body: { ...review, kind: "Review" }, error: /kind must be AdmissionReview/ },
    { name: "no request", body: { ...review, request: undefined }, error: /request is missing/ },
    { name: "no uid", body: { ...review, request: { ...request, uid: "" } }, error: /request.uid/ },
    {
      name: "bad operation",
      body: { ...review, request: { ...request, operation: "PATCH" } },
      error: /operation/,
    },
    {
      name: "no kind",
      body: { ...review, request: { ...request, kind: "Deployment" } },
      error: /request.kind/,
    },
    {
      name: "no resource",
      body: { ...review, request: { ...request, resource: null } },
      error: /request.resource/,
    },
    {
      name: "CREATE without object",
      body: { ...review, request: { ...request, object: null } },
      error: /object/,
    },
    {
      name: "UPDATE without oldObject",
      body: { ...review, request: { ...request, operation: "UPDATE" } },
      error: /oldObject/,
    },
  ])("refuses $name with a message", ({ body, error }) => {
    const parsed = parseAdmissionReview(body);
    expect("error" in parsed && parsed.error).toMatch(error);
  });
});

describe("admissionReview", () => {
  it.each([
    {
      name: "an allowed answer without a patch",
      decision: { allowed: true as const, patch: [] },
      want: { uid: "u", allowed: true },
    },
    {
      name: "a patch as base64 JSON Patch",
      decision: { allowed: true as const, patch: [{ op: "remove" as const, path: "/a" }] },
      want: {
        uid: "u",
        allowed: true,
        patchType: "JSONPatch",
        patch: Buffer.from('[{"op":"remove","path":"/a"}]').toString("base64"),
      },
    },
    {
      name: "a refusal with its code and message",
      decision: { allowed: false as const, code: 422, message: "bad", warnings: ["w"] },
      want: { uid: "u", allowed: false, status: { code: 422, message: "bad" }, warnings: ["w"] },
    },
  ])("writes $name, echoing the uid", ({ decision, want }) => {
    expect(admissionReview("u", decision)).toEqual({
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      response: want,
    });
  });
});

describe("mutationPatch", () => {
  it("gives a patch that turns the original into the mutated copy", () => {
    const original = deployment("web", { annotations: { keep: "1", drop: "2" } });
    const mutated = structuredClone(original);
    mutated.metadata = { ...mutated.metadata, annotations: { keep: "1", "napwake.dev/paused-from": "3" } };
    expect(applyMutation(original, mutationPatch(original, mutated))).toEqual(mutated);
    expect(original.metadata?.annotations).toEqual({ keep: "1", drop: "2" });
  });
});
