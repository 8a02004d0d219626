// Compact, versioned state for status.prediction.state. Seasonal and history arrays are quantised
// and base64-encoded so a full engine stays under 8 KiB of JSON. Decoding never throws: a corrupt,
// oversized or unknown state comes back as an error value the caller can report and discard.

import { EMPTY_ACCURACY } from "./accuracy.ts";
import { calendarOf, type SeasonCalendar, sameCalendar, UTC_CALENDAR, unknownCalendar } from "./calendar.ts";
import { type Bounds, type ForecastConfig, forecastConfig, historySlots } from "./config.ts";
import { earlierActiveSlotOf, type ForecastEngine, PHASE_REASON_CODES, type Phase } from "./engine.ts";
import { DAY_SLOTS, positiveModulo, SLOT_MS, WEEK_SLOTS } from "./grid.ts";
import type { HwParams } from "./holt-winters.ts";
import { MAX_BURST_SIZE, MIN_BURST_SIZE, OCCUPANCY } from "./probability.ts";
import { err, ok, type Result } from "./result.ts";
import { NO_SILENCE, type Silence } from "./silence.ts";

export const STATE_VERSION = 2;
/** Version 2 with the seasons placed by a time zone other than UTC (`m.z`). */
export const ZONED_STATE_VERSION = 3;
export const MAX_STATE_BYTES = 8 * 1024;
/** The CRD's bound on spec.forecast.timeZone. */
const MAX_ZONE_NAME = 64;

export type StateErrorCode = "oversized" | "malformed" | "unsupported-version" | "invalid";
export type StateError = { code: StateErrorCode; message: string };

/**
 * Wire shape of versions 1 to 3 (short keys: this is stored on every ManagedWorkload). Version 2 stores the
 * history's square roots, so one large count does not round every small one next to it to 0; an operator that
 * reads only version 1 discards such a state with an Event rather than misreading it. Version 3 is version 2
 * with seasons placed by a time zone other than UTC; a state in UTC is still written as version 2, which
 * operators from before time zones read, and one in another zone is discarded by them rather than misplaced.
 */
type WireV1 = {
  v: 1 | 2 | 3;
  ph: Phase;
  rc: (typeof PHASE_REASON_CODES)[number];
  rm: string;
  fs: number | null;
  ns: number | null;
  lr: number | null;
  /** Last slot learned with a value; absent in states written before it existed (read from the history). */
  lk?: number | null;
  /** Last slot with activity seen; absent in states written before it existed (read from the history). */
  la?: number | null;
  ar: number;
  /** Missed-forecast run; absent in states written before it existed (read as 0). */
  mr?: number;
  /** Silence: slots, evidence, quiet run; absent in states written before it existed (read as none). */
  si?: [number, number, number];
  /** Calibrated burst size; absent in states written before it existed (read as 1 until the next refit). */
  bs?: number;
  /** model squared error, naive squared error, coverage, scored */
  acc: [number, number, number, number];
  /** History in time order ending at ns - 1 (version 2: its square roots), uint16 scaled by hs; 65535 = gap. */
  h: string;
  hs: number;
  m: WireModelV1 | null;
};

type WireModelV1 = {
  s: "d" | "dw";
  l: number;
  b: number;
  e: number;
  /** Error moments: mean squared error, mean variance scale. */
  em: [number, number];
  /** alpha, beta, gammaDay, gammaWeek, phi */
  p: [number, number, number, number, number];
  /** Daily season, float32. */
  d: string;
  /** Weekly season, int16 scaled by ws; "" while daily only. */
  w: string;
  ws: number;
  /** The time zone the seasons are placed by (version 3; UTC before). */
  z?: string;
};

const GAP_CODE = 0xffff;
const MAX_MESSAGE_CHARS = 200;
const PHASES: readonly Phase[] = ["learning", "shadow", "active-daily", "active-weekly"];

