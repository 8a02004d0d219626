import { describe, expect, it } from "vitest";
import { formatMebibytes, formatMillicores, parseQuantity, quantityOrUndefined } from "./quantity.ts";

describe("parseQuantity", () => {
  it.each([
    ["250m", 0.25],
    ["1", 1],
    ["1.5", 1.5],
    ["100n", 1e-7],
    ["5u", 5e-6],
    ["128Mi", 128 * 2 ** 20],
    ["1Gi", 2 ** 30],
    ["2k", 2000],
    ["1e3", 1000],
    ["1.5E-3", 0.0015],
    [".5", 0.5],
    [3, 3],
  ])("reads %s as %d", (input, want) => {
    expect(parseQuantity(input)).toBeCloseTo(want, 12);
  });

  // A quantity is the decimal it is written as, rounded once: 700m is the same number as 0.7, never above it.
  it.each([
    ["700m", "0.7"],
    ["350m", "0.35"],
    ["9m", "0.009"],
    ["700000000n", "0.7"],
    ["3e-1", "0.3"],
    ["1.e-3", "0.001"],
    ["-.5k", "-500"],
  ])("reads %s as exactly the number %s is", (written, decimal) => {
    expect(parseQuantity(written)).toBe(Number(decimal));
  });

  it("refuses a quantity too large to read as a number, rather than reading it as Infinity", () => {
    expect(() => parseQuantity("1e400")).toThrow(/too large/);
    expect(() => parseQuantity("9".repeat(400))).toThrow(/too large/);
  });

  it.each(["", "abc", "1Xi", "12 Mi", "m"])(
    "rejects %j with a message that shows valid examples",
    (input) => {
      expect(() => parseQuantity(input)).toThrow(/not a Kubernetes quantity.*250m/);
    },
  );
});

describe("formatting", () => {
  it("writes cores as millicores", () => expect(formatMillicores(0.2504)).toBe("250m"));
  it("writes bytes as mebibytes", () => expect(formatMebibytes(64 * 2 ** 20)).toBe("64Mi"));
  it("writes bytes that are no whole mebibytes exactly, in bytes", () =>
    expect(formatMebibytes(1e9)).toBe("1000000000"));
});

describe("quantityOrUndefined", () => {
  it.each([
    { quantity: "128Mi", want: 128 * 2 ** 20 },
    { quantity: "250m", want: 0.25 },
    { quantity: "lots", want: undefined },
    { quantity: undefined, want: undefined },
  ])("reads $quantity as $want", ({ quantity, want }) => {
    expect(quantityOrUndefined(quantity)).toBe(want);
  });
});
