// From an expected count to the chance of any activity at all in a slot. Requests come in bursts (a
// user session, a scheduled job), so three requests expected in a slot may well be one burst or none:
// the chance that a slot sees any activity is 1 - exp(-mean / burstSize), bursts arriving as Poisson.
// The burst size is calibrated on the kept history so the predicted and the observed number of
// active slots agree. A series of 0 and 1 (activity seen in the slot or not) is its own chance.

import type { ForecastConfig } from "./config.ts";

/** Bounds of the calibrated burst size: one request per burst at least. */
export const MIN_BURST_SIZE = 1;
export const MAX_BURST_SIZE = 1000;
/**
 * Burst size of a series that only ever held 0 and 1 (activity seen in the slot or not, as the
 * operator records it): its mean is already the chance of activity.
 */
export const OCCUPANCY = 0;

const CALIBRATION_STEPS = 30;

/** Chance of at least one request in a slot with `mean` requests expected. */
export function activityProbability(mean: number, burstSize: number): number {
  if (!(mean > 0)) return 0;
  if (burstSize === OCCUPANCY) return Math.min(1, mean);
  return 1 - Math.exp(-mean / Math.max(MIN_BURST_SIZE, burstSize));
}

/** A slot counts as "activity expected" when both its chance of activity and its mean reach the config's thresholds. */
export function isActivityExpected(mean: number, burstSize: number, config: ForecastConfig): boolean {
  return (
    mean > 0 &&
    mean >= config.activityThreshold &&
    activityProbability(mean, burstSize) >= config.activityProbability
  );
}

/**
 * Burst size such that the expected number of active slots, summed over `expected`, equals the number
 * of slots in `observed` with any activity. Slots whose observation is NaN (gaps) are left out.
 * Clamped to [MIN_BURST_SIZE, MAX_BURST_SIZE]; MIN_BURST_SIZE when nothing was observed, and
 * OCCUPANCY when every observed value was 0 or 1.
 */
export function calibrateBurstSize(expected: ArrayLike<number>, observed: ArrayLike<number>): number {
  const means: number[] = [];
  let active = 0;
  let known = 0;
  let occupancy = true;
  for (let i = 0; i < observed.length; i++) {
    const value = observed[i] ?? Number.NaN;
    if (Number.isNaN(value)) continue;
    known++;
    if (value > 0) active++;
    if (value !== 0 && value !== 1) occupancy = false;
    const mean = expected[i] ?? 0;
    if (mean > 0) means.push(mean);
  }
  const predictedActive = (burstSize: number) => {
    let sum = 0;
    for (const mean of means) sum += 1 - Math.exp(-mean / burstSize);
    return sum;
  };
  // A window all zeros is 0/1 too: the first activity after it is judged as a chance, not as a count.
  if (known > 0 && occupancy) return OCCUPANCY;
  if (active === 0 || predictedActive(MIN_BURST_SIZE) <= active) return MIN_BURST_SIZE;
  if (predictedActive(MAX_BURST_SIZE) >= active) return MAX_BURST_SIZE;
  // Bisection on the log scale: predictedActive falls as the burst size grows.
  let low = Math.log(MIN_BURST_SIZE);
  let high = Math.log(MAX_BURST_SIZE);
  for (let step = 0; step < CALIBRATION_STEPS; step++) {
    const middle = (low + high) / 2;
    if (predictedActive(Math.exp(middle)) > active) low = middle;
    else high = middle;
  }
  return Math.exp((low + high) / 2);
}
