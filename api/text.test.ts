import { describe, expect, it } from "vitest";
import { quotedValue, replicaCount } from "./text.ts";

describe("replicaCount", () => {
  it.each([
    { count: 0, text: "0 replicas" },
    { count: 1, text: "1 replica" },
    { count: 3, text: "3 replicas" },
    { count: "1", text: "1 replica" },
    { count: "2", text: "2 replicas" },
  ])("writes $count as $text", ({ count, text }) => {
    expect(replicaCount(count)).toBe(text);
  });
});

describe("quotedValue", () => {
  it.each([
    { name: "quotes a short value whole", value: "three", want: '"three"' },
    { name: "cuts a long one and says so", value: "x".repeat(70), want: `"${"x".repeat(64)}"…` },
    {
      name: "cuts between characters, never inside one",
      value: "😀".repeat(65),
      want: `"${"😀".repeat(64)}"…`,
    },
  ])("$name", ({ value, want }) => {
    expect(quotedValue(value)).toBe(want);
  });
});
