import { calendarOf, type SeasonCalendar } from "./calendar.ts";
import { DAY_SLOTS } from "./grid.ts";
import type { SeasonHalfLives } from "./holt-winters.ts";

/** Inclusive [low, high] bounds of one smoothing parameter. */
export type Bounds = readonly [low: number, high: number];

export type ParameterBounds = {
  /** Level smoothing. Upper bound kept at 0.5 so one noisy slot cannot move the level much. */
  alpha: Bounds;
  /** Trend smoothing (used only when `useTrend`). Small: activity rarely trends within two weeks. */
  beta: Bounds;
  /** Daily seasonal smoothing. */
  gammaDay: Bounds;
  /** Weekly seasonal smoothing. */
  gammaWeek: Bounds;
  /** First-order autocorrelation of one-step errors (Taylor 2003 adjustment). */
  phi: Bounds;
};

export type ForecastConfig = {
  /** Days of grid history kept for refits; 14 keeps the serialised state under 8 KiB. */
  historyDays: number;
  /** History needed before the first fit; below it the engine stays in `learning`. */
  learningDays: number;
  /** History needed before the weekly season is fitted (at most `historyDays`). */
  weeklyAfterDays: number;
  /**
   * Half-lives, in days, of the weight a day of history carries when a refit starts the seasons. Each
   * refit starts them from the window's means, and the fitted seasonal smoothing then stays near its lower
   * bound (the means already know every day), so these set how fast the seasons follow a changed
   * schedule: with equal weights, only as it fills the window.
   */
  seasonHalfLivesDays: SeasonHalfLives;
  /** Slots between refits; updates are incremental in between. */
  refitEverySlots: number;
  /** Scored one-step forecasts needed before `shadow` may turn active. */
  minScoredSlots: number;
  /**
   * Confidence at or above which `shadow` turns active. 0.5 is "as good as seasonal-naive with the
   * intervals holding": a workload whose week repeats exactly (scheduled jobs) is forecast no better
   * than by last week, and that is good enough to act on.
   */
  activateAt: number;
  /** Confidence below which an active engine drops back to `shadow` (hysteresis with `activateAt`). */
  deactivateBelow: number;
  /** Half-life, in slots, of the accuracy and residual-variance averages. */
  accuracyHalfLifeSlots: number;
  /** Width of prediction intervals in standard deviations (1.96 ~ 95 %). */
  intervalZ: number;
  /** A sample further than this many one-step standard deviations from the forecast is an anomaly. */
  anomalyZ: number;
  /** ... and further than this in absolute units (so tiny deviations on a quiet series are not flagged). */
  anomalyMinAbs: number;
  /**
   * On a 0/1 series (activity seen in a slot or not, as the operator learns it), whose values never lie
   * anomalyZ deviations from any forecast: activity where the forecast's chance of it was below this, or none
   * where it was above 1 minus this, is an anomaly.
   */
  anomalyChance: number;
  /** Anomalous samples are clipped to forecast +- clipZ * sigma before they update the model. */
  anomalyClipZ: number;
  /** After this many anomalies in a row the pattern is taken as changed and learned unclipped. */
  anomalyRunToAccept: number;
  /** Floor on the one-step standard deviation, so an all-zero series does not get zero-width intervals. */
  minSigma: number;
  /**
   * Error variance grows with the forecast, as for counts: variance = dispersion * (forecast + offset).
   * The offset keeps quiet slots from getting zero-width intervals and dominates for small-valued scores.
   */
  varianceOffset: number;
  /** Fit a damped trend as well as the level. */
  useTrend: boolean;
  /** Damping of the trend per slot (only with `useTrend`). */
  trendDamping: number;
  bounds: ParameterBounds;
  /** Cap on objective evaluations of one fit (each is one pass over the history). */
  fitMaxEvaluations: number;
  /**
   * Chance of any activity in a slot (see `probability.ts`) at or above which the slot counts as
   * "activity expected": worth a pre-wake, and a reason to veto a pause. At chance p per 15-min slot,
   * bursts come at -4 ln(1 - p) an hour, the cold starts an awake hour then saves: 0.35 is a break-even
   * of about 1.7 cold starts per awake hour.
   */
  activityProbability: number;
  /** Range the awake budget may steer `activityProbability` within (see `budget.ts`). */
  activityProbabilityBounds: Bounds;
  /**
   * Log-odds the threshold moves per slot of awake time spent beyond (or short of) what the idle window
   * alone would have spent (see `budget.ts`).
   */
  budgetGain: number;
  /**
   * Share of the idle window's awake time the budget aims at. Steering settles with a debt: the awake time spent
   * while the threshold moved from where it started to where it holds, which is smaller the larger the gain;
   * aiming a little under the idle window's awake time pays it, so the promise holds over time.
   */
  budgetShare: number;
  /** Optional floor on the forecast mean of a slot with activity expected (0: the chance alone decides). */
  activityThreshold: number;
  /** Wake this long before the first slot with activity expected (the wake itself takes time). */
  prewakeLeadMs: number;
  /**
   * While the forecast is trusted, a chance of activity below this in the current slot and the next (see
   * `quietAwareIdleWindow`) shortens the idle window to `quietIdleWindowShare` of the trusted one: a burst in hours
   * the pattern calls quiet (a nightly job, a late request) is seldom followed by another, and the awake
   * time saved there is spent by the budget where activity is expected. 0: never.
   */
  quietProbability: number;
  /** Share of the trusted idle window that applies while the forecast calls the next slots quiet. */
  quietIdleWindowShare: number;
  /**
   * Pre-wake and veto are suspended while the current silence (a holiday, a changed schedule, a weekend
   * a daily-only model takes for a working day) had less than this chance under the forecasts made as
   * it went (see `silence.ts`); they resume with the next activity, or after `missedResetQuietSlots`
   * slots where none was expected. 0: never.
   */
  missedLikelihood: number;
  /** This many slots in a row with no activity expected end a silence: what is expected next starts afresh. */
  missedResetQuietSlots: number;
  /**
   * After this many slots in a row where activity was forecast but none came, pre-wake and veto are
   * suspended until activity returns or a quiet slot is forecast. Off by default (Infinity):
   * `missedLikelihood` does the same job weighted by how sure the forecast was.
   */
  suspendAfterMissedSlots: number;
  /** How far ahead `prewakeAt` / next activity is searched, in slots. */
  prewakeSearchSlots: number;
  /** A gap longer than this (in slots) throws the history away: the engine starts learning again. */
  maxGapSlots: number;
  /**
   * The IANA time zone whose clock the seasons follow: a pattern kept by the local clock stays in place across
   * daylight-saving changes. The grid and every time the engine gives stay UTC.
   */
  timeZone: string;
};

