// Helpers for deciding whether a recommendation is worth telling anyone about.

import type { RecommenderConfig } from "./config.ts";
import { defaultConfig } from "./config.ts";
import type { ContainerResources } from "./types.ts";

/** (recommended - current) / current; null when there is no current value to compare with. */
export function relativeChange(current: number | undefined, recommended: number): number | null {
  if (current === undefined || !(current > 0)) return null;
  return (recommended - current) / current;
}

function valueChanged(
  before: number | undefined,
  after: number | undefined,
  minAbsolute: number,
  config: RecommenderConfig,
): boolean {
  if (after === undefined) return false;
  if (before === undefined) return true;
  const change = relativeChange(before, after);
  // The tolerance keeps an exact 10% (0.9 / 1) from missing by a rounding error.
  const big = change === null || Math.abs(change) >= config.materialChangeFraction - 1e-9;
  // Likewise an exact minimum: 0.045 - 0.04 is 0.00499... in binary.
  return big && Math.abs(after - before) >= minAbsolute * (1 - 1e-9);
}

/**
 * True when any of CPU request, memory request or memory limit moved by at least materialChangeFraction
 * (10%) *and* by at least the absolute minimum (5m CPU, 8 MiB memory), or appears for the first time.
 * Both conditions are needed: 10% keeps big containers quiet under noise, the absolute minimum keeps
 * tiny ones from flapping between a few millicores. An audit Event is sent only when this is true.
 */
export function isMaterialChange(
  before: ContainerResources,
  after: ContainerResources,
  config: RecommenderConfig = defaultConfig,
): boolean {
  return (
    valueChanged(before.cpuRequestCores, after.cpuRequestCores, config.materialMinCpuCores, config) ||
    valueChanged(
      before.memoryRequestBytes,
      after.memoryRequestBytes,
      config.materialMinMemoryBytes,
      config,
    ) ||
    valueChanged(before.memoryLimitBytes, after.memoryLimitBytes, config.materialMinMemoryBytes, config)
  );
}