export function encodeEngine(engine: ForecastEngine): Result<string, StateError> {
  const { model, params } = engine;
  const history = historyInTimeOrder(engine).map((value) => Math.sqrt(Math.max(0, value)));
  const historyScale = scaleFor(history, 65534, (v) => v);
  const m = model && params ? encodeModel(engine) : null;
  const wire: WireV1 = {
    v: m?.z === undefined ? STATE_VERSION : ZONED_STATE_VERSION,
    ph: engine.phase,
    rc: engine.phaseReason.code,
    rm: engine.phaseReason.message.slice(0, MAX_MESSAGE_CHARS),
    fs: engine.firstSlot,
    ns: engine.nextSlot,
    lr: engine.lastRefitSlot,
    lk: engine.lastKnownSlot,
    la: engine.lastActiveSlot,
    ar: engine.anomalyRun,
    mr: engine.missedRun,
    si: [engine.silence.slots, engine.silence.evidence, engine.silence.quietRun],
    bs: engine.burstSize,
    acc: [
      engine.accuracy.modelSquaredError,
      engine.accuracy.naiveSquaredError,
      engine.accuracy.coverage,
      engine.accuracy.scored,
    ],
    h: encodeUint16(history, historyScale),
    hs: historyScale,
    m,
  };
  const text = JSON.stringify(wire);
  const oversized = sizeError(text, "encoded state");
  if (oversized) return err(oversized);
  // Never written unless it reads back: a state the decoder refuses would be discarded at the next restart.
  // The ring's length is all the decoder takes from the config, but for bounds it clamps into.
  const ringConfig = forecastConfig({ historyDays: engine.history.length / DAY_SLOTS, learningDays: 1 });
  const readBack = decodeEngine(text, ringConfig);
  if (!readBack.ok) {
    return err({
      code: readBack.error.code,
      message: `encoded state would not read back: ${readBack.error.message}`,
    });
  }
  return ok(text);
}

function encodeModel(engine: ForecastEngine): WireModelV1 {
  const model = engine.model as NonNullable<ForecastEngine["model"]>;
  const params = engine.params as HwParams;
  const weekly = model.seasonality === "daily+weekly";
  const weeklyScale = scaleFor(model.weekly, 32767, Math.abs);
  return {
    s: weekly ? "dw" : "d",
    l: model.level,
    b: model.slope,
    e: model.lastError,
    em: [engine.errorMoments.squaredError, engine.errorMoments.scale],
    p: [params.alpha, params.beta, params.gammaDay, params.gammaWeek, params.phi],
    d: Buffer.from(new Float32Array(model.daily).buffer).toString("base64"),
    w: weekly ? encodeInt16(model.weekly, weeklyScale) : "",
    ws: weeklyScale,
    ...(sameCalendar(model.calendar, UTC_CALENDAR) ? {} : { z: model.calendar.timeZone }),
  };
}

function historyInTimeOrder(engine: ForecastEngine): Float64Array {
  const length = engine.history.length;
  const ordered = new Float64Array(length).fill(Number.NaN);
  if (engine.nextSlot === null) return ordered;
  const start = engine.nextSlot - length;
  for (let i = 0; i < length; i++)
    ordered[i] = engine.history[positiveModulo(start + i, length)] ?? Number.NaN;
  return ordered;
}

/** Quantisation step so the largest magnitude maps to `levels`; 1 for an all-zero array. */
function scaleFor(values: Float64Array, levels: number, magnitude: (v: number) => number): number {
  let max = 0;
  for (const value of values) if (!Number.isNaN(value)) max = Math.max(max, magnitude(value));
  return max > 0 ? max / levels : 1;
}

function encodeUint16(values: Float64Array, scale: number): string {
  const view = new DataView(new ArrayBuffer(values.length * 2));
  values.forEach((value, i) => {
    view.setUint16(i * 2, Number.isNaN(value) ? GAP_CODE : Math.round(Math.max(0, value) / scale), true);
  });
  return Buffer.from(view.buffer).toString("base64");
}

function encodeInt16(values: Float64Array, scale: number): string {
  const view = new DataView(new ArrayBuffer(values.length * 2));
  values.forEach((value, i) => {
    view.setInt16(i * 2, Math.round(value / scale), true);
  });
  return Buffer.from(view.buffer).toString("base64");
}

/** The error of a state over MAX_STATE_BYTES, counted in UTF-8 as the status stores it (not in UTF-16 units). */
function sizeError(text: string, what: string): StateError | null {
  const bytes = Buffer.byteLength(text);
  return bytes > MAX_STATE_BYTES
    ? { code: "oversized", message: `${what} is ${bytes} bytes, limit ${MAX_STATE_BYTES}` }
    : null;
}