export const DEFAULT_FORECAST_CONFIG: ForecastConfig = {
  historyDays: 14,
  learningDays: 3,
  weeklyAfterDays: 14,
  seasonHalfLivesDays: { daily: 7, weekly: 10 },
  refitEverySlots: DAY_SLOTS,
  minScoredSlots: DAY_SLOTS,
  activateAt: 0.5,
  deactivateBelow: 0.45,
  accuracyHalfLifeSlots: 2 * DAY_SLOTS,
  intervalZ: 1.96,
  anomalyZ: 4,
  anomalyMinAbs: 2,
  anomalyChance: 0.01,
  anomalyClipZ: 3,
  anomalyRunToAccept: 4,
  minSigma: 0.25,
  varianceOffset: 1,
  useTrend: false,
  trendDamping: 0.98,
  bounds: {
    alpha: [0.001, 0.5],
    beta: [0, 0.05],
    gammaDay: [0.001, 0.5],
    gammaWeek: [0.001, 0.5],
    phi: [0, 0.9],
  },
  fitMaxEvaluations: 160,
  activityProbability: 0.35,
  activityProbabilityBounds: [0.1, 0.9],
  budgetGain: 0.2,
  budgetShare: 0.995,
  activityThreshold: 0,
  prewakeLeadMs: 2 * 60 * 1000,
  quietProbability: 0.1,
  quietIdleWindowShare: 2 / 3,
  missedLikelihood: 0.005,
  missedResetQuietSlots: 4,
  suspendAfterMissedSlots: Number.POSITIVE_INFINITY,
  prewakeSearchSlots: DAY_SLOTS,
  maxGapSlots: 7 * DAY_SLOTS,
  timeZone: "UTC",
};

/** Most days of history an engine keeps: 14 keep its saved state under 8 KiB, and one read of Prometheus. */
export const MAX_HISTORY_DAYS = 14;

/**
 * Defaults overridden by `overrides`; keeps `weeklyAfterDays` within the kept history. A half-life that is
 * not a positive number of days is refused: a zero or NaN one would start the seasons from NaN weights. So
 * is a history longer than `MAX_HISTORY_DAYS`, bounds for the awake budget's threshold that reach 0 or 1, and a
 * time zone the runtime does not know.
 */
export function forecastConfig(overrides: Partial<ForecastConfig> = {}): ForecastConfig {
  const merged = { ...DEFAULT_FORECAST_CONFIG, ...overrides };
  // The engine leaves learning once half its learningDays were observed within the history it keeps.
  const minHistoryDays = Math.max(1, Math.ceil(merged.learningDays / 2));
  if (
    !Number.isInteger(merged.historyDays) ||
    merged.historyDays < minHistoryDays ||
    merged.historyDays > MAX_HISTORY_DAYS
  ) {
    throw new RangeError(
      `historyDays must be a whole number of days from ${minHistoryDays} (half of learningDays, observed before ` +
        `the engine forecasts) to ${MAX_HISTORY_DAYS} (the kept history is saved with the engine's state, which ` +
        `must stay under 8 KiB), got ${merged.historyDays}`,
    );
  }
  for (const [season, days] of Object.entries(merged.seasonHalfLivesDays)) {
    if (!(days > 0)) {
      throw new RangeError(
        `seasonHalfLivesDays.${season} must be a positive number of days (Infinity for equal weights), got ${days}`,
      );
    }
  }
  seasonCalendar(merged);
  const [low, high] = merged.activityProbabilityBounds;
  // Steered on the log-odds scale, a threshold of 0 or 1 could never move back.
  if (!(low > 0 && low <= high && high < 1)) {
    throw new RangeError(
      `activityProbabilityBounds must be two chances strictly between 0 and 1, the lower first, got [${low}, ${high}]`,
    );
  }
  return { ...merged, weeklyAfterDays: Math.min(merged.weeklyAfterDays, merged.historyDays) };
}

export function historySlots(config: ForecastConfig): number {
  return config.historyDays * DAY_SLOTS;
}

/** The calendar of `config.timeZone`, which `forecastConfig` checked. */
export function seasonCalendar(config: ForecastConfig): SeasonCalendar {
  const calendar = calendarOf(config.timeZone);
  if (!calendar.ok) throw new RangeError(`timeZone: ${calendar.error}`);
  return calendar.value;
}
