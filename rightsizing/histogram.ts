// Exponentially bucketed, exponentially decaying histogram (the data structure VPA's recommender
// is built on). Bucket i starts at first * (ratio^i - 1) / (ratio - 1), so buckets grow by `ratio`.

export type BucketScheme = {
  readonly firstBucketSize: number;
  readonly ratio: number;
  readonly maxValue: number;
};

/**
 * Weights are stored relative to `refMs`: a sample at time t weighs w * 2^((t - refMs) / halfLife), so
 * newer samples weigh more and nothing ever has to be rewritten as time passes.
 */
export type DecayingHistogram = {
  refMs: number;
  weights: number[];
  total: number;
};

// Past 2^40 the reference moves forward, keeping the weights far from overflow.
const MAX_DECAY_EXPONENT = 40;

export function bucketCount(scheme: BucketScheme): number {
  const last =
    Math.log((scheme.maxValue * (scheme.ratio - 1)) / scheme.firstBucketSize + 1) / Math.log(scheme.ratio);
  return Math.ceil(last) + 1;
}

export function bucketIndex(scheme: BucketScheme, value: number): number {
  if (!(value >= scheme.firstBucketSize)) return 0;
  const index = Math.floor(
    Math.log((value * (scheme.ratio - 1)) / scheme.firstBucketSize + 1) / Math.log(scheme.ratio),
  );
  return Math.min(index, bucketCount(scheme) - 1);
}

export function bucketStart(scheme: BucketScheme, index: number): number {
  return (scheme.firstBucketSize * (scheme.ratio ** index - 1)) / (scheme.ratio - 1);
}

export function emptyHistogram(scheme: BucketScheme, refMs = 0): DecayingHistogram {
  return { refMs, weights: new Array<number>(bucketCount(scheme)).fill(0), total: 0 };
}

export function cloneHistogram(h: DecayingHistogram): DecayingHistogram {
  return { refMs: h.refMs, weights: [...h.weights], total: h.total };
}

/** Adds a sample in place (callers own the histogram they pass). */
export function addSample(
  h: DecayingHistogram,
  scheme: BucketScheme,
  value: number,
  weight: number,
  atMs: number,
  halfLifeMs: number,
): void {
  if ((atMs - h.refMs) / halfLifeMs > MAX_DECAY_EXPONENT) shiftReference(h, atMs, halfLifeMs);
  const decayed = weight * 2 ** ((atMs - h.refMs) / halfLifeMs);
  const index = bucketIndex(scheme, value);
  h.weights[index] = (h.weights[index] ?? 0) + decayed;
  h.total += decayed;
}

function shiftReference(h: DecayingHistogram, atMs: number, halfLifeMs: number): void {
  const halvings = Math.floor((atMs - h.refMs) / halfLifeMs);
  const factor = 2 ** -halvings;
  h.weights = h.weights.map((w) => w * factor);
  h.total *= factor;
  h.refMs += halvings * halfLifeMs;
}

/** The end of the bucket holding the given fraction of the weight (VPA rounds up to the bucket end); 0 when empty. */
export function percentile(h: DecayingHistogram, scheme: BucketScheme, fraction: number): number {
  const holding = bucketHolding(h, fraction);
  if (!holding) return 0;
  const last = h.weights.length - 1;
  return bucketStart(scheme, Math.min(holding.index + 1, last));
}

/**
 * The value below which the given fraction of the weight lies, interpolated linearly inside the bucket
 * that holds it (weight assumed spread evenly across the bucket); 0 when empty. Unlike `percentile` it does
 * not round up by up to a bucket width (5%), so it is an estimate, not an upper bound.
 */
export function interpolatedPercentile(h: DecayingHistogram, scheme: BucketScheme, fraction: number): number {
  const holding = bucketHolding(h, fraction);
  if (!holding) return 0;
  const last = h.weights.length - 1;
  if (holding.index === last) return bucketStart(scheme, last);
  const start = bucketStart(scheme, holding.index);
  const share = Math.min(1, Math.max(0, fraction * h.total - holding.below) / holding.weight);
  return start + share * (bucketStart(scheme, holding.index + 1) - start);
}

/**
 * The non-empty bucket holding the given fraction of the weight, with the weight below it; null when empty.
 * The buckets are summed in another order than the total was, so they may fall a rounding error short of it
 * (a fraction of 1, "the peak"): the highest non-empty bucket holds the rest, not the histogram's ceiling.
 */
function bucketHolding(
  h: DecayingHistogram,
  fraction: number,
): { index: number; below: number; weight: number } | null {
  if (!(h.total > 0)) return null;
  const threshold = fraction * h.total;
  let below = 0;
  let highest: { index: number; below: number; weight: number } | null = null;
  for (let index = 0; index < h.weights.length; index++) {
    const weight = h.weights[index] ?? 0;
    if (!(weight > 0)) continue;
    if (below + weight >= threshold) return { index, below, weight };
    highest = { index, below, weight };
    below += weight;
  }
  return highest;
}

export function isEmpty(h: DecayingHistogram): boolean {
  return !(h.total > 0);
}
