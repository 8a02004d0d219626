import { describe, expect, it } from "vitest";
import type { AdmissionRequest } from "./admission.ts";
import { validateNamespace } from "./namespaces.ts";

type Meta = { labels?: Record<string, string>; annotations?: Record<string, string> };

const request = (metadata: Meta, old?: Meta): AdmissionRequest => ({
  uid: "u1",
  kind: { group: "", version: "v1", kind: "Namespace" },
  resource: { group: "", version: "v1", resource: "namespaces" },
  name: "shop",
  operation: old ? "UPDATE" : "CREATE",
  userInfo: { username: "alice" },
  object: { apiVersion: "v1", kind: "Namespace", metadata: { name: "shop", ...metadata } },
  ...(old ? { oldObject: { apiVersion: "v1", kind: "Namespace", metadata: { name: "shop", ...old } } } : {}),
});

describe("validateNamespace", () => {
  it.each<{ what: string; meta: Meta }>([
    { what: "opting its workloads in", meta: { labels: { "napwake.dev/managed": "true" } } },
    { what: "opting them out", meta: { labels: { "napwake.dev/managed": "false" } } },
    { what: "protecting them", meta: { annotations: { "napwake.dev/protected": "true" } } },
    { what: "other labels", meta: { labels: { team: "shop" } } },
  ])("allows $what", ({ meta }) => {
    expect(validateNamespace(request(meta))).toEqual({ allowed: true });
  });

  it.each<{ what: string; meta: Meta; message: RegExp }>([
    {
      what: "an opt-in that is not true or false (read as an opt-out, it would let go of every workload)",
      meta: { labels: { "napwake.dev/managed": "True" } },
      message:
        /label napwake.dev\/managed="True" is invalid: it must be "true" \(opt in\) or "false" \(opt out\)/,
    },
    {
      what: "a typo in the protection annotation",
      meta: { annotations: { "napwake.dev/protectd": "true" } },
      message:
        /annotation napwake.dev\/protectd is not read on a Namespace. Fix: remove it; a Namespace takes/,
    },
    {
      what: "a bad protection value",
      meta: { annotations: { "napwake.dev/protected": "yes" } },
      message: /annotation napwake.dev\/protected="yes" is invalid: it must be "true" or "false"/,
    },
    {
      what: "a workload's annotation, which does nothing on a Namespace",
      meta: { annotations: { "napwake.dev/cpu-mode": "audit" } },
      message: /annotation napwake.dev\/cpu-mode is not read on a Namespace/,
    },
  ])("refuses $what, saying the fix", ({ meta, message }) => {
    const decision = validateNamespace(request(meta));
    expect(decision).toMatchObject({ allowed: false, code: 422 });
    expect(decision.allowed === false && decision.message).toMatch(/^Napwake refuses Namespace shop: /);
    expect(decision.allowed === false && decision.message).toMatch(message);
  });

  it("does not block an unrelated update of a Namespace that already carries a bad value", () => {
    const stored = { labels: { "napwake.dev/managed": "yes" } };
    expect(validateNamespace(request({ labels: { ...stored.labels, team: "shop" } }, stored))).toEqual({
      allowed: true,
    });
  });
});
