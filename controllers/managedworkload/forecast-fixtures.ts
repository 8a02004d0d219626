// For tests: a forecast engine's saved state after a known pattern, as an operator would have saved it.
import {
  createEngine,
  encodeEngine,
  forecastConfig,
  type GridPoint,
  observeAll,
  SLOT_MS,
  slotOf,
} from "../../forecast/index.ts";

/**
 * The slots of `days` of activity from `fromHour` to `toHour` UTC up to `untilMs` (excluded): every day, or
 * every other day (a chance of about a half).
 */
export function dailyPatternPoints(
  untilMs: number,
  days: number,
  fromHour = 10,
  toHour = 12,
  everyOtherDay = false,
): GridPoint[] {
  const first = slotOf(untilMs) - days * 96;
  return Array.from({ length: days * 96 }, (_, i) => {
    const hourOfDay = new Date((first + i) * SLOT_MS).getUTCHours();
    const onDay = !everyOtherDay || Math.floor(i / 96) % 2 === 0;
    return { slot: first + i, value: onDay && hourOfDay >= fromHour && hourOfDay < toHour ? 1 : 0 };
  });
}

/** The state after `dailyPatternPoints`, learned up to `untilMs`, as an operator would have saved it. */
export function dailyPatternState(
  untilMs: number,
  days: number,
  fromHour = 10,
  toHour = 12,
  everyOtherDay = false,
): string {
  const config = forecastConfig();
  const points = dailyPatternPoints(untilMs, days, fromHour, toHour, everyOtherDay);
  const encoded = encodeEngine(observeAll(createEngine(config), points, config).engine);
  if (!encoded.ok) throw new Error(encoded.error.message);
  return encoded.value;
}
