import { describe, expect, it } from "vitest";
import type { ManagedWorkload } from "../../api/managedworkload.ts";
import {
  createEngine,
  decodeEngine,
  encodeEngine,
  forecastConfig,
  observeAll,
  slotStartMs,
} from "../../forecast/index.ts";
import { officeSeries } from "../../forecast/testing.ts";
import { dailyPatternPoints } from "./forecast-fixtures.ts";
import { ForecastBook, type PredictionStatus } from "./forecasting.ts";

const window = 30 * 60_000;

function mw(timeZone: string | undefined, prediction?: PredictionStatus): ManagedWorkload {
  return {
    apiVersion: "napwake.dev/v1alpha1",
    kind: "ManagedWorkload",
    metadata: { name: "web.deployment", namespace: "shop", uid: "u1" },
    spec: { targetRef: { kind: "Deployment", name: "web" }, ...(timeZone ? { forecast: { timeZone } } : {}) },
    ...(prediction ? { status: { prediction } } : {}),
  };
}

/** Three weeks of office hours learned by UTC up to a Monday, saved as that Monday starts (the next save is an hour on). */
function savedByUtc(): { prediction: PredictionStatus; monday: number } {
  const config = forecastConfig();
  const engine = observeAll(createEngine(config), officeSeries(21, 11), config).engine;
  const state = encodeEngine(engine);
  if (!state.ok) throw new Error(state.error.message);
  const monday = slotStartMs(engine.nextSlot ?? 0);
  const savedAt = new Date(monday).toISOString();
  return { prediction: { phase: engine.phase, confidence: 0.9, state: state.value, savedAt }, monday };
}

function zoneOf(prediction: PredictionStatus | undefined): string | undefined {
  const decoded = decodeEngine(prediction?.state ?? "", forecastConfig());
  if (!decoded.ok) throw new Error(decoded.error.message);
  return decoded.value.model?.calendar.timeZone;
}

