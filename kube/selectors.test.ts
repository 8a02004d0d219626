import { describe, expect, it } from "vitest";
import { labelSelectorString } from "./selectors.ts";

describe("labelSelectorString", () => {
  it.each([
    {
      name: "joins matchLabels",
      selector: { matchLabels: { app: "web", tier: "fe" } },
      want: "app=web,tier=fe",
    },
    {
      name: "writes every expression operator",
      selector: {
        matchExpressions: [
          { key: "env", operator: "In", values: ["a", "b"] },
          { key: "x", operator: "NotIn", values: ["c"] },
          { key: "y", operator: "Exists" },
          { key: "z", operator: "DoesNotExist" },
        ],
      },
      want: "env in (a,b),x notin (c),y,!z",
    },
    { name: "selects everything when empty", selector: undefined, want: "" },
  ])("$name", ({ selector, want }) => {
    expect(labelSelectorString(selector)).toBe(want);
  });
});
