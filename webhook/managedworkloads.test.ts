import { describe, expect, it } from "vitest";
import { validateManagedWorkload } from "./managedworkloads.ts";
import { managedWorkload, managedWorkloadRequest } from "./test-requests.ts";
import type { OwnerLookup } from "./workloads.ts";

// "web" is owned by ManagedWorkload "first".
const owners: OwnerLookup = {
  ownerOf: (_ns, kind, name) => (kind === "Deployment" && name === "web" ? "first" : undefined),
};
const web = { kind: "Deployment", name: "web" };

describe("validateManagedWorkload", () => {
  it.each([
    {
      name: "allows the first owner of a target",
      object: managedWorkload("first", web),
      old: undefined,
      allowed: true,
    },
    {
      name: "allows a ManagedWorkload for an unowned target",
      object: managedWorkload("second", { kind: "Deployment", name: "api" }),
      old: undefined,
      allowed: true,
    },
    {
      name: "allows an owner to be updated",
      object: managedWorkload("first", web, { "napwake.dev/pause-requested": "2026-01-01T00:00:00Z" }),
      old: managedWorkload("first", web),
      allowed: true,
    },
    {
      name: "refuses a second owner",
      object: managedWorkload("second", web),
      old: undefined,
      allowed: false,
    },
    {
      name: "refuses moving a ManagedWorkload onto an owned target",
      object: managedWorkload("second", web),
      old: managedWorkload("second", { kind: "Deployment", name: "api" }),
      allowed: false,
    },
    {
      name: "lets an existing duplicate be updated (e.g. its finalizers removed)",
      object: managedWorkload("second", web),
      old: managedWorkload("second", web),
      allowed: true,
    },
    {
      name: "does not confuse kinds: a StatefulSet named web is another target",
      object: managedWorkload("second", { kind: "StatefulSet", name: "web" }),
      old: undefined,
      allowed: true,
    },
    {
      name: "leaves a missing target to the CRD schema",
      object: { ...managedWorkload("second", web), spec: {} },
      old: undefined,
      allowed: true,
    },
    {
      name: "refuses a malformed pause-requested time",
      object: managedWorkload("first", web, { "napwake.dev/pause-requested": "now" }),
      old: undefined,
      allowed: false,
    },
  ])("$name", ({ object, old, allowed }) => {
    expect(validateManagedWorkload(managedWorkloadRequest(object, old), owners).allowed).toBe(allowed);
  });

  it("names the existing owner and the fix", () => {
    expect(validateManagedWorkload(managedWorkloadRequest(managedWorkload("second", web)), owners)).toEqual({
      allowed: false,
      code: 403,
      message:
        "Napwake refuses ManagedWorkload shop/second: Deployment web is already managed by ManagedWorkload first, " +
        "and a workload has one owner. Fix: change ManagedWorkload first instead (or delete it first), " +
        "or point this one at another workload.",
    });
  });

  const inZone = (name: string, timeZone: string) => ({
    ...managedWorkload(name, { kind: "Deployment", name: "api" }),
    spec: { targetRef: { kind: "Deployment", name: "api" }, forecast: { timeZone } },
  });

  it.each([
    { name: "a known zone", object: inZone("a", "Europe/Berlin"), old: undefined, allowed: true },
    { name: "a link to one", object: inZone("a", "US/Pacific"), old: undefined, allowed: true },
    { name: "an unknown zone", object: inZone("a", "Europe/Atlantis"), old: undefined, allowed: false },
    {
      name: "an unknown zone set on an update",
      object: inZone("a", "Europe/Atlantis"),
      old: inZone("a", "Europe/Berlin"),
      allowed: false,
    },
    {
      name: "an unknown zone stored before, left as it is (the object stays editable)",
      object: inZone("a", "Europe/Atlantis"),
      old: inZone("a", "Europe/Atlantis"),
      allowed: true,
    },
  ])("spec.forecast.timeZone: $name, allowed $allowed", ({ object, old, allowed }) => {
    expect(validateManagedWorkload(managedWorkloadRequest(object, old), owners).allowed).toBe(allowed);
  });

  it("says which time zone it does not know and what to set", () => {
    const decision = validateManagedWorkload(managedWorkloadRequest(inZone("a", "Europe/Atlantis")), owners);
    expect(decision).toEqual({
      allowed: false,
      code: 422,
      message:
        'Napwake refuses ManagedWorkload shop/a: spec.forecast.timeZone: unknown time zone "Europe/Atlantis": ' +
        'use an IANA name such as "Europe/Berlin", "America/New_York" or "UTC"',
    });
  });

  it("reads the target where the injected function says", () => {
    const object = { ...managedWorkload("second", { kind: "x", name: "y" }), spec: { workload: web } };
    const decision = validateManagedWorkload(
      managedWorkloadRequest(object),
      owners,
      (mw) => (mw.spec as { workload: { kind: "Deployment"; name: string } }).workload,
    );
    expect(decision.allowed).toBe(false);
  });
});
