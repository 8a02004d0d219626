// Seeded generator of realistic activity: users arrive in sessions during office hours, fewer on
// weekends, none on holidays; a nightly job, random bursts, telemetry gaps, and a change of pattern
// half way. Pure: the same profile always gives the same trace.

import { type Interval, SLOT_MS } from "../../forecast/index.ts";
import { normal, poisson, type Random, seededRandom } from "../../forecast/prng.ts";
import type { Trace } from "./trace.ts";

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;
const DAY_MINUTES = 24 * 60;
/** Weekend sessions are spread over the waking hours, 09:00 to 22:00. */
const WEEKEND_FROM_HOUR = 9;
const WEEKEND_HOURS = 13;
/** A scheduled job starts within this many minutes of its hour. */
const JOB_START_MINUTES = 3;

/** Working-day pattern; hours are UTC hours of day. */
export type OfficePattern = {
  workStartHour: number;
  workEndHour: number;
  /** Sessions per hour at the plateau. */
  peakSessionsPerHour: number;
  /** Factor applied 12:00-13:00. */
  lunchFactor: number;
  /** Sessions per hour in the evening tail (until 21:00). */
  eveningSessionsPerHour: number;
  /** Day-to-day spread of the start of the working day, in minutes (standard deviation). */
  startJitterMinutes: number;
  /** Sessions spread over a Saturday's or Sunday's waking hours (09:00 to 22:00). */
  weekendSessionsPerDay: number;
  /** Hour of a daily scheduled job (a few requests), or null. */
  nightlyJobHour: number | null;
  /** Extra scheduled job hours on working days only (e.g. a report), may be empty. */
  weekdayJobHours: number[];
};

export type TraceProfile = {
  name: string;
  description: string;
  seed: number;
  days: number;
  /** Must be a Monday 00:00 UTC so weekdays line up. */
  startMs: number;
  before: OfficePattern;
  /** Pattern from `changeAtDay` on. */
  after: OfficePattern;
  changeAtDay: number;
  /** Day indices (from start) that are public holidays: no office activity. */
  holidays: number[];
  /** Unscheduled bursts (a load test, a batch import) per week. */
  burstsPerWeek: number;
  telemetryGaps: number;
  telemetryGapHours: number;
  /** Mean requests per session (geometric). */
  requestsPerSession: number;
};

export function generateTrace(profile: TraceProfile): Trace {
  return generateTraceWithRates(profile).trace;
}

/**
 * Expected first requests per minute of whatever sends a burst of requests (a user session, a scheduled
 * job, an unscheduled burst), from the trace's start, with each day's drawn start of the working day: what
 * the generator itself knew when it drew the trace.
 */
export type FirstRequestRates = Float64Array;

/** Expected starts per minute (sessions, jobs); spread into first requests by `firstRequestRates`. */
type StartRates = Float64Array;

/** Draw `draw` of a profile: the profile itself first, then reseeded copies (a new trace each). */
export function reseeded(profile: TraceProfile, draw: number): TraceProfile {
  return draw === 0 ? profile : { ...profile, seed: profile.seed * 100_003 + draw };
}

