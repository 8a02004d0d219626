import { describe, expect, it } from "vitest";
import { formatDuration } from "./duration.ts";

describe("durations in messages", () => {
  it.each([
    [0, "0ms"],
    [500, "500ms"],
    [40_000, "40s"],
    [80_000, "1m20s"],
    [600_000, "10m"],
    [5_400_000, "1h30m"],
    [86_400_000, "24h"],
    [3_601_000, "1h1s"],
    [59_999, "1m"],
  ])("writes %i ms as %s", (ms, text) => {
    expect(formatDuration(ms)).toBe(text);
  });
});
