import { describe, expect, it } from "vitest";
import { annotationProblem, isRfc3339, type Metadata, metadataProblems } from "./metadata-rules.ts";

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
    expect(annotationProblem(key, value)).toBeUndefined();
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
    const problem = annotationProblem(key, value);
    expect(problem).toContain(key);
    expect(problem).toContain(JSON.stringify(value));
    expect(problem).toContain(expected);
    expect(problem).toContain("Fix:");
  });

  it("refuses an unknown napwake annotation and lists the known ones", () => {
    const problem = annotationProblem("napwake.dev/paused-form", "3");
    expect(problem).toMatch(/napwake.dev\/paused-form is not a Napwake annotation/);
    expect(problem).toContain("napwake.dev/paused-from");
    expect(problem).toContain("napwake.dev/memory-mode");
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
  ])("isRfc3339(%s) is %s", (value, want) => {
    expect(isRfc3339(value)).toBe(want);
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
      name: "leaves the value of the ignore label alone",
      meta: { labels: { "napwake.dev/ignore": "whatever" } },
      old: undefined,
      want: 0,
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
      "label napwake.dev/manage is not a Napwake label. Fix: remove it, or use one of napwake.dev/managed, napwake.dev/ignore.",
    ],
  ])("refuses %s, as it refuses an unknown annotation", (_, key, problem) => {
    expect(metadataProblems({ labels: { [key]: "true" } })).toEqual([problem]);
    // Stored before (the webhook was down): not in the way of unrelated writes.
    expect(metadataProblems({ labels: { [key]: "true" } }, { labels: { [key]: "true" } })).toEqual([]);
  });

  it("says what the managed label must be", () => {
    expect(metadataProblems({ labels: { "napwake.dev/managed": "yes" } })[0]).toBe(
      'label napwake.dev/managed="yes" is invalid: it must be "true" (opt in) or "false" (opt out). ' +
        'Fix: set it to "true" or "false", or remove it.',
    );
  });
});