/** The trace and the rates it was drawn from; the same trace as `generateTrace`. */
export function generateTraceWithRates(profile: TraceProfile): {
  trace: Trace;
  firstRequests: FirstRequestRates;
} {
  const random = seededRandom(profile.seed);
  const requests: number[] = [];
  const sessionStarts: StartRates = new Float64Array(profile.days * DAY_MINUTES);
  const jobStarts: StartRates = new Float64Array(profile.days * DAY_MINUTES);
  for (let day = 0; day < profile.days; day++) {
    const pattern = day < profile.changeAtDay ? profile.before : profile.after;
    const dayStartMs = profile.startMs + day * DAY_MS;
    const ofDay = (rates: StartRates) => rates.subarray(day * DAY_MINUTES, (day + 1) * DAY_MINUTES);
    const weekday = day % 7 < 5;
    const holiday = profile.holidays.includes(day);
    addScheduledJobs(requests, random, dayStartMs, pattern, weekday && !holiday, ofDay(jobStarts));
    if (weekday && !holiday) {
      addOfficeDay(requests, random, dayStartMs, pattern, profile.requestsPerSession, ofDay(sessionStarts));
    }
    if (!weekday) {
      const sessions = pattern.weekendSessionsPerDay;
      addSparseSessions(requests, random, dayStartMs, sessions, profile, ofDay(sessionStarts));
    }
  }
  const burstRate = addBursts(requests, random, profile);
  requests.sort((a, b) => a - b);
  const endMs = profile.startMs + profile.days * DAY_MS;
  const trace = {
    name: profile.name,
    description: profile.description,
    startMs: profile.startMs,
    endMs,
    requestsMs: requests.filter((t) => t >= profile.startMs && t < endMs),
    telemetryGaps: gapsFor(random, profile),
  };
  const delays = seededRandom(profile.seed + 0x5eed);
  const sessionDelay = delayPmf(() => Math.min(...sessionOffsets(delays, profile.requestsPerSession)));
  const jobDelay = delayPmf(() => Math.min(...jobOffsets(delays)));
  const firstRequests = spread(sessionStarts, sessionDelay);
  spread(jobStarts, jobDelay).forEach((rate, m) => {
    firstRequests[m] = (firstRequests[m] ?? 0) + rate + burstRate;
  });
  return { trace, firstRequests };
}

const DELAY_DRAWS = 20_000;

/**
 * Chance, per whole minute k, that a burst starting at a uniform time within a minute sends its first
 * request k minutes later, for first-request delays drawn by `delayMs`.
 */
function delayPmf(delayMs: () => number): Float64Array {
  const pmf = new Float64Array(DAY_MINUTES);
  let longest = 0;
  for (let draw = 0; draw < DELAY_DRAWS; draw++) {
    const minute = Math.floor((draw + 0.5) / DELAY_DRAWS + delayMs() / MINUTE_MS);
    pmf[minute] = (pmf[minute] ?? 0) + 1 / DELAY_DRAWS;
    longest = Math.max(longest, minute);
  }
  return pmf.subarray(0, longest + 1);
}

/** Starts per minute spread over the minutes their first requests fall in. */
function spread(starts: StartRates, pmf: Float64Array): Float64Array {
  const out = new Float64Array(starts.length);
  starts.forEach((rate, m) => {
    if (rate === 0) return;
    pmf.forEach((chance, k) => {
      if (m + k < out.length) out[m + k] = (out[m + k] ?? 0) + rate * chance;
    });
  });
  return out;
}

/** Session arrival rate (per hour) at `hour` on a working day whose start is shifted by `shiftHours`. */
function officeRate(pattern: OfficePattern, hour: number, shiftHours: number): number {
  const start = pattern.workStartHour + shiftHours;
  const end = pattern.workEndHour;
  if (hour < start - 0.5 || hour >= 21) return 0;
  if (hour < start) return pattern.peakSessionsPerHour * 0.3;
  if (hour >= end) return pattern.eveningSessionsPerHour;
  const rampUp = Math.min(1, (hour - start + 0.25) / 1);
  const rampDown = Math.min(1, (end - hour) / 1);
  const lunch = hour >= 12 && hour < 13 ? pattern.lunchFactor : 1;
  return pattern.peakSessionsPerHour * Math.min(rampUp, rampDown) * lunch;
}

function addOfficeDay(
  requests: number[],
  random: Random,
  dayStartMs: number,
  pattern: OfficePattern,
  requestsPerSession: number,
  rates: StartRates,
) {
  const shiftHours = (normal(random) * pattern.startJitterMinutes) / 60;
  for (let minute = 0; minute < DAY_MINUTES; minute++) {
    const rate = officeRate(pattern, minute / 60, shiftHours) / 60;
    rates[minute] = (rates[minute] ?? 0) + rate;
    const sessions = poisson(random, rate);
    for (let s = 0; s < sessions; s++) {
      addSession(requests, random, dayStartMs + minute * MINUTE_MS, requestsPerSession);
    }
  }
}

