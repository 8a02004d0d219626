import { describe, expect, it } from "vitest";
import type { ManagedWorkload } from "../../api/managedworkload.ts";
import { DAY_SLOTS, slotOf } from "../../forecast/index.ts";
import { askForHistory, settleHistory } from "./controller.ts";
import { dailyPatternPoints } from "./forecast-fixtures.ts";
import { ForecastBook } from "./forecasting.ts";

const now = Date.parse("2026-11-23T09:50:00Z");
const minute = 60_000;
const mw: ManagedWorkload = {
  apiVersion: "napwake.dev/v1alpha1",
  kind: "ManagedWorkload",
  metadata: { name: "web.deployment", namespace: "shop", uid: "u1" },
  spec: { targetRef: { kind: "Deployment", name: "web" } },
};

function logged() {
  const lines: string[] = [];
  const log = {
    warn: (_: object, msg: string) => void lines.push(`warn ${msg}`),
    error: (_: object, msg: string) => void lines.push(`error ${msg}`),
  };
  return { lines, log };
}

/** A book with a new engine waiting for its history. */
function waiting(): ForecastBook {
  const book = new ForecastBook({}, { history: true });
  book.look("k", mw, now, 30 * minute);
  return book;
}

describe("handing a read history to the forecast", () => {
  it("learns the history read", () => {
    const book = waiting();
    const { lines, log } = logged();
    settleHistory(book, log, now, { key: "k", mw, points: dailyPatternPoints(now, 14) });
    expect(book.look("k", mw, now + minute, 30 * minute).prediction?.phase).toMatch(/^active/);
    expect(lines).toEqual([]);
  });

  it("leaves the engine learning from now, and says why, when learning the history fails", () => {
    const book = waiting();
    book.learnHistory = () => {
      throw new RangeError("Invalid array length");
    };
    const { lines, log } = logged();
    settleHistory(book, log, now, { key: "k", mw, points: [] });
    expect(lines).toEqual(["error forecast: could not learn the activity history"]);
    expect(book.wantsHistory("k", now + 24 * 60 * minute)).toBe(false);
    expect(book.look("k", mw, now + minute, 30 * minute).notices).toEqual([
      expect.objectContaining({
        type: "Warning",
        reason: "ForecastHistoryUnavailable",
        note: expect.stringContaining("learning it failed: RangeError: Invalid array length"),
      }),
    ]);
  });

  it("reads again later when Prometheus could not be reached, and logs each failure", () => {
    const book = waiting();
    const { lines, log } = logged();
    settleHistory(book, log, now, { key: "k", mw, error: "no response within 30000 ms", retryable: true });
    expect(lines).toEqual(["warn forecast: activity history unavailable"]);
    expect(book.wantsHistory("k", now + 9 * minute)).toBe(false);
    expect(book.wantsHistory("k", now + 10 * minute)).toBe(true);
    expect(book.look("k", mw, now + minute, 30 * minute).notices).toEqual([]);
  });
});

describe("asking for the history of a new engine", () => {
  const loader = () => {
    const asked: { key: string; fromSlot: number; toSlot: number }[] = [];
    return {
      asked,
      request: (key: string, _: ManagedWorkload, fromSlot: number, toSlot: number) =>
        void asked.push({ key, fromSlot, toSlot }),
    };
  };

  it("asks for the 14 days up to the open slot", () => {
    const histories = loader();
    askForHistory(waiting(), histories, "k", mw, now);
    expect(histories.asked).toEqual([
      { key: "k", fromSlot: slotOf(now) - 14 * DAY_SLOTS, toSlot: slotOf(now) },
    ]);
  });

  it("asks for the window the book's engines keep", () => {
    const book = new ForecastBook({ historyDays: 7 }, { history: true });
    book.look("k", mw, now, 30 * minute);
    const histories = loader();
    askForHistory(book, histories, "k", mw, now);
    expect(histories.asked).toEqual([
      { key: "k", fromSlot: slotOf(now) - 7 * DAY_SLOTS, toSlot: slotOf(now) },
    ]);
  });

  it("refuses a history window longer than an engine keeps when the book is made", () => {
    expect(() => new ForecastBook({ historyDays: 28 }, { history: true })).toThrow(/historyDays/);
  });

  it("does not ask before the retry after a failed read", () => {
    const book = waiting();
    book.historyUnavailable("k", mw, "HTTP 503", { retryable: true, nowMs: now });
    const histories = loader();
    askForHistory(book, histories, "k", mw, now + minute);
    expect(histories.asked).toEqual([]);
  });

  it("without a loader (no Prometheus), lets the engine learn from now and be saved", () => {
    const book = waiting();
    askForHistory(book, undefined, "k", mw, now);
    expect(book.wantsHistory("k", now)).toBe(false);
    expect(book.look("k", mw, now + minute, 30 * minute).prediction?.state).toBeDefined();
  });
});
