import { describe, expect, it } from "vitest";
import { isMaterialChange, relativeChange } from "./change.ts";

const MIB = 1024 * 1024;

describe("relativeChange", () => {
  it.each([
    { current: 1, recommended: 0.5, expected: -0.5 },
    { current: 0.2, recommended: 0.3, expected: 0.5 },
    { current: 100, recommended: 100, expected: 0 },
    { current: undefined, recommended: 1, expected: null },
    { current: 0, recommended: 1, expected: null },
  ])("is $expected from $current to $recommended", ({ current, recommended, expected }) => {
    const change = relativeChange(current, recommended);
    if (expected === null) expect(change).toBeNull();
    else expect(change).toBeCloseTo(expected, 10);
  });
});

describe("isMaterialChange", () => {
  const before = { cpuRequestCores: 1, memoryRequestBytes: 1024 * MIB, memoryLimitBytes: 1024 * MIB };
  it.each([
    { name: "nothing changed", after: before, material: false },
    { name: "CPU moved 5%", after: { ...before, cpuRequestCores: 1.05 }, material: false },
    { name: "CPU moved 10%", after: { ...before, cpuRequestCores: 0.9 }, material: true },
    {
      name: "memory request moved 20%",
      after: { ...before, memoryRequestBytes: 1229 * MIB },
      material: true,
    },
    { name: "memory limit moved 9%", after: { ...before, memoryLimitBytes: 1116 * MIB }, material: false },
    { name: "memory limit moved 12%", after: { ...before, memoryLimitBytes: 1147 * MIB }, material: true },
  ])("is $material when $name", ({ after, material }) => {
    expect(isMaterialChange(before, after)).toBe(material);
  });

  it.each([
    {
      name: "a tiny CPU request moves 4m (40%)",
      before: { cpuRequestCores: 0.01 },
      after: { cpuRequestCores: 0.014 },
      material: false,
    },
    {
      name: "a tiny memory request moves 6 MiB (50%)",
      before: { memoryRequestBytes: 12 * MIB },
      after: { memoryRequestBytes: 18 * MIB },
      material: false,
    },
    {
      name: "a CPU request moves by exactly the 5m minimum (40m to 45m, 12.5%)",
      before: { cpuRequestCores: 0.04 },
      after: { cpuRequestCores: 0.045 },
      material: true,
    },
    {
      name: "a value appears for the first time",
      before: {},
      after: { cpuRequestCores: 0.1 },
      material: true,
    },
    { name: "a value is not recommended", before: { cpuRequestCores: 1 }, after: {}, material: false },
  ])("is $material when $name", ({ before, after, material }) => {
    expect(isMaterialChange(before, after)).toBe(material);
  });
});
