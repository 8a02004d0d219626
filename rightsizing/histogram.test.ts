import { describe, expect, it } from "vitest";
import { addSample, bucketCount, bucketIndex, bucketStart, emptyHistogram, percentile } from "./histogram.ts";

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
