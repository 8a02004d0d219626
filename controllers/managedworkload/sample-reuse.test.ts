import { describe, expect, it } from "vitest";
import { sampleReusable } from "./controller.ts";

const now = Date.parse("2026-11-23T09:50:00Z");

describe("reusing the last activity sample", () => {
  it.each([
    { what: "reuses one taken within half a check interval", atMs: now - 10_000, reusable: true },
    { what: "measures again after half a check interval", atMs: now - 15_000, reusable: false },
    {
      what: "measures again when the sample is ahead of now (the clock stepped back)",
      atMs: now + 60_000,
      reusable: false,
    },
  ])("$what", ({ atMs, reusable }) => {
    expect(sampleReusable({ atMs }, now, 30_000)).toBe(reusable);
  });
});
