// Public API of the forecast engine: pure functions over plain data (no IO, no clock, no Kubernetes).

export { type AccuracyRecord, confidenceOf } from "./accuracy.ts";
export { type AwakeSpend, idleWindowAwakeMs, spendBudget, withThreshold } from "./budget.ts";
export {
  calendarOf,
  type SeasonCalendar,
  sameCalendar,
  UTC_CALENDAR,
  unknownZone,
  utcOffsetMs,
} from "./calendar.ts";
export { decodeEngine, encodeEngine, MAX_STATE_BYTES, STATE_VERSION, type StateError } from "./codec.ts";
export {
  type Bounds,
  DEFAULT_FORECAST_CONFIG,
  type ForecastConfig,
  forecastConfig,
  type ParameterBounds,
  seasonCalendar,
} from "./config.ts";
export {
  adviceSuspended,
  clockAdvice,
  type DecisionInput,
  decide,
  type ForecastDecision,
  firstSearchedSlot,
  type PrewakeCode,
  quietAwareIdleWindow,
  quietJudgedUntil,
  trustedIdleWindow,
  type VetoCode,
} from "./decide.ts";
export { formatDuration } from "./duration.ts";
export {
  type AnomalyEvent,
  confidence,
  createEngine,
  type EngineEvent,
  type ForecastEngine,
  historyAt,
  inTimeZone,
  isActive,
  type Observation,
  observe,
  observeAll,
  PHASES,
  type Phase,
  type PhaseChangeEvent,
  type PhaseReasonCode,
  type Reason,
  type RefitEvent,
  refitEngine,
  seasonalNaive,
  shownConfidence,
} from "./engine.ts";
export { type FitResult, fitWindow } from "./fit.ts";
export {
  type ForecastPoint,
  forecastMean,
  forecastProbability,
  forecastSlots,
  patternMean,
} from "./forecast.ts";
export {
  type ActivitySample,
  bucketEvents,
  bucketSamples,
  DAY_SLOTS,
  type GridPoint,
  type Interval,
  SLOT_MS,
  slotOf,
  slotStartMs,
  WEEK_SLOTS,
} from "./grid.ts";
export type { HwParams, HwState, Seasonality, SlotWindow } from "./holt-winters.ts";
export { activityProbability, isActivityExpected, OCCUPANCY } from "./probability.ts";
export { err, ok, type Result } from "./result.ts";
export { type Silence, silenceLikelihood } from "./silence.ts";
