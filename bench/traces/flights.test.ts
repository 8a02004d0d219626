import { describe, expect, it } from "vitest";
import { flightsToTrace, parseFlightDate } from "./flights.ts";

describe("vega-datasets flights converter", () => {
  it.each([
    { text: "2001/01/14 21:55", expected: Date.UTC(2001, 0, 14, 21, 55) },
    { text: "2001/03/31 00:00", expected: Date.UTC(2001, 2, 31, 0, 0) },
    { text: "01010001", expected: null },
    { text: "", expected: null },
  ])("parses $text", ({ text, expected }) => {
    expect(parseFlightDate(text)).toBe(expected);
  });

  it("turns departures into sorted requests over whole days, skipping unreadable records", () => {
    const trace = flightsToTrace(
      [
        { date: "2001/01/02 10:00", delay: 3, distance: 100, origin: "SEA", destination: "SFO" },
        { date: "2001/01/01 06:30" },
        { date: 5 },
        null,
      ],
      "flights",
    );
    expect(trace?.requestsMs).toEqual([Date.UTC(2001, 0, 1, 6, 30), Date.UTC(2001, 0, 2, 10, 0)]);
    expect(trace?.startMs).toBe(Date.UTC(2001, 0, 1));
    expect(trace?.endMs).toBe(Date.UTC(2001, 0, 3));
  });

  it("returns null when nothing is readable", () => {
    expect(flightsToTrace([{ date: "yesterday" }], "flights")).toBeNull();
  });
});
