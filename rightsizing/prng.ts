// A tiny seeded PRNG (mulberry32) for reproducible synthetic traces in tests and benchmarks.

export type Random = () => number;

/** Uniform numbers in [0, 1), the same sequence for the same seed. */
export function seededRandom(seed: number): Random {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Normally distributed noise (Box-Muller), mean 0 and the given standard deviation. */
export function gaussian(random: Random, stdDev: number): number {
  const u = Math.max(random(), Number.EPSILON);
  return stdDev * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * random());
}
