import { describe, expect, it } from "vitest";
import { containerUsageOpenMetrics } from "./history.ts";

const minute = 60_000;

describe("containerUsageOpenMetrics", () => {
  const text = containerUsageOpenMetrics(
    [{ namespace: "ns", pod: "p", container: "c", cpuCores: () => 0.5, memoryBytes: () => 1024 }],
    { end: 10 * minute + 30_000, durationMs: 10 * minute, stepMs: 5 * minute },
  );
  const lines = text.trim().split("\n");

  it("writes one family after the other and ends with # EOF", () => {
    expect(lines[0]).toBe("# TYPE container_cpu_usage_seconds_total counter");
    expect(lines.filter((l) => l.startsWith("# TYPE"))).toHaveLength(2);
    expect(lines.at(-1)).toBe("# EOF");
  });

  it("aligns samples to the step and accumulates CPU as a counter", () => {
    const cpu = lines.filter((l) => l.startsWith("container_cpu_usage_seconds_total"));
    expect(cpu).toEqual([
      'container_cpu_usage_seconds_total{namespace="ns",pod="p",container="c"} 150.000 0',
      'container_cpu_usage_seconds_total{namespace="ns",pod="p",container="c"} 300.000 300',
      'container_cpu_usage_seconds_total{namespace="ns",pod="p",container="c"} 450.000 600',
    ]);
  });

  it("writes memory as a gauge in whole bytes", () => {
    expect(lines.filter((l) => l.startsWith("container_memory_working_set_bytes"))).toHaveLength(3);
    expect(text).toContain(
      'container_memory_working_set_bytes{namespace="ns",pod="p",container="c"} 1024 600',
    );
  });
});
