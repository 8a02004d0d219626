import { describe, expect, it } from "vitest";
import {
  addSample,
  bucketCount,
  bucketIndex,
  bucketStart,
  emptyHistogram,
  interpolatedPercentile,
  percentile,
} from "./histogram.ts";

const scheme = { firstBucketSize: 0.01, ratio: 1.05, maxValue: 1000 };
const DAY_MS = 86_400_000;

describe("exponential buckets", () => {
  it.each([
    { value: 0, bucket: 0 },
    { value: 0.005, bucket: 0 },
    { value: 0.01, bucket: 1 },
    { value: 0.021, bucket: 2 },
    { value: 1e9, bucket: bucketCount(scheme) - 1 },
  ])("puts $value in bucket $bucket", ({ value, bucket }) => {
    expect(bucketIndex(scheme, value)).toBe(bucket);
  });

  it("grows each bucket by 5%", () => {
    const width = (i: number) => bucketStart(scheme, i + 1) - bucketStart(scheme, i);
    expect(width(10) / width(9)).toBeCloseTo(1.05, 10);
  });
});

describe("decaying histogram", () => {
  it("answers a percentile with the end of its bucket", () => {
    const h = emptyHistogram(scheme);
    for (const v of [0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0]) addSample(h, scheme, v, 1, 0, DAY_MS);
    const p50 = percentile(h, scheme, 0.5);
    expect(p50).toBe(bucketStart(scheme, bucketIndex(scheme, 0.5) + 1));
  });

  it("gives a sample one half-life newer twice the weight", () => {
    const h = emptyHistogram(scheme);
    addSample(h, scheme, 0.1, 1, 0, DAY_MS);
    addSample(h, scheme, 1, 1, DAY_MS, DAY_MS);
    expect(h.weights[bucketIndex(scheme, 1)]).toBeCloseTo(2 * (h.weights[bucketIndex(scheme, 0.1)] ?? 0), 10);
  });

  it("keeps relative weights when the reference time moves far ahead", () => {
    const h = emptyHistogram(scheme);
    addSample(h, scheme, 0.1, 1, 100 * DAY_MS, DAY_MS);
    addSample(h, scheme, 1, 1, 101 * DAY_MS, DAY_MS);
    expect(Number.isFinite(h.total)).toBe(true);
    expect(h.weights[bucketIndex(scheme, 1)]).toBeCloseTo(2 * (h.weights[bucketIndex(scheme, 0.1)] ?? 0), 10);
  });

  it("is 0 when empty", () => {
    expect(percentile(emptyHistogram(scheme), scheme, 0.9)).toBe(0);
  });
});

describe("a percentile of 1, the peak", () => {
  // Seven decayed samples: the buckets, summed in bucket order, fall a rounding error short of the total
  // summed in sample order.
  const h = emptyHistogram(scheme);
  for (const [i, v] of [0.1, 0.7, 0.2, 0.4, 0.9, 0.3, 0.1].entries()) {
    addSample(h, scheme, v, 1, i * 300_000, 86_400_000);
  }
  const endOfPeak = bucketStart(scheme, bucketIndex(scheme, 0.9) + 1);
  it("is the end of the highest bucket with weight, not the histogram's ceiling", () => {
    expect(percentile(h, scheme, 1)).toBe(endOfPeak);
  });
  it("interpolated, lies within that bucket", () => {
    expect(interpolatedPercentile(h, scheme, 1)).toBeLessThanOrEqual(endOfPeak);
    expect(interpolatedPercentile(h, scheme, 1)).toBeGreaterThan(0.9);
  });
});

describe("interpolated percentile", () => {
  const lone = emptyHistogram(scheme);
  addSample(lone, scheme, 0.5, 1, 0, DAY_MS);
  const start = bucketStart(scheme, bucketIndex(scheme, 0.5));
  const end = bucketStart(scheme, bucketIndex(scheme, 0.5) + 1);

  it.each([
    { fraction: 0, expected: start },
    { fraction: 0.25, expected: start + 0.25 * (end - start) },
    { fraction: 0.9, expected: start + 0.9 * (end - start) },
    { fraction: 1, expected: end },
  ])(
    "puts fraction $fraction of a lone bucket's weight that far into the bucket",
    ({ fraction, expected }) => {
      expect(interpolatedPercentile(lone, scheme, fraction)).toBeCloseTo(expected, 12);
    },
  );

  // Evenly spread over [0, 0.951]: the true p90 (0.856) sits near the start of its bucket, whose end is
  // 5.5% higher; the true p50 (0.4755) near the end of its own.
  const spread = emptyHistogram(scheme);
  for (let i = 0; i < 10_000; i++) addSample(spread, scheme, (0.951 * (i + 0.5)) / 10_000, 1, 0, DAY_MS);

  it.each([
    { fraction: 0.5, truth: 0.4755 },
    { fraction: 0.9, truth: 0.8559 },
    { fraction: 0.95, truth: 0.90345 },
  ])(
    "estimates p$fraction of evenly spread values within 0.5%, never past the bucket end",
    ({ fraction, truth }) => {
      const estimate = interpolatedPercentile(spread, scheme, fraction);
      expect(Math.abs(estimate / truth - 1)).toBeLessThan(0.005);
      expect(estimate).toBeLessThanOrEqual(percentile(spread, scheme, fraction));
    },
  );

  it("is 0 when empty", () => {
    expect(interpolatedPercentile(emptyHistogram(scheme), scheme, 0.9)).toBe(0);
  });
});
