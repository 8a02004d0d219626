import { describe, expect, it } from "vitest";
import { DAY_MS, historyOf, MIB, samplesOf, shapes } from "../test-support.ts";
import { krrRecommend, quantile } from "./krr.ts";
import { vpaEmptyState, vpaFold, vpaRecommend } from "./vpa.ts";

describe("VPA-style baseline", () => {
  it.each([
    { name: "steady", shape: shapes.steady, cpu: [0.28, 0.32], memMiB: [690, 760] },
    { name: "tiny", shape: () => ({ cpu: 0.005, memMiB: 20 }), cpu: [0.025, 0.025], memMiB: [250, 250] },
  ])("recommends p90 plus 15%, at least 25m and 250 MiB ($name)", ({ shape, cpu, memMiB }) => {
    const { samples } = historyOf(samplesOf(4 * DAY_MS, shape));
    const rec = vpaRecommend(vpaFold(vpaEmptyState(), samples, [], { cpuCores: 1, memoryBytes: GIB_BYTES }));
    expect(rec.cpuCores).toBeGreaterThanOrEqual(cpu[0] ?? 0);
    expect(rec.cpuCores).toBeLessThanOrEqual(cpu[1] ?? 0);
    expect(rec.memoryBytes / MIB).toBeGreaterThanOrEqual(memMiB[0] ?? 0);
    expect(rec.memoryBytes / MIB).toBeLessThanOrEqual(memMiB[1] ?? 0);
  });

  it("bumps memory after an OOM to max(request + 100 MiB, request x 1.2)", () => {
    const { samples } = historyOf(samplesOf(DAY_MS, shapes.steady));
    const oom = { t: (samples[10]?.t ?? 0) + 1, memoryBytes: 600 * MIB };
    const rec = vpaRecommend(
      vpaFold(vpaEmptyState(), samples, [oom], { cpuCores: 1, memoryBytes: 1000 * MIB }),
    );
    expect(rec.memoryBytes).toBeGreaterThanOrEqual(1200 * MIB * 1.15);
  });
});

const GIB_BYTES = 1024 * MIB;

describe("KRR simple baseline", () => {
  it.each([
    { values: [1, 2, 3, 4, 5], q: 0.5, expected: 3 },
    { values: [1, 2, 3, 4, 5], q: 0.95, expected: 4.8 },
    { values: [7], q: 0.95, expected: 7 },
  ])("interpolates quantiles like Prometheus ($q of $values)", ({ values, q, expected }) => {
    expect(quantile(values, q)).toBeCloseTo(expected, 10);
  });

  it("recommends CPU p95 and memory peak + 15% over 14 days, nothing with too few points", () => {
    const samples = samplesOf(2 * DAY_MS, shapes.steady);
    const now = (samples[samples.length - 1]?.t ?? 0) + 1;
    const rec = krrRecommend(samples, now);
    expect(rec?.memoryBytes).toBeGreaterThan(600 * MIB * 1.15);
    expect(krrRecommend(samples.slice(0, 50), now)).toBeNull();
  });
});