function addSparseSessions(
  requests: number[],
  random: Random,
  dayStartMs: number,
  sessionsPerDay: number,
  profile: TraceProfile,
  rates: StartRates,
) {
  const from = WEEKEND_FROM_HOUR * 60;
  const minutes = WEEKEND_HOURS * 60;
  for (let m = from; m < from + minutes; m++) rates[m] = (rates[m] ?? 0) + sessionsPerDay / minutes;
  const sessions = poisson(random, sessionsPerDay);
  for (let s = 0; s < sessions; s++) {
    const atMs = dayStartMs + (WEEKEND_FROM_HOUR + random() * WEEKEND_HOURS) * HOUR_MS;
    addSession(requests, random, atMs, profile.requestsPerSession);
  }
}

/** A session: a geometric number of requests spread over up to 20 minutes. */
function addSession(requests: number[], random: Random, startMs: number, meanRequests: number) {
  for (const offsetMs of sessionOffsets(random, meanRequests)) requests.push(startMs + offsetMs);
}

/** A session's requests, as offsets from its start: a geometric number spread over up to 20 minutes. */
function sessionOffsets(random: Random, meanRequests: number): number[] {
  const count = 1 + Math.floor(Math.log(Math.max(random(), Number.EPSILON)) / Math.log(1 - 1 / meanRequests));
  const spanMs = (1 + random() * 19) * MINUTE_MS;
  return Array.from({ length: count }, () => random() * spanMs);
}

/**
 * The generator's own chance, per minute of quiet since a request of a session, that the same session
 * sends another request within the next minute (index s: after s to s + 1 minutes of quiet), estimated
 * from `draws` sessions.
 */
export function sessionFollowUpHazard(profile: TraceProfile, minutes = 30, draws = 50_000): Float64Array {
  const random = seededRandom(profile.seed);
  const atRisk = new Float64Array(minutes);
  const followed = new Float64Array(minutes);
  for (let draw = 0; draw < draws; draw++) {
    const offsets = sessionOffsets(random, profile.requestsPerSession).sort((a, b) => a - b);
    offsets.forEach((offsetMs, i) => {
      const gapMinutes = ((offsets[i + 1] ?? Number.POSITIVE_INFINITY) - offsetMs) / MINUTE_MS;
      for (let s = 0; s < minutes && gapMinutes >= s; s++) {
        atRisk[s] = (atRisk[s] ?? 0) + 1;
        if (gapMinutes < s + 1) followed[s] = (followed[s] ?? 0) + 1;
      }
    });
  }
  return atRisk.map((n, s) => (n > 0 ? (followed[s] ?? 0) / n : 0));
}

function addScheduledJobs(
  requests: number[],
  random: Random,
  dayStartMs: number,
  pattern: OfficePattern,
  workingDay: boolean,
  rates: StartRates,
) {
  const hours = [...(pattern.nightlyJobHour === null ? [] : [pattern.nightlyJobHour])];
  if (workingDay) hours.push(...pattern.weekdayJobHours);
  for (const hour of hours) {
    for (let m = hour * 60; m < hour * 60 + JOB_START_MINUTES; m++) {
      rates[m] = (rates[m] ?? 0) + 1 / JOB_START_MINUTES;
    }
    const startMs = dayStartMs + hour * HOUR_MS + random() * JOB_START_MINUTES * MINUTE_MS;
    for (const offsetMs of jobOffsets(random)) requests.push(startMs + offsetMs);
  }
}

/** A scheduled job's requests, as offsets from its start: eight within two minutes. */
function jobOffsets(random: Random): number[] {
  return Array.from({ length: 8 }, () => random() * 2 * MINUTE_MS);
}

/** Adds the unscheduled bursts; returns their rate per minute (they start uniformly over the trace). */
function addBursts(requests: number[], random: Random, profile: TraceProfile): number {
  const count = poisson(random, (profile.burstsPerWeek * profile.days) / 7);
  for (let b = 0; b < count; b++) {
    const startMs = profile.startMs + random() * profile.days * DAY_MS;
    for (let i = 0; i < 40; i++) requests.push(startMs + random() * 5 * MINUTE_MS);
  }
  return profile.burstsPerWeek / (7 * DAY_MINUTES);
}