/** Reads any supported version; never throws. */
export function decodeEngine(text: string, config: ForecastConfig): Result<ForecastEngine, StateError> {
  const oversized = sizeError(text, "state");
  if (oversized) return err(oversized);
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch (cause) {
    return err({ code: "malformed", message: `state is not JSON: ${(cause as Error).message}` });
  }
  if (!isRecord(raw)) return err({ code: "malformed", message: "state is not a JSON object" });
  // One reader for every version: 2 differs from 1 only in how the history is stored, 3 from 2 in m.z.
  if (raw.v === 1 || raw.v === 2 || raw.v === ZONED_STATE_VERSION) return decodeV1(raw, config);
  return err({ code: "unsupported-version", message: `state version ${String(raw.v)} is not supported` });
}

class InvalidState extends Error {}

function decodeV1(raw: Record<string, unknown>, config: ForecastConfig): Result<ForecastEngine, StateError> {
  try {
    return ok(readV1(raw, config));
  } catch (cause) {
    if (cause instanceof InvalidState) return err({ code: "invalid", message: cause.message });
    return err({ code: "invalid", message: `state could not be read: ${String(cause)}` });
  }
}

function readV1(raw: Record<string, unknown>, config: ForecastConfig): ForecastEngine {
  const phase = oneOf(raw.ph, PHASES, "ph");
  const length = historySlots(config);
  const historyScale = nonNegative(raw.hs, "hs");
  const stored = decodeUint16(text(raw.h, "h"), length, historyScale, "h");
  const ordered = raw.v !== 1 ? stored.map((root) => root * root) : stored;
  const nextSlot = nullableSlot(raw.ns, "ns");
  const history = new Float64Array(length).fill(Number.NaN);
  if (nextSlot !== null) {
    ordered.forEach((value, i) => {
      history[positiveModulo(nextSlot - length + i, length)] = value;
    });
  }
  // Squared errors and the scored count outgrow the values themselves.
  const accLimits = [MAX_SQUARED, MAX_SQUARED, 1, Number.MAX_SAFE_INTEGER];
  const acc = array(raw.acc, 4, "acc").map((v, i) => nonNegative(v, `acc[${i}]`, accLimits[i]));
  const model =
    raw.m === null || raw.m === undefined
      ? null
      : readModelV1(raw.m, nextSlot, config, raw.v === ZONED_STATE_VERSION);
  if (phase !== "learning" && !model) throw new InvalidState(`phase ${phase} needs a model`);
  const firstSlot = nullableSlot(raw.fs, "fs");
  const lastRefitSlot = nullableSlot(raw.lr, "lr");
  notAfter(firstSlot, nextSlot, "fs");
  notAfter(lastRefitSlot, nextSlot, "lr");
  // An engine has both once it has started, or neither: one without the other has no span to judge phases by.
  if ((firstSlot === null) !== (nextSlot === null))
    throw new InvalidState("fs and ns must be both set or both null");
  const storedLastKnown =
    raw.lk === undefined ? null : slotBefore(nullableSlot(raw.lk, "lk"), nextSlot, "lk");
  // Nothing known in the ring: at least a ring's length without data.
  const lastKnownSlot =
    storedLastKnown ??
    lastInHistory(history, nextSlot, (value) => !Number.isNaN(value)) ??
    (nextSlot === null ? null : nextSlot - length - 1);
  const lastActiveSlot =
    raw.la === undefined
      ? lastInHistory(history, nextSlot, (value) => value > 0)
      : slotBefore(nullableSlot(raw.la, "la"), nextSlot, "la");
  const engine: ForecastEngine = {
    phase,
    phaseReason: { code: oneOf(raw.rc, PHASE_REASON_CODES, "rc"), message: text(raw.rm, "rm") },
    firstSlot,
    nextSlot,
    lastKnownSlot,
    lastActiveSlot,
    earlierActiveSlot: null,
    history,
    model: model?.state ?? null,
    params: model?.params ?? null,
    errorMoments: model?.errorMoments ?? { squaredError: 0, scale: 1 },
    lastRefitSlot,
    accuracy: {
      ...EMPTY_ACCURACY,
      modelSquaredError: acc[0] ?? 0,
      naiveSquaredError: acc[1] ?? 0,
      coverage: acc[2] ?? 0,
      scored: acc[3] ?? 0,
    },
    anomalyRun: wholeNumber(raw.ar, "ar"),
    missedRun: raw.mr === undefined ? 0 : count(raw.mr, "mr"),
    silence: raw.si === undefined ? NO_SILENCE : readSilence(raw.si),
    burstSize: raw.bs === undefined ? MIN_BURST_SIZE : clampBurstSize(finite(raw.bs, "bs")),
  };
  return { ...engine, earlierActiveSlot: earlierActiveSlotOf(engine) };
}

