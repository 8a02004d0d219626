// The fixed sample grid every forecast works on: 15-minute slots counted from the Unix epoch,
// so a slot index alone says where it sits in the day and in the week.

export const SLOT_MS = 15 * 60 * 1000;
export const DAY_SLOTS = 96;
export const WEEK_SLOTS = 7 * DAY_SLOTS;

/** One raw reading of activity, e.g. a request count or an activity score. */
export type ActivitySample = { atMs: number; value: number };

/** One grid slot; `value: null` is a gap (nothing known), which is not the same as zero activity. */
export type GridPoint = { slot: number; value: number | null };

export type Interval = { fromMs: number; toMs: number };

export function slotOf(ms: number): number {
  return Math.floor(ms / SLOT_MS);
}

export function slotStartMs(slot: number): number {
  return slot * SLOT_MS;
}

export function daySlotOf(slot: number): number {
  return positiveModulo(slot, DAY_SLOTS);
}

export function weekSlotOf(slot: number): number {
  return positiveModulo(slot, WEEK_SLOTS);
}

export function positiveModulo(n: number, m: number): number {
  return ((n % m) + m) % m;
}

function isUsableValue(value: number): boolean {
  return Number.isFinite(value) && value >= 0;
}

/**
 * Sums samples into slots [fromSlot, toSlot). A slot without any sample is a gap (null): a scraped
 * metric that did not arrive says nothing about activity. Negative or non-finite values are dropped.
 */
export function bucketSamples(
  samples: readonly ActivitySample[],
  fromSlot: number,
  toSlot: number,
): GridPoint[] {
  const sums: (number | null)[] = new Array(Math.max(0, toSlot - fromSlot)).fill(null);
  for (const sample of samples) {
    const index = slotOf(sample.atMs) - fromSlot;
    if (index < 0 || index >= sums.length || !isUsableValue(sample.value)) continue;
    sums[index] = (sums[index] ?? 0) + sample.value;
  }
  return sums.map((value, index) => ({ slot: fromSlot + index, value }));
}

/**
 * Counts events (e.g. request timestamps) into slots [fromSlot, toSlot). Here silence means zero,
 * except inside `gaps` (telemetry was down), where the slot is null.
 */
export function bucketEvents(
  eventTimesMs: readonly number[],
  fromSlot: number,
  toSlot: number,
  gaps: readonly Interval[] = [],
): GridPoint[] {
  const counts = new Array<number>(Math.max(0, toSlot - fromSlot)).fill(0);
  for (const atMs of eventTimesMs) {
    const index = slotOf(atMs) - fromSlot;
    if (index >= 0 && index < counts.length) counts[index] = (counts[index] ?? 0) + 1;
  }
  return counts.map((count, index) => {
    const slot = fromSlot + index;
    return { slot, value: overlapsAnyGap(slot, gaps) ? null : count };
  });
}

function overlapsAnyGap(slot: number, gaps: readonly Interval[]): boolean {
  const start = slotStartMs(slot);
  const end = start + SLOT_MS;
  return gaps.some((gap) => gap.fromMs < end && gap.toMs > start);
}
