import { describe, expect, it } from "vitest";
import { decodeEngine, encodeEngine, MAX_STATE_BYTES } from "./codec.ts";
import { forecastConfig } from "./config.ts";
import { createEngine, historyAt, observeAll, refitEngine } from "./engine.ts";
import { forecastSlots, patternMean } from "./forecast.ts";
import { DAY_SLOTS } from "./grid.ts";
import { MIN_BURST_SIZE, OCCUPANCY } from "./probability.ts";
import { NO_SILENCE } from "./silence.ts";
import { MONDAY_SLOT, officeSeries } from "./testing.ts";

const config = forecastConfig();
const trained = observeAll(createEngine(config), officeSeries(21, 11), config).engine;

function encoded(): string {
  const result = encodeEngine(trained);
  if (!result.ok) throw new Error(result.error.message);
  return result.value;
}

type Wire = Record<string, unknown>;

describe("engine state serialisation", () => {
  it("stays under 8 KiB with the weekly season and a full history", () => {
    expect(trained.model?.seasonality).toBe("daily+weekly");
    expect(encoded().length).toBeLessThanOrEqual(MAX_STATE_BYTES);
  });

  it("round-trips phase, history and forecasts", () => {
    const decoded = decodeEngine(encoded(), config);
    if (!decoded.ok) throw new Error(decoded.error.message);
    const restored = decoded.value;
    expect(restored.phase).toBe(trained.phase);
    expect(restored.nextSlot).toBe(trained.nextSlot);
    expect(restored.accuracy).toEqual(trained.accuracy);
    expect(restored.burstSize).toBe(trained.burstSize);
    expect(restored.silence).toEqual(trained.silence);
    expect(restored.lastKnownSlot).toBe(trained.lastKnownSlot);
    expect(restored.lastActiveSlot).toBe(trained.lastActiveSlot);
    const before = forecastSlots(trained, trained.nextSlot ?? 0, 96, config);
    const after = forecastSlots(restored, restored.nextSlot ?? 0, 96, config);
    after.forEach((point, i) => {
      expect(point.mean).toBeCloseTo(before[i]?.mean ?? Number.NaN, 2);
    });
  });

  it.each([
    { name: "an occupancy engine's burst size", engine: { ...trained, burstSize: OCCUPANCY } },
    {
      name: "a silence in progress",
      engine: { ...trained, silence: { slots: 3, evidence: 4.5, quietRun: 1 } },
    },
  ])("round-trips $name", ({ engine }) => {
    const text = encodeEngine(engine);
    const decoded = text.ok ? decodeEngine(text.value, config) : text;
    expect(decoded.ok && decoded.value).toMatchObject({
      burstSize: engine.burstSize,
      silence: engine.silence,
    });
  });

  it.each([
    {
      what: "jobs at 00:00, 06:00, 12:00 and 18:00 (model and seasonal-naive both without error)",
      value: (i: number) => (i % 24 === 0 ? 1 : 0),
      days: 21,
    },
    {
      what: "one active day, its busy hours unwatched since",
      value: (i: number) => (i % 96 >= 20 && i % 96 < 76 ? (i < 96 ? 1 : null) : 0),
      days: 14,
    },
  ])(
    "restores an engine entering shadow on $what to the phases of one never restarted",
    ({ value, days }) => {
      const config = forecastConfig();
      let live = createEngine(config);
      let restored: ReturnType<typeof createEngine> | null = null;
      const differing: number[] = [];
      for (let i = 0; i < days * 96; i++) {
        const point = { slot: MONDAY_SLOT + i, value: value(i) };
        live = observeAll(live, [point], config).engine;
        if (restored) restored = observeAll(restored, [point], config).engine;
        else if (live.phase === "shadow") {
          const text = encodeEngine(live);
          const decoded = text.ok ? decodeEngine(text.value, config) : null;
          if (!decoded?.ok) throw new Error("state did not round-trip");
          restored = decoded.value;
        }
        if (restored && restored.phase !== live.phase) differing.push(i);
      }
      expect(restored).not.toBeNull();
      expect(differing).toEqual([]);
    },
  );

  it("round-trips a fresh engine", () => {
    const fresh = encodeEngine(createEngine(config));
    expect(fresh.ok && decodeEngine(fresh.value, config)).toMatchObject({
      ok: true,
      value: { phase: "learning" },
    });
  });

  it("reads a hand-written version 1 state (older states stay readable)", () => {
    const v1 = {
      v: 1,
      ph: "learning",
      rc: "insufficient-history",
      rm: "fewer than 3 days of activity history",
      fs: 100,
      ns: 101,
      lr: null,
      ar: 0,
      acc: [0, 0, 0, 0],
      h: Buffer.alloc(14 * 96 * 2, 0xff).toString("base64"),
      hs: 1,
      m: null,
    };
    const decoded = decodeEngine(JSON.stringify(v1), config);
    expect(decoded).toMatchObject({ ok: true, value: { phase: "learning", firstSlot: 100, nextSlot: 101 } });
    // Fields added later read as their neutral values.
    expect(decoded.ok && decoded.value).toMatchObject({
      missedRun: 0,
      burstSize: MIN_BURST_SIZE,
      silence: NO_SILENCE,
      // From the history, all gaps: nothing known within the ring.
      lastKnownSlot: 101 - 14 * 96 - 1,
      lastActiveSlot: null,
    });
  });

  it("reads a version 1 history as stored, linearly", () => {
    const wire = JSON.parse(encoded()) as Record<string, unknown>;
    const history = Buffer.alloc(14 * 96 * 2, 0xff);
    history.writeUInt16LE(65534, history.length - 2);
    Object.assign(wire, { v: 1, hs: 3 / 65534, h: history.toString("base64") });
    const decoded = decodeEngine(JSON.stringify(wire), config);
    if (!decoded.ok) throw new Error(decoded.error.message);
    expect(historyAt(decoded.value, (trained.nextSlot ?? 0) - 1)).toBeCloseTo(3, 9);
  });

  it("keeps small counts next to one large count, so the restored engine refits to the same pattern", () => {
    // One request at 09:00 each day for ten days; on the second day a load test of 200,000 requests at 14:00.
    const nine = 36;
    const points = Array.from({ length: 10 * DAY_SLOTS }, (_, i) => ({
      slot: MONDAY_SLOT + i,
      value: i === DAY_SLOTS + 56 ? 200_000 : i % DAY_SLOTS === nine ? 1 : 0,
    }));
    const live = observeAll(createEngine(config), points, config).engine;
    const text = encodeEngine(live);
    if (!text.ok) throw new Error(text.error.message);
    const back = decodeEngine(text.value, config);
    if (!back.ok) throw new Error(back.error.message);
    const lastNine = MONDAY_SLOT + 9 * DAY_SLOTS + nine;
    expect(historyAt(back.value, lastNine)).toBeCloseTo(1, 1);
    const tomorrowNine = lastNine + DAY_SLOTS;
    const fromLive = patternMean(refitEngine(live, config), tomorrowNine, config) ?? Number.NaN;
    const fromRestored = patternMean(refitEngine(back.value, config), tomorrowNine, config) ?? Number.NaN;
    expect(fromLive).toBeGreaterThan(0.9);
    expect(fromRestored).toBeCloseTo(fromLive, 1);
  });

  it.each([
    { what: "the last slot with a value", gapsAtEnd: 5 * 96, want: (ns: number) => ns - 5 * 96 - 1 },
    {
      what: "the slot before the ring when it holds none",
      gapsAtEnd: 14 * 96,
      want: (ns: number) => ns - 14 * 96 - 1,
    },
  ])(
    "reads, for a state saved before it was recorded, the last slot known from the history: $what",
    ({ gapsAtEnd, want }) => {
      const wire = JSON.parse(encoded()) as Record<string, unknown>;
      delete wire.lk;
      // Gaps (65535) over the last slots of the history, which is stored in time order.
      const history = Buffer.from(wire.h as string, "base64");
      history.fill(0xff, history.length - 2 * gapsAtEnd);
      wire.h = history.toString("base64");
      const decoded = decodeEngine(JSON.stringify(wire), config);
      expect(decoded.ok && decoded.value.lastKnownSlot).toBe(want(trained.nextSlot ?? 0));
    },
  );

  it("starts learning again when a state saved before the last slot known was recorded goes eight days without data", () => {
    const wire = JSON.parse(encoded()) as Record<string, unknown>;
    delete wire.lk;
    const decoded = decodeEngine(JSON.stringify(wire), config);
    if (!decoded.ok) throw new Error(decoded.error.message);
    const next = decoded.value.nextSlot ?? 0;
    const gaps = Array.from({ length: 8 * 96 }, (_, i) => ({ slot: next + i, value: null }));
    expect(observeAll(decoded.value, gaps, config).engine.phase).toBe("learning");
  });

  it("reads the last activity of a state saved before it was recorded from the history it keeps", () => {
    const wire = JSON.parse(encoded()) as Record<string, unknown>;
    delete wire.la;
    const decoded = decodeEngine(JSON.stringify(wire), config);
    expect(decoded.ok && decoded.value.lastActiveSlot).toBe(trained.lastActiveSlot);
  });

  it("round-trips the state of a busy workload, whose squared errors outgrow its counts", () => {
    const busy = observeAll(
      createEngine(config),
      officeSeries(15, 3).map((point) => ({ ...point, value: (point.value ?? 0) * 100_000 })),
      config,
    ).engine;
    const text = encodeEngine(busy);
    expect(text.ok && decodeEngine(text.value, config).ok).toBe(true);
  });

  it("writes the state of an engine whose config keeps a short history", () => {
    const short = forecastConfig({ historyDays: 1, learningDays: 2 });
    const text = encodeEngine(observeAll(createEngine(short), officeSeries(3, 2), short).engine);
    expect(text.ok).toBe(true);
  });

  it("refuses to write a state it could not read back", () => {
    const damaged = { ...trained, accuracy: { ...trained.accuracy, modelSquaredError: 1e20 } };
    const text = encodeEngine(damaged);
    expect(text.ok).toBe(false);
    expect(text.ok ? "" : text.error.message).toMatch(/would not read back: acc\[0\] is beyond/);
  });

  const mutate = (change: (wire: Record<string, unknown>) => void) => {
    const wire = JSON.parse(encoded()) as Record<string, unknown>;
    change(wire);
    return JSON.stringify(wire);
  };

  it.each([
    { name: "not JSON", text: () => "{not json", code: "malformed" },
    { name: "a JSON array", text: () => "[1,2]", code: "malformed" },
    {
      name: "an unknown version",
      text: () =>
        mutate((w) => {
          w.v = 99;
        }),
      code: "unsupported-version",
    },
    {
      name: "an unknown phase",
      text: () =>
        mutate((w) => {
          w.ph = "sleepy";
        }),
      code: "invalid",
    },
    {
      name: "a truncated history",
      text: () =>
        mutate((w) => {
          w.h = "AAAA";
        }),
      code: "invalid",
    },
    {
      name: "a non-numeric level",
      text: () =>
        mutate((w) => {
          (w.m as Record<string, unknown>).l = "x";
        }),
      code: "invalid",
    },
    {
      name: "an active phase without a model",
      text: () =>
        mutate((w) => {
          w.m = null;
        }),
      code: "invalid",
    },
    {
      name: "a malformed silence",
      text: () =>
        mutate((w) => {
          w.si = [1, "x", 0];
        }),
      code: "invalid",
    },
    { name: "more than 8 KiB", text: () => " ".repeat(MAX_STATE_BYTES + 1), code: "oversized" },
    {
      name: "more than 8 KiB of UTF-8 in fewer characters",
      text: () => `"${"é".repeat(MAX_STATE_BYTES / 2)}"`,
      code: "oversized",
    },
    ...(
      [
        ["a negative error moment", (w) => ((w.m as Wire).em = [-1, 1])],
        ["a zero variance scale", (w) => ((w.m as Wire).em = [1, 0])],
        ["an interval coverage above 1", (w) => (w.acc = [0.1, 0.2, 1.5, 10])],
        ["a negative scored count", (w) => (w.acc = [0.1, 0.2, 0.9, -1])],
        ["an overflowing level", (w) => ((w.m as Wire).l = 1e308)],
        ["a first slot after the next", (w) => (w.fs = (w.ns as number) + 1)],
        ["a last refit after the next slot", (w) => (w.lr = (w.ns as number) + 96)],
        ["a negative silence", (w) => (w.si = [-3, 0, 0])],
        // Read, it would be a chance above 1 of the silence, and the advice never suspended.
        ["a silence with negative evidence", (w) => (w.si = [12, -40, 0])],
        ["a silence of part of a slot", (w) => (w.si = [2.5, 1, 0])],
        ["a quiet run of part of a slot", (w) => (w.si = [2, 1, 0.5])],
        ["an anomaly run of part of a slot", (w) => (w.ar = 1.5)],
        ["a negative missed run", (w) => (w.mr = -1)],
        ["a last slot with a value at the next slot", (w) => (w.lk = w.ns)],
        ["a last active slot after the next slot", (w) => (w.la = (w.ns as number) + 1)],
        ["a next slot beyond any date", (w) => (w.ns = 1e10)],
        ["a started engine without its first slot", (w) => (w.fs = null)],
        ["a first slot beyond any date", (w) => (w.fs = -(2 ** 53 - 1))],
      ] satisfies [string, (w: Wire) => unknown][]
    ).map(([name, change]) => ({
      name,
      text: () =>
        mutate((w) => {
          change(w);
        }),
      code: "invalid",
    })),
  ])("rejects $name with an error value instead of throwing", ({ text, code }) => {
    const decoded = decodeEngine(text(), config);
    expect(decoded.ok).toBe(false);
    expect(decoded.ok ? "" : decoded.error.code).toBe(code);
  });

  it("keeps a state whose smoothing parameters lie outside this operator's bounds, clamped into them", () => {
    const text = (() => {
      const wire = JSON.parse(encoded()) as Wire;
      (wire.m as Wire).p = [50, 0, 0.1, 0.1, -2];
      return JSON.stringify(wire);
    })();
    const decoded = decodeEngine(text, config);
    expect(decoded.ok && decoded.value.params).toMatchObject({
      alpha: config.bounds.alpha[1],
      phi: config.bounds.phi[0],
    });
  });

  it("reads no trend from a state into an operator that keeps none, so its forecasts do not drift", () => {
    const wire = JSON.parse(encoded()) as Wire;
    (wire.m as Wire).b = 0.5;
    (wire.m as Wire).p = [0.1, 0.05, 0.1, 0.1, 0.3];
    const decoded = decodeEngine(JSON.stringify(wire), config);
    if (!decoded.ok) throw new Error(decoded.error.message);
    expect(decoded.value.model?.slope).toBe(0);
    expect(decoded.value.params?.beta).toBe(0);
    const from = trained.nextSlot ?? 0;
    const week = forecastSlots(decoded.value, from, 7 * DAY_SLOTS, config);
    const original = forecastSlots(trained, from, 7 * DAY_SLOTS, config);
    expect(week.at(-1)?.mean).toBeCloseTo(original.at(-1)?.mean ?? Number.NaN, 3);
  });

  it("keeps a state's trend in an operator that keeps one", () => {
    const trending = forecastConfig({ useTrend: true });
    const wire = JSON.parse(encoded()) as Wire;
    (wire.m as Wire).b = 0.01;
    const decoded = decodeEngine(JSON.stringify(wire), trending);
    expect(decoded.ok && decoded.value.model?.slope).toBe(0.01);
  });
});