function readModelV1(raw: unknown, nextSlot: number | null, config: ForecastConfig, zoned: boolean) {
  if (!isRecord(raw)) throw new InvalidState("m is not an object");
  if (nextSlot === null) throw new InvalidState("a model needs ns");
  const seasonality = oneOf(raw.s, ["d", "dw"] as const, "m.s") === "dw" ? "daily+weekly" : "daily";
  const p = array(raw.p, 5, "m.p").map((v, i) => finite(v, `m.p[${i}]`));
  // Into this operator's bounds rather than refused: a newer version may have narrowed them.
  const { bounds } = config;
  const params: HwParams = {
    alpha: clampTo(p[0] ?? 0, bounds.alpha),
    // Without a trend this operator never learns one: a slope it read would drift every forecast, undamped.
    beta: config.useTrend ? clampTo(p[1] ?? 0, bounds.beta) : 0,
    gammaDay: clampTo(p[2] ?? 0, bounds.gammaDay),
    gammaWeek: clampTo(p[3] ?? 0, bounds.gammaWeek),
    phi: clampTo(p[4] ?? 0, bounds.phi),
  };
  const moments = array(raw.em, 2, "m.em").map((v, i) =>
    nonNegative(v, `m.em[${i}]`, i === 0 ? MAX_SQUARED : undefined),
  );
  if (!((moments[1] ?? 0) > 0)) throw new InvalidState("m.em[1] (variance scale) must be above 0");
  const daily = decodeFloat32(text(raw.d, "m.d"), DAY_SLOTS, "m.d");
  const weekly =
    seasonality === "daily+weekly"
      ? decodeInt16(text(raw.w, "m.w"), WEEK_SLOTS, nonNegative(raw.ws, "m.ws"), "m.w")
      : new Float64Array(WEEK_SLOTS);
  return {
    params,
    errorMoments: { squaredError: moments[0] ?? 0, scale: moments[1] ?? 1 },
    state: {
      seasonality,
      calendar: zoned ? readCalendar(raw.z) : UTC_CALENDAR,
      level: bounded(raw.l, "m.l"),
      slope: config.useTrend ? bounded(raw.b, "m.b") : 0,
      daily,
      weekly,
      lastError: bounded(raw.e, "m.e"),
      nextSlot,
    } as const,
  };
}

/** A zone this runtime does not know is kept as such: the engine places its seasons anew (see unknownCalendar). */
function readCalendar(raw: unknown): SeasonCalendar {
  const name = text(raw, "m.z");
  if (name.length > MAX_ZONE_NAME) throw new InvalidState(`m.z is ${name.length} characters, no zone's name`);
  const calendar = calendarOf(name);
  return calendar.ok ? calendar.value : unknownCalendar(name);
}

function clampTo(value: number, [low, high]: Bounds): number {
  return Math.min(high, Math.max(low, value));
}

function readSilence(raw: unknown): Silence {
  // Slots and the quiet run are counts; the evidence is a sum of -ln(1 - chance): none is ever negative.
  const [slots, evidence, quietRun] = array(raw, 3, "si").map((v, i) =>
    i === 1 ? nonNegative(v, `si[${i}]`) : count(v, `si[${i}]`),
  );
  return { slots: slots ?? 0, evidence: evidence ?? 0, quietRun: quietRun ?? 0 };
}

function clampBurstSize(value: number): number {
  if (value === OCCUPANCY) return OCCUPANCY;
  return Math.min(MAX_BURST_SIZE, Math.max(MIN_BURST_SIZE, value));
}

function bytesOf(encoded: string, expectedBytes: number, field: string): DataView {
  const bytes = Buffer.from(encoded, "base64");
  if (bytes.length !== expectedBytes) {
    throw new InvalidState(`${field} holds ${bytes.length} bytes, expected ${expectedBytes}`);
  }
  return new DataView(bytes.buffer, bytes.byteOffset, bytes.length);
}