function gapsFor(random: Random, profile: TraceProfile): Interval[] {
  const gaps: Interval[] = [];
  for (let g = 0; g < profile.telemetryGaps; g++) {
    const fromSlot = Math.floor((random() * profile.days * DAY_MS) / SLOT_MS);
    const fromMs = profile.startMs + fromSlot * SLOT_MS;
    gaps.push({ fromMs, toMs: fromMs + profile.telemetryGapHours * HOUR_MS });
  }
  return gaps;
}

const MONDAY_2024_01_01 = Date.UTC(2024, 0, 1);

const OFFICE: OfficePattern = {
  workStartHour: 8,
  workEndHour: 18,
  peakSessionsPerHour: 6,
  lunchFactor: 0.5,
  eveningSessionsPerHour: 0.4,
  startJitterMinutes: 15,
  weekendSessionsPerDay: 1,
  nightlyJobHour: 2,
  weekdayJobHours: [],
};

/** The traces the replay benchmark uses; seeds are fixed and were not chosen for the results. */
export const SYNTHETIC_PROFILES: readonly TraceProfile[] = [
  {
    name: "office-app",
    description:
      "internal app, office hours 08-18 with a 02:00 nightly job; from day 28 hours move to 06-15, the job to 04:00",
    seed: 1,
    days: 56,
    startMs: MONDAY_2024_01_01,
    before: OFFICE,
    after: { ...OFFICE, workStartHour: 6, workEndHour: 15, nightlyJobHour: 4 },
    changeAtDay: 28,
    holidays: [15, 39],
    burstsPerWeek: 1,
    telemetryGaps: 2,
    telemetryGapHours: 6,
    requestsPerSession: 5,
  },
  {
    name: "dev-sandbox",
    description:
      "sparse developer use 09-17 (1.5 sessions/h), irregular weekends; from day 21 use doubles, 10-19",
    seed: 2,
    days: 42,
    startMs: MONDAY_2024_01_01,
    before: {
      ...OFFICE,
      workStartHour: 9,
      workEndHour: 17,
      peakSessionsPerHour: 1.5,
      eveningSessionsPerHour: 0.2,
      startJitterMinutes: 30,
      weekendSessionsPerDay: 0.5,
      nightlyJobHour: null,
    },
    after: {
      ...OFFICE,
      workStartHour: 10,
      workEndHour: 19,
      peakSessionsPerHour: 3,
      eveningSessionsPerHour: 0.2,
      startJitterMinutes: 30,
      weekendSessionsPerDay: 0.5,
      nightlyJobHour: null,
    },
    changeAtDay: 21,
    holidays: [10],
    burstsPerWeek: 0.5,
    telemetryGaps: 1,
    telemetryGapHours: 12,
    requestsPerSession: 4,
  },
  {
    name: "reporting-jobs",
    description:
      "scheduled jobs 01:00 daily, 07:00 and 13:00 on working days, light office use; 01:00 job moves to 03:00 at day 28",
    seed: 3,
    days: 56,
    startMs: MONDAY_2024_01_01,
    before: {
      ...OFFICE,
      peakSessionsPerHour: 0.8,
      eveningSessionsPerHour: 0,
      weekendSessionsPerDay: 0.2,
      nightlyJobHour: 1,
      weekdayJobHours: [7, 13],
    },
    after: {
      ...OFFICE,
      peakSessionsPerHour: 0.8,
      eveningSessionsPerHour: 0,
      weekendSessionsPerDay: 0.2,
      nightlyJobHour: 3,
      weekdayJobHours: [7, 13],
    },
    changeAtDay: 28,
    holidays: [22],
    burstsPerWeek: 0.5,
    telemetryGaps: 2,
    telemetryGapHours: 3,
    requestsPerSession: 3,
  },
];
