/**
 * Quantities as `kubectl napwake recommendations` shows them: short, and in the same units in every column so
 * that current and recommended values compare at a glance. Parsing is kube/quantity.ts's. Pure.
 */
import type { ResourceValues } from "../api/rightsizing.ts";
import { quantityOrUndefined } from "../kube/quantity.ts";

/** The values of a container, in the order the table shows them: CPU request, memory request, memory limit. */
export const valueKeys = ["cpuRequest", "memoryRequest", "memoryLimit"] as const;
export type ValueKey = (typeof valueKeys)[number];

/** Whole cores as `2`, anything else in millicores (`250m`, `1500m`); `<1m` for a sliver above zero. */
export function formatCpu(cores: number): string {
  const milli = Math.round(cores * 1000);
  if (milli === 0 && cores > 0) return "<1m";
  return milli % 1000 === 0 ? String(milli / 1000) : `${milli}m`;
}

const binaryUnits: readonly [string, number][] = [
  ["Ti", 2 ** 40],
  ["Gi", 2 ** 30],
  ["Mi", 2 ** 20],
  ["Ki", 2 ** 10],
];

/** Bytes in the largest binary unit they fill, to three significant digits: `512Mi`, `1.5Gi`, `954Mi` for 1G. */
export function formatMemory(bytes: number): string {
  for (const [index, [unit, size]] of binaryUnits.entries()) {
    if (Math.abs(bytes) < size) continue;
    const shown = threeDigits(bytes / size);
    // Rounded up to 1024 of a unit (1023.9Mi): one of the unit above.
    const above = binaryUnits[index - 1];
    if (above && Math.abs(Number(shown)) >= 1024) return `${threeDigits(bytes / above[1])}${above[0]}`;
    return `${shown}${unit}`;
  }
  return String(Math.round(bytes));
}

function threeDigits(n: number): string {
  const decimals = Math.abs(n) >= 100 ? 0 : Math.abs(n) >= 10 ? 1 : 2;
  return String(Number(n.toFixed(decimals)));
}

/** One value, `-` when it is not set; a quantity that does not parse is shown as written. */
export function formatValue(key: ValueKey, quantity: string | undefined): string {
  if (quantity === undefined) return "-";
  const parsed = parse(quantity);
  if (parsed === null) return quantity;
  return key === "cpuRequest" ? formatCpu(parsed) : formatMemory(parsed);
}

/** `250m/512Mi/1Gi`: CPU request, memory request, memory limit, each `-` when not set. */
export function formatValues(values: ResourceValues): string {
  return valueKeys.map((key) => formatValue(key, values[key])).join("/");
}

/**
 * The relative change from current to recommended, in whole percent (`-40%`, `+10%`, `0%`); `new` when
 * there is no current value (or zero) to compare with, `-` when nothing is recommended, `?` when a value does
 * not parse.
 */
export function formatChange(current: string | undefined, recommended: string | undefined): string {
  if (recommended === undefined) return "-";
  const to = parse(recommended);
  if (to === null) return "?";
  if (current === undefined) return "new";
  const from = parse(current);
  if (from === null) return "?";
  // A zero request is as good as none: there is nothing to take a percentage of.
  if (from === 0) return "new";
  const percent = Math.round(((to - from) / from) * 100);
  if (percent === 0) return "0%";
  return percent > 0 ? `+${percent}%` : `${percent}%`;
}

/** `-40%/-25%/+10%`, value by value, in the order of formatValues. */
export function formatChanges(current: ResourceValues, recommended: ResourceValues): string {
  return valueKeys.map((key) => formatChange(current[key], recommended[key])).join("/");
}

function parse(quantity: string): number | null {
  return quantityOrUndefined(quantity) ?? null;
}
