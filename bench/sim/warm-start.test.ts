import { describe, expect, it } from "vitest";
import { slotOf } from "../../forecast/index.ts";
import { SYNTHETIC_PROFILES } from "../traces/synthetic.ts";
import type { Trace } from "../traces/trace.ts";
import { extendedBack, splitHistory } from "./warm-start.ts";

const DAY_MS = 86_400_000;
const office =
  SYNTHETIC_PROFILES[0] ??
  (() => {
    throw new Error("no profile");
  })();

describe("a trace with history before it", () => {
  it("keeps the original calendar after the history: start, length, change and holidays move with it", () => {
    const extended = extendedBack({ ...office, holidays: [3, 40] }, 14);
    expect(extended.startMs).toBe(office.startMs - 14 * DAY_MS);
    expect(extended.days).toBe(office.days + 14);
    expect(extended.changeAtDay).toBe(office.changeAtDay + 14);
    expect(extended.holidays).toEqual([17, 54]);
    expect(new Date(extended.startMs).getUTCDay()).toBe(new Date(office.startMs).getUTCDay());
  });

  it("refuses history that is not whole weeks, which would move the weekdays", () => {
    expect(() => extendedBack(office, 10)).toThrow(/whole weeks/);
  });

  it("splits requests and telemetry gaps where the history ends, the grid ending where the rest starts", () => {
    const startMs = office.startMs;
    const trace: Trace = {
      name: "t",
      description: "",
      startMs,
      endMs: startMs + 3 * DAY_MS,
      requestsMs: [startMs + 1000, startMs + DAY_MS - 1, startMs + DAY_MS, startMs + 2 * DAY_MS],
      telemetryGaps: [
        { fromMs: startMs + 3_600_000, toMs: startMs + 7_200_000 },
        { fromMs: startMs + DAY_MS - 3_600_000, toMs: startMs + DAY_MS + 3_600_000 },
        { fromMs: startMs + 2 * DAY_MS, toMs: startMs + 2 * DAY_MS + 3_600_000 },
      ],
    };
    const { history, rest } = splitHistory(trace, 1);
    expect(rest.startMs).toBe(startMs + DAY_MS);
    expect(rest.endMs).toBe(trace.endMs);
    expect(rest.requestsMs).toEqual([startMs + DAY_MS, startMs + 2 * DAY_MS]);
    expect(rest.telemetryGaps).toHaveLength(2);
    expect(history).toHaveLength(96);
    expect(history.at(-1)?.slot).toBe(slotOf(rest.startMs) - 1);
    expect(history.filter((p) => p.value === 1)).toHaveLength(1);
  });
});
