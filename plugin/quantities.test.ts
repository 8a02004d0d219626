import { describe, expect, it } from "vitest";
import {
  formatChange,
  formatChanges,
  formatCpu,
  formatMemory,
  formatValue,
  formatValues,
} from "./quantities.ts";

describe("formatCpu", () => {
  it.each([
    [0.25, "250m"],
    [1, "1"],
    [2, "2"],
    [1.5, "1500m"],
    [0.0104, "10m"],
    [0.0004, "<1m"],
    [0, "0"],
    [0.9999, "1"],
  ])("%f cores shows as %s", (cores, text) => {
    expect(formatCpu(cores)).toBe(text);
  });
});

describe("formatMemory", () => {
  it.each([
    [512 * 2 ** 20, "512Mi"],
    [2 ** 30, "1Gi"],
    [1.5 * 2 ** 30, "1.5Gi"],
    [1e9, "954Mi"],
    [12.34 * 2 ** 20, "12.3Mi"],
    [1.234 * 2 ** 30, "1.23Gi"],
    [3 * 2 ** 40, "3Ti"],
    [64 * 2 ** 10, "64Ki"],
    [1023.9 * 2 ** 20, "1Gi"],
    [1023.7 * 2 ** 10, "1Mi"],
    [500, "500"],
    [0, "0"],
  ])("%d bytes shows as %s", (bytes, text) => {
    expect(formatMemory(bytes)).toBe(text);
  });
});

describe("formatValue", () => {
  it.each([
    ["cpuRequest", "250m", "250m"],
    ["cpuRequest", "0.5", "500m"],
    ["cpuRequest", "2000m", "2"],
    ["memoryRequest", "536870912", "512Mi"],
    ["memoryRequest", "1G", "954Mi"],
    ["memoryLimit", "1024Mi", "1Gi"],
    ["memoryLimit", undefined, "-"],
    ["memoryLimit", "lots", "lots"],
  ] as const)("%s %s shows as %s", (key, quantity, text) => {
    expect(formatValue(key, quantity)).toBe(text);
  });
});

describe("formatValues", () => {
  it.each([
    [{ cpuRequest: "250m", memoryRequest: "512Mi", memoryLimit: "1Gi" }, "250m/512Mi/1Gi"],
    [{ cpuRequest: "100m", memoryRequest: "128Mi" }, "100m/128Mi/-"],
    [{}, "-/-/-"],
  ])("%o shows as %s", (values, text) => {
    expect(formatValues(values)).toBe(text);
  });
});

describe("formatChange", () => {
  it.each([
    ["500m", "300m", "-40%"],
    ["512Mi", "384Mi", "-25%"],
    ["1Gi", "1126Mi", "+10%"],
    ["1", "1000m", "0%"],
    ["1000m", "999m", "0%"],
    ["100m", "250m", "+150%"],
    [undefined, "250m", "new"],
    ["0", "250m", "new"],
    ["250m", undefined, "-"],
    [undefined, undefined, "-"],
    ["lots", "250m", "?"],
    ["250m", "lots", "?"],
  ])("from %s to %s is %s", (current, recommended, text) => {
    expect(formatChange(current, recommended)).toBe(text);
  });
});

describe("formatChanges", () => {
  it.each([
    [
      { cpuRequest: "500m", memoryRequest: "512Mi", memoryLimit: "1Gi" },
      { cpuRequest: "300m", memoryRequest: "384Mi", memoryLimit: "1126Mi" },
      "-40%/-25%/+10%",
    ],
    [{}, { cpuRequest: "10m", memoryRequest: "32Mi" }, "new/new/-"],
  ])("from %o to %o is %s", (current, recommended, text) => {
    expect(formatChanges(current, recommended)).toBe(text);
  });
});