describe("the forecast book and time zones", () => {
  it("places the seasons by spec.forecast.timeZone once it is set, says so once, and saves it at once", () => {
    const { prediction, monday } = savedByUtc();
    const book = new ForecastBook();
    const first = book.look("k", mw("Europe/Berlin", prediction), monday + 60_000, window);
    expect(first.notices.map((n) => n.note)).toEqual([
      "the forecast's seasons now follow the clock of Europe/Berlin, not UTC: placed anew from the history kept",
    ]);
    expect(zoneOf(first.prediction)).toBe("Europe/Berlin");
    book.sent("k", first.notices);
    const next = book.look("k", mw("Europe/Berlin", first.prediction), monday + 120_000, window);
    expect(next.notices).toEqual([]);
  });

  it("follows the operator's zone where the spec names none", () => {
    const { prediction, monday } = savedByUtc();
    const look = new ForecastBook({ timeZone: "America/New_York" }).look(
      "k",
      mw(undefined, prediction),
      monday + 60_000,
      window,
    );
    expect(zoneOf(look.prediction)).toBe("America/New_York");
    expect(look.prediction?.timeZone).toBe("America/New_York");
  });

  it("warns once of a zone this operator does not know, and follows its own meanwhile", () => {
    const { prediction, monday } = savedByUtc();
    const book = new ForecastBook({ timeZone: "America/New_York" });
    const first = book.look("k", mw("Mars/Olympus_Mons", prediction), monday + 60_000, window);
    const warning = first.notices.find((n) => n.reason === "ForecastTimeZoneUnknown");
    expect(warning?.type).toBe("Warning");
    expect(warning?.note).toMatch(
      /^spec\.forecast\.timeZone: unknown time zone "Mars\/Olympus_Mons": use an IANA name .*; the seasons follow America\/New_York meanwhile$/,
    );
    expect(zoneOf(first.prediction)).toBe("America/New_York");
    expect(first.prediction?.timeZone).toBe("America/New_York");
    book.sent("k", first.notices);
    expect(book.look("k", mw("Mars/Olympus_Mons"), monday + 120_000, window).notices).toEqual([]);
  });

  it("does not warn again of the unknown zone when it restores a state saved elsewhere", () => {
    const { prediction, monday } = savedByUtc();
    const book = new ForecastBook({ timeZone: "America/New_York" });
    const first = book.look("k", mw("Mars/Olympus_Mons", prediction), monday + 60_000, window);
    book.sent("k", first.notices);
    // Another replica saved since: this book restores from its state.
    const elsewhere = { ...prediction, savedAt: new Date(monday + 90_000).toISOString() };
    const next = book.look("k", mw("Mars/Olympus_Mons", elsewhere), monday + 120_000, window);
    expect(next.notices.map((n) => n.reason)).not.toContain("ForecastTimeZoneUnknown");
  });

  it("warns again of the unknown zone once forecasting is turned off and on again, as for a new engine", () => {
    const off = (zone: string): ManagedWorkload => {
      const workload = mw(zone);
      return { ...workload, spec: { ...workload.spec, forecast: { timeZone: zone, enabled: false } } };
    };
    const { monday } = savedByUtc();
    const book = new ForecastBook();
    const first = book.look("k", mw("Mars/Olympus_Mons"), monday, window);
    expect(first.notices.map((n) => n.reason)).toContain("ForecastTimeZoneUnknown");
    book.sent("k", first.notices);
    expect(book.look("k", off("Mars/Olympus_Mons"), monday + 60_000, window).prediction).toBeUndefined();
    const again = book.look("k", mw("Mars/Olympus_Mons"), monday + 120_000, window);
    expect(again.notices.map((n) => n.reason)).toContain("ForecastTimeZoneUnknown");
  });

  it.each(["Etc/UTC", "GMT"])(
    "takes %s for the UTC a state was saved in: nothing to place anew, nothing to say",
    (zone) => {
      const { prediction, monday } = savedByUtc();
      const look = new ForecastBook({ timeZone: zone }).look(
        "k",
        mw(undefined, prediction),
        monday + 60_000,
        window,
      );
      expect(look.notices).toEqual([]);
    },
  );

  it("places anew, rather than discards, a state saved in a zone this operator does not know", () => {
    const { prediction, monday } = savedByUtc();
    const wire = JSON.parse(prediction.state ?? "");
    const foreign = {
      ...prediction,
      state: JSON.stringify({ ...wire, v: 3, m: { ...wire.m, z: "Mars/Olympus_Mons" } }),
    };
    const look = new ForecastBook().look("k", mw(undefined, foreign), monday + 60_000, window);
    expect(look.notices.map((n) => n.note)).toEqual([
      "the forecast's seasons now follow the clock of UTC, not Mars/Olympus_Mons: placed anew from the history kept",
    ]);
    expect(look.prediction?.phase).toBe(prediction.phase);
  });

  it("warns a ManagedWorkload made again under the same name of the unknown zone too", () => {
    const { prediction, monday } = savedByUtc();
    const book = new ForecastBook();
    const first = book.look("k", mw("Mars/Olympus_Mons", prediction), monday + 60_000, window);
    book.sent("k", first.notices);
    const again = mw("Mars/Olympus_Mons");
    again.metadata.uid = "u2";
    const next = book.look("k", again, monday + 120_000, window);
    expect(next.notices.map((n) => n.reason)).toContain("ForecastTimeZoneUnknown");
  });

  it("refuses, at start, an operator zone the runtime does not know", () => {
    expect(() => new ForecastBook({ timeZone: "Europe/Atlantis" })).toThrow(
      /unknown time zone "Europe\/Atlantis"/,
    );
  });
});

describe("a history read handed over after the spec's time zone changed", () => {
  it("is learned in the zone the spec now asks for, with one Event and no placing anew", () => {
    const now = Date.parse("2026-11-23T09:50:00Z");
    const inZone = (timeZone: string, prediction?: PredictionStatus): ManagedWorkload => ({
      ...mw(timeZone, prediction),
      status: { phase: "Awake", ...(prediction ? { prediction } : {}) },
    });
    const book = new ForecastBook({}, { history: true });
    // The read is asked for with the spec as it was, and handed over with that object.
    const asked = inZone("UTC");
    const first = book.look("k", asked, now, window, now);
    book.sent("k", first.notices);
    expect(book.wantsHistory("k", now)).toBe(true);
    const changed = book.look("k", inZone("Europe/Berlin", first.prediction), now + 60_000, window, now);
    book.sent("k", changed.notices);
    book.learnHistory("k", asked, dailyPatternPoints(now, 14));
    const after = book.look("k", inZone("Europe/Berlin", changed.prediction), now + 120_000, window, now);
    expect(after.notices.map((n) => n.reason)).toEqual(["ForecastHistoryLearned"]);
    expect(after.prediction?.timeZone).toBe("Europe/Berlin");
  });
});
