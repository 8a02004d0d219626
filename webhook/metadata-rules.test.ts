import { describe, expect, it } from "vitest";
import { isRfc3339 } from "../api/meta.ts";
import { quotedValue } from "../api/text.ts";
import {
  type AnnotatedKind,
  annotationProblem,
  editDistance,
  type Metadata,
  metadataProblems,
} from "./metadata-rules.ts";

/** The kind each annotation is read on: kubectl napwake's requests on a ManagedWorkload, the rest on workloads. */
const kindFor = (key: string): AnnotatedKind => (key.endsWith("-requested") ? "ManagedWorkload" : "workload");

describe("napwake annotation values", () => {
  it.each([
    ["napwake.dev/paused-from", "3"],
    ["napwake.dev/paused-from", "2147483647"],
    ["napwake.dev/managed-by", "my-app"],
    ["napwake.dev/managed-by", "my.app-2"],
    ["napwake.dev/protected", "true"],
    ["napwake.dev/protected", "false"],
    ["napwake.dev/last-request", "2026-01-31T09:30:00Z"],
    ["napwake.dev/activity", "2026-01-31T09:30:00.123+02:00"],
    ["napwake.dev/pause-requested", "2024-02-29T23:59:59z"],
    ["napwake.dev/resume-requested", "2026-12-31t00:00:00-05:30"],
    ["napwake.dev/cpu-mode", "off"],
    ["napwake.dev/cpu-mode", "audit"],
    ["napwake.dev/memory-mode", "auto-patch"],
  ])("accepts %s=%s", (key, value) => {
    expect(annotationProblem(key, value, kindFor(key))).toBeUndefined();
  });

  it.each([
    ["napwake.dev/paused-from", "0", "positive integer"],
    ["napwake.dev/paused-from", "-2", "positive integer"],
    ["napwake.dev/paused-from", "03", "positive integer"],
    ["napwake.dev/paused-from", "2.5", "positive integer"],
    ["napwake.dev/paused-from", "three", "positive integer"],
    ["napwake.dev/paused-from", "2147483648", "positive integer"],
    ["napwake.dev/paused-from", "", "positive integer"],
    ["napwake.dev/managed-by", "My_App", "DNS-1123"],
    ["napwake.dev/managed-by", "-app", "DNS-1123"],
    ["napwake.dev/managed-by", "a".repeat(254), "DNS-1123"],
    ["napwake.dev/protected", "yes", '"true" or "false"'],
    ["napwake.dev/protected", "True", '"true" or "false"'],
    ["napwake.dev/last-request", "yesterday", "RFC 3339"],
    ["napwake.dev/activity", "2026-02-30T00:00:00Z", "RFC 3339"],
    ["napwake.dev/activity", "2026-01-01T24:00:00Z", "RFC 3339"],
    ["napwake.dev/pause-requested", "2026-01-01 10:00:00Z", "RFC 3339"],
    ["napwake.dev/resume-requested", "2026-01-01T10:00:00", "RFC 3339"],
    ["napwake.dev/cpu-mode", "on", "off, audit, auto-patch"],
    ["napwake.dev/memory-mode", "autopatch", "off, audit, auto-patch"],
  ])("refuses %s=%j, naming the key, the value and the fix", (key, value, expected) => {
    const problem = annotationProblem(key, value, kindFor(key));
    expect(problem).toContain(key);
    expect(problem).toContain(quotedValue(value));
    expect(problem).toContain(expected);
    expect(problem).toContain("Fix:");
  });

  it("refuses an unknown napwake annotation, suggests the key it is a typo of and lists those read there", () => {
    expect(annotationProblem("napwake.dev/paused-form", "3")).toBe(
      "annotation napwake.dev/paused-form is not a Napwake annotation. Did you mean napwake.dev/paused-from? " +
        "Fix: remove it, or use one of napwake.dev/managed-by, napwake.dev/paused-from, napwake.dev/protected, " +
        "napwake.dev/last-request, napwake.dev/activity, napwake.dev/cpu-mode, napwake.dev/memory-mode.",
    );
    // A typo of a key read on the other kind is not suggested: it would be refused here too.
    expect(annotationProblem("napwake.dev/protectd", "true", "ManagedWorkload")).not.toMatch(/Did you mean/);
    expect(annotationProblem("napwake.dev/pause", "2026-01-31T09:30:00Z", "ManagedWorkload")).toBe(
      "annotation napwake.dev/pause is not a Napwake annotation. " +
        "Fix: remove it, or use one of napwake.dev/pause-requested, napwake.dev/resume-requested.",
    );
  });

  it.each<{ name: string; key: string; value: string; on: AnnotatedKind; problem: string }>([
    {
      name: "a pause request on the workload, where it would do nothing",
      key: "napwake.dev/pause-requested",
      value: "2026-01-31T09:30:00Z",
      on: "workload",
      problem:
        "annotation napwake.dev/pause-requested does nothing on a workload: Napwake reads it on a ManagedWorkload. " +
        "Fix: run kubectl napwake pause or resume, which sets it on the workload's ManagedWorkload.",
    },
    {
      name: "protection on a ManagedWorkload",
      key: "napwake.dev/protected",
      value: "true",
      on: "ManagedWorkload",
      problem:
        "annotation napwake.dev/protected does nothing on a ManagedWorkload: Napwake reads it on the workload " +
        "(Deployment or StatefulSet). Fix: set spec.protected: true here, or annotate the workload.",
    },
    {
      name: "activity on a ManagedWorkload",
      key: "napwake.dev/activity",
      value: "2026-01-31T09:30:00Z",
      on: "ManagedWorkload",
      problem:
        "annotation napwake.dev/activity does nothing on a ManagedWorkload: Napwake reads it on the workload " +
        "(Deployment or StatefulSet). Fix: set it on the target workload.",
    },
    {
      name: "a label given as an annotation",
      key: "napwake.dev/managed",
      value: "true",
      on: "workload",
      problem:
        "annotation napwake.dev/managed does nothing: Napwake reads napwake.dev/managed as a label. " +
        "Fix: set it as a label instead.",
    },
  ])("refuses $name, with the fix", ({ key, value, on, problem }) => {
    expect(annotationProblem(key, value, on)).toBe(problem);
  });

  it.each([
    ["", "", 0],
    ["paused-form", "paused-from", 2],
    ["protectd", "protected", 1],
    ["kitten", "sitting", 3],
    ["abc", "", 3],
  ])("edit distance from %j to %j is %i", (a, b, want) => {
    expect(editDistance(a, b)).toBe(want);
    expect(editDistance(b, a)).toBe(want);
  });

  it.each([
    ["2026-01-31T09:30:00Z", true],
    ["2026-01-31T09:30:00+23:59", true],
    ["2026-01-31T09:30:00+24:00", false],
    ["2026-13-01T00:00:00Z", false],
    ["2026-00-10T00:00:00Z", false],
    ["2026-04-31T00:00:00Z", false],
    ["2026-01-31T09:60:00Z", false],
    ["2026-01-31T09:30:60Z", false],
    ["2026-01-31T09:30:00.123456789Z", true],
    ["2026-01-31T09:30:00.1234567890Z", false],
    [`2026-01-31T09:30:00.${"1".repeat(50)}Z`, false],
  ])("isRfc3339(%s) is %s", (value, want) => {
    expect(isRfc3339(value)).toBe(want);
  });
});