function decodeUint16(encoded: string, length: number, scale: number, field: string): Float64Array {
  const view = bytesOf(encoded, length * 2, field);
  return new Float64Array(length).map((_, i) => {
    const code = view.getUint16(i * 2, true);
    return code === GAP_CODE ? Number.NaN : code * scale;
  });
}

function decodeInt16(encoded: string, length: number, scale: number, field: string): Float64Array {
  const view = bytesOf(encoded, length * 2, field);
  return new Float64Array(length).map((_, i) => view.getInt16(i * 2, true) * scale);
}

function decodeFloat32(encoded: string, length: number, field: string): Float64Array {
  const view = bytesOf(encoded, length * 4, field);
  return new Float64Array(length).map((_, i) => bounded(view.getFloat32(i * 4, true), field));
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

function finite(value: unknown, field: string): number {
  if (typeof value !== "number" || !Number.isFinite(value))
    throw new InvalidState(`${field} is not a finite number`);
  return value;
}

/**
 * No learned value comes near this (the series are requests or active slots per 15 minutes); anything
 * beyond is a damaged state that would overflow the model into NaN.
 */
const MAX_MAGNITUDE = 1e9;

const MAX_SQUARED = MAX_MAGNITUDE ** 2;
/** Slots whose start and a week of forecasts beyond it are still valid Dates (±8.64e15 ms). */
const MAX_SLOT = Math.floor(8.64e15 / SLOT_MS) - 2 * WEEK_SLOTS;

function bounded(value: unknown, field: string, limit = MAX_MAGNITUDE): number {
  const number = finite(value, field);
  if (Math.abs(number) > limit) throw new InvalidState(`${field} is beyond ${limit}`);
  return number;
}

function nonNegative(value: unknown, field: string, limit = MAX_MAGNITUDE): number {
  const number = bounded(value, field, limit);
  if (number < 0) throw new InvalidState(`${field} is negative`);
  return number;
}

/** A run or a count of slots (negative for a run below the forecast). */
function wholeNumber(value: unknown, field: string): number {
  const number = bounded(value, field);
  if (!Number.isInteger(number)) throw new InvalidState(`${field} is not a whole number`);
  return number;
}

function count(value: unknown, field: string): number {
  const number = wholeNumber(value, field);
  if (number < 0) throw new InvalidState(`${field} is negative`);
  return number;
}

function slotBefore(slot: number | null, nextSlot: number | null, field: string): number | null {
  if (slot !== null && (nextSlot === null || slot >= nextSlot))
    throw new InvalidState(`${field} must be before ns`);
  return slot;
}

/**
 * For states saved before a field existed: the latest slot of the ring (ending at ns - 1) whose learned value
 * passes `test`, or null when none does.
 */
function lastInHistory(
  history: Float64Array,
  nextSlot: number | null,
  test: (value: number) => boolean,
): number | null {
  if (nextSlot === null) return null;
  for (let slot = nextSlot - 1; slot >= nextSlot - history.length; slot--) {
    if (test(history[positiveModulo(slot, history.length)] ?? Number.NaN)) return slot;
  }
  return null;
}

function notAfter(slot: number | null, nextSlot: number | null, field: string): void {
  if (slot !== null && (nextSlot === null || slot > nextSlot)) {
    throw new InvalidState(`${field} is after ns, the next slot to learn`);
  }
}

/** A slot number (or null): an integer whose time is a valid Date. */
function nullableSlot(value: unknown, field: string): number | null {
  if (value === null) return null;
  if (!Number.isSafeInteger(value)) throw new InvalidState(`${field} is not an integer`);
  if (Math.abs(value as number) > MAX_SLOT) throw new InvalidState(`${field} is beyond any date`);
  return value as number;
}

function text(value: unknown, field: string): string {
  if (typeof value !== "string") throw new InvalidState(`${field} is not a string`);
  return value;
}

function array(value: unknown, length: number, field: string): unknown[] {
  if (!Array.isArray(value) || value.length !== length)
    throw new InvalidState(`${field} is not an array of ${length}`);
  return value;
}

function oneOf<T extends string>(value: unknown, allowed: readonly T[], field: string): T {
  if (!allowed.includes(value as T)) throw new InvalidState(`${field} is not one of ${allowed.join(", ")}`);
  return value as T;
}
