// The policies the replay benchmarks' verdicts compare, and the settings they share: a fixed idle timeout, and the
// forecast policy with the awake budget, as the operator runs it by default.

import { parseDuration, specDefaults } from "../../api/managedworkload.ts";
import type { Policy } from "./replay.ts";

const MINUTE_MS = 60_000;
/** Idle window of policy (c) once its forecast is trusted. */
export const IDLE_MS = 15 * MINUTE_MS;
/** Idle window of policy (c) while its forecast is learning or in shadow: that of policy (a). */
export const UNTRUSTED_IDLE_MS = 30 * MINUTE_MS;
/**
 * Draws of a synthetic profile the policies are replayed over from scratch (the one shown in full and seven
 * reseeded): the defaults were chosen reading these.
 */
export const POLICY_DRAWS = 8;
/** spec.forecast.prewake's default: a lead for workloads slow to become ready (the replay's wake takes 30 s). */
export const DEFAULT_PREWAKE_MS = parseDuration(specDefaults.prewake);
/** Days of history a new engine starts from, as the operator reads them from Prometheus (its history window). */
export const HISTORY_DAYS = 14;

/** Policy (a): the baseline every other policy is compared with. */
export const FIXED: Policy = {
  name: "(a) fixed 30 min idle timeout",
  idleWindowMs: 30 * MINUTE_MS,
  useForecast: false,
};

/** Policy (c): the activity clock advised by the forecast, within the awake budget. */
export const FORECAST: Policy = {
  name: "(c) idle clock 15 min + forecast",
  idleWindowMs: IDLE_MS,
  untrustedIdleWindowMs: UNTRUSTED_IDLE_MS,
  useForecast: true,
  awakeBudget: true,
};
