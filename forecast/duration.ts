// Durations in messages, written as spec fields take them (10m, 1m20s, 2h), so a window of 80 seconds does
// not read as "1 min".

const UNITS: readonly [unit: string, ms: number][] = [
  ["h", 3_600_000],
  ["m", 60_000],
  ["s", 1_000],
];

/** `ms` as hours, minutes and seconds (whole seconds; under a second, in ms): 1h30m, 10m, 1m20s, 40s, 500ms. */
export function formatDuration(ms: number): string {
  const whole = Math.max(0, Math.round(ms));
  if (whole < 1_000) return `${whole}ms`;
  let rest = Math.round(whole / 1_000) * 1_000;
  let text = "";
  for (const [unit, size] of UNITS) {
    const amount = Math.floor(rest / size);
    rest -= amount * size;
    if (amount > 0) text += `${amount}${unit}`;
  }
  return text;
}