describe("time stamps ahead of the cluster's clock", () => {
  const now = Date.parse("2026-11-30T18:22:00Z");
  const ahead = (minutes: number) => new Date(now + minutes * 60_000).toISOString();
  it.each([
    {
      name: "refuses an activity stamp years ahead",
      key: "napwake.dev/activity",
      value: "2030-01-01T00:00:00Z",
      refused: true,
    },
    {
      name: "refuses a request stamp 7 minutes ahead",
      key: "napwake.dev/last-request",
      value: ahead(7),
      refused: true,
    },
    {
      name: "refuses a resume request from a clock 6 minutes fast",
      key: "napwake.dev/resume-requested",
      value: ahead(6),
      refused: true,
    },
    {
      name: "takes a stamp 4 minutes ahead: clocks drift that far",
      key: "napwake.dev/activity",
      value: ahead(4),
      refused: false,
    },
    {
      name: "takes a stamp in the past",
      key: "napwake.dev/pause-requested",
      value: ahead(-60),
      refused: false,
    },
  ])("$name", ({ key, value, refused }) => {
    const problem = annotationProblem(key, value, kindFor(key), now);
    if (!refused) return expect(problem).toBeUndefined();
    expect(problem).toBe(
      `annotation ${key}="${value}" is more than 5 minutes ahead of the cluster's clock (2026-11-30T18:22:00Z): it must ` +
        "be when the activity was seen or the request made, not a time to come. Fix: set it to a time no later " +
        'than now, like "2026-11-30T18:22:00Z", and check the clock of whatever wrote it.',
    );
  });

  it("checks nothing against a clock it was not given", () => {
    expect(annotationProblem("napwake.dev/activity", "2030-01-01T00:00:00Z")).toBeUndefined();
  });
});

