import { describe, expect, it } from "vitest";
import { replicaCount } from "./text.ts";

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
