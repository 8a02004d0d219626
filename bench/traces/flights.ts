// Turns the flight records that the `vega-datasets` npm package ships (data/flights-*.json: an array
// of {"date": "2001/01/14 21:55", "delay", "distance", "origin", "destination"}) into an activity
// trace: every departure is one request. Departures have a strong daily and a weekly cycle.

import type { Trace } from "./trace.ts";

export type FlightRecord = { date: string };

const DATE_PATTERN = /^(\d{4})\/(\d{2})\/(\d{2}) (\d{2}):(\d{2})$/;
const DAY_MS = 86_400_000;

/** Parses "YYYY/MM/DD HH:MM" (local airport time, read as UTC); null when it does not match. */
export function parseFlightDate(text: string): number | null {
  const match = DATE_PATTERN.exec(text);
  if (!match) return null;
  const [, year, month, day, hour, minute] = match.map(Number);
  const ms = Date.UTC(year ?? 0, (month ?? 1) - 1, day ?? 1, hour ?? 0, minute ?? 0);
  return Number.isFinite(ms) ? ms : null;
}

/** Records without a readable date are skipped; the trace spans whole days around the data. */
export function flightsToTrace(records: readonly unknown[], name: string): Trace | null {
  const requestsMs = records
    .map((record) => (isFlightRecord(record) ? parseFlightDate(record.date) : null))
    .filter((ms): ms is number => ms !== null)
    .sort((a, b) => a - b);
  const first = requestsMs[0];
  const last = requestsMs[requestsMs.length - 1];
  if (first === undefined || last === undefined) return null;
  const startMs = Math.floor(first / DAY_MS) * DAY_MS;
  const endMs = (Math.floor(last / DAY_MS) + 1) * DAY_MS;
  return {
    name,
    description: `vega-datasets flight departures, ${requestsMs.length} flights, one request each`,
    startMs,
    endMs,
    requestsMs,
    telemetryGaps: [],
  };
}

function isFlightRecord(value: unknown): value is FlightRecord {
  return (
    typeof value === "object" && value !== null && typeof (value as { date?: unknown }).date === "string"
  );
}