describe("metadataProblems", () => {
  it.each<{ name: string; meta: Metadata; old: Metadata | undefined; want: number }>([
    {
      name: "ignores annotations and labels of other owners",
      meta: {
        annotations: { "example.com/x": "y", "kubectl.kubernetes.io/restartedAt": "now" },
        labels: { app: "a" },
      },
      old: undefined,
      want: 0,
    },
    {
      name: "refuses every bad napwake annotation at once",
      meta: { annotations: { "napwake.dev/paused-from": "x", "napwake.dev/protected": "maybe" } },
      old: undefined,
      want: 2,
    },
    {
      name: "refuses a managed label that is not true or false",
      meta: { labels: { "napwake.dev/managed": "yes" } },
      old: undefined,
      want: 1,
    },
    {
      name: "accepts the managed label false",
      meta: { labels: { "napwake.dev/managed": "false" } },
      old: undefined,
      want: 0,
    },
    {
      name: "takes any value of the ignore label that does not say no",
      meta: { labels: { "napwake.dev/ignore": "whatever" } },
      old: undefined,
      want: 0,
    },
    {
      name: "refuses an ignore label whose value says no: it would ignore the workload all the same",
      meta: { labels: { "napwake.dev/ignore": "False" } },
      old: undefined,
      want: 1,
    },
    {
      name: "on UPDATE, lets a bad value already stored through",
      meta: { annotations: { "napwake.dev/paused-from": "x" }, labels: { "napwake.dev/managed": "yes" } },
      old: { annotations: { "napwake.dev/paused-from": "x" }, labels: { "napwake.dev/managed": "yes" } },
      want: 0,
    },
    {
      name: "on UPDATE, refuses a value changed to a bad one",
      meta: { annotations: { "napwake.dev/paused-from": "0" } },
      old: { annotations: { "napwake.dev/paused-from": "3" } },
      want: 1,
    },
  ])("$name", ({ meta, old, want }) => {
    expect(metadataProblems(meta, old)).toHaveLength(want);
  });

  it.each([
    [
      "an annotation given as a label",
      "napwake.dev/protected",
      "label napwake.dev/protected does nothing: Napwake reads napwake.dev/protected as an annotation. Fix: set it as an annotation instead.",
    ],
    [
      "a misspelt label",
      "napwake.dev/manage",
      "label napwake.dev/manage is not a Napwake label. Did you mean napwake.dev/managed? Fix: remove it, or use one of napwake.dev/managed, napwake.dev/ignore.",
    ],
  ])("refuses %s, as it refuses an unknown annotation", (_, key, problem) => {
    expect(metadataProblems({ labels: { [key]: "true" } })).toEqual([problem]);
    // Stored before (the webhook was down): not in the way of unrelated writes.
    expect(metadataProblems({ labels: { [key]: "true" } }, { labels: { [key]: "true" } })).toEqual([]);
  });

  it("quotes at most 64 characters of a bad value: an annotation may hold 256 KiB", () => {
    const [problem] = metadataProblems({ annotations: { "napwake.dev/paused-from": "9".repeat(200_000) } });
    expect(problem).toContain(`napwake.dev/paused-from="${"9".repeat(64)}"… is invalid`);
    expect(problem?.length).toBeLessThan(400);
  });

  it.each([
    {
      name: "a misspelt label on a ManagedWorkload: none is read there, so none is suggested",
      label: ["napwake.dev/manged", "true"],
      on: "ManagedWorkload" as const,
      problem:
        "label napwake.dev/manged is not a Napwake label, and Napwake reads no napwake.dev/ label on a ManagedWorkload. Fix: remove it.",
    },
    {
      name: "a ManagedWorkload's annotation as a label on a workload: kubectl napwake sets it where it is read",
      label: ["napwake.dev/pause-requested", "2026-01-31T09:30:00Z"],
      on: "workload" as const,
      problem:
        "label napwake.dev/pause-requested does nothing on a workload: Napwake reads it as an annotation on a ManagedWorkload. Fix: run kubectl napwake pause or resume, which sets it on the workload's ManagedWorkload.",
    },
    {
      name: "a workload's annotation as a label on a ManagedWorkload: set on the workload, or the spec field",
      label: ["napwake.dev/protected", "true"],
      on: "ManagedWorkload" as const,
      problem:
        "label napwake.dev/protected does nothing on a ManagedWorkload: Napwake reads it as an annotation on the workload (Deployment or StatefulSet). Fix: set spec.protected: true here, or annotate the workload.",
    },
  ])("gives a fix that is not refused in turn: $name", ({ label: [key, value], on, problem }) => {
    expect(metadataProblems({ labels: { [key as string]: value as string } }, undefined, on)).toEqual([
      problem,
    ]);
  });

  it.each([
    [
      "label",
      { labels: { "napwake.dev/ignore": "" } },
      "label napwake.dev/ignore does nothing on a ManagedWorkload",
    ],
    [
      "label",
      { labels: { "napwake.dev/managed": "false" } },
      "label napwake.dev/managed does nothing on a ManagedWorkload",
    ],
    [
      "annotation",
      { annotations: { "napwake.dev/ignore": "" } },
      "annotation napwake.dev/ignore does nothing: Napwake reads napwake.dev/ignore as a label",
    ],
  ])(
    "refuses a workload's %s on a ManagedWorkload, and says to set it on the workload",
    (_, meta, problem) => {
      const [found] = metadataProblems(meta, undefined, "ManagedWorkload");
      expect(found).toContain(problem);
      expect(found).toContain("set it as a label on the target workload (Deployment or StatefulSet)");
    },
  );

  it("says what the managed label must be", () => {
    expect(metadataProblems({ labels: { "napwake.dev/managed": "yes" } })[0]).toBe(
      'label napwake.dev/managed="yes" is invalid: it must be "true" (opt in) or "false" (opt out). ' +
        'Fix: set it to "true" or "false", or remove it.',
    );
  });
});
