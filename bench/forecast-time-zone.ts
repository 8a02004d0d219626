// Daylight saving against the forecast's seasons: `npx node bench/forecast-time-zone.ts`
// An office-hours workload whose users keep Europe/Berlin time, across the spring and the autumn change of its
// clocks: the forecast policy with its seasons placed by UTC (the default) and by Europe/Berlin, side by side with
// a fixed idle timeout, on the same draws. Nothing is tuned; the seeds are fixed. Progress goes to stderr, the
// report (markdown) to stdout.

import {
  type ForecastConfig,
  forecastConfig,
  type GridPoint,
  SLOT_MS,
  utcOffsetMs,
} from "../forecast/index.ts";
import { fewer, percentChange, table } from "./format.ts";
import { meetsTarget } from "./sim/draws.ts";
import {
  DEFAULT_PREWAKE_MS,
  FIXED,
  FORECAST,
  HISTORY_DAYS,
  IDLE_MS,
  POLICY_DRAWS,
  UNTRUSTED_IDLE_MS,
} from "./sim/policies.ts";
import { type Policy, type PolicyResult, replayPolicy, WAKE_MS } from "./sim/replay.ts";
import { splitHistory } from "./sim/warm-start.ts";
import { onWallClockOf, wallClockToUtcMs } from "./traces/local-time.ts";
import { generateTrace, reseeded, SYNTHETIC_PROFILES, type TraceProfile } from "./traces/synthetic.ts";
import type { Trace } from "./traces/trace.ts";

const MINUTE_MS = 60_000;
const HOUR_MS = 60 * MINUTE_MS;
const DAY_MS = 24 * HOUR_MS;
const ZONE = "Europe/Berlin";
/** Days drawn per season: the history, two weeks before the change and two (and a bit) after it. */
const DAYS = 42;
/** Draws of the generator replayed: the first after the POLICY_DRAWS the defaults were chosen reading. */
const FIRST_DRAW = POLICY_DRAWS;
const DRAWS = 8;

type Season = { name: string; change: string; startWallMs: number };

/** Each drawn from the Monday four weeks before the Sunday its clocks change on, 00:00 local. */
const SEASONS: readonly Season[] = [
  { name: "spring", change: "clocks go forward", startWallMs: Date.UTC(2026, 2, 2) },
  { name: "autumn", change: "clocks go back", startWallMs: Date.UTC(2026, 8, 28) },
];

type Variant = { label: string; forecast: boolean; config: ForecastConfig };

const forecastName = (zone: string, lead = "") => `(c) + forecast, timeZone ${zone}${lead}`;
const LONG_LEAD = `, pre-wake ${DEFAULT_PREWAKE_MS / MINUTE_MS} min`;

/** (a), then (c) with its seasons by UTC and by the users' zone; the same two with the default pre-wake lead. */
const VARIANTS: readonly Variant[] = [
  { label: FIXED.name, forecast: false, config: forecastConfig() },
  { label: forecastName("UTC"), forecast: true, config: forecastConfig({ timeZone: "UTC" }) },
  { label: forecastName(ZONE), forecast: true, config: forecastConfig({ timeZone: ZONE }) },
  {
    label: forecastName("UTC", LONG_LEAD),
    forecast: true,
    config: forecastConfig({ timeZone: "UTC", prewakeLeadMs: DEFAULT_PREWAKE_MS }),
  },
  {
    label: forecastName(ZONE, LONG_LEAD),
    forecast: true,
    config: forecastConfig({ timeZone: ZONE, prewakeLeadMs: DEFAULT_PREWAKE_MS }),
  },
];
/** Pairs of variants (UTC, the users' zone) compared after the change, by index in VARIANTS. */
const PAIRS: readonly { lead: string; utc: number; local: number }[] = [
  { lead: `${forecastConfig().prewakeLeadMs / MINUTE_MS} min`, utc: 1, local: 2 },
  { lead: `${DEFAULT_PREWAKE_MS / MINUTE_MS} min`, utc: 3, local: 4 },
];

const write = (text: string) => process.stdout.write(`${text}\n`);
const progress = (text: string) => process.stderr.write(`${text}\n`);

const office: TraceProfile =
  SYNTHETIC_PROFILES[0] ??
  (() => {
    throw new Error("no office-app profile");
  })();

/** The office-app profile's first pattern throughout, from the season's Monday, with no holidays and no gaps. */
function profileOf(season: Season): TraceProfile {
  return {
    ...office,
    name: `office-${season.name}`,
    description: "office-app's office hours, kept by the local clock",
    startMs: season.startWallMs,
    days: DAYS,
    after: office.before,
    changeAtDay: DAYS,
    holidays: [],
    telemetryGaps: 0,
  };
}

/** `trace` up to `endMs`: what the replay had seen by then (it is causal: nothing later moves anything earlier). */
function until(trace: Trace, endMs: number): Trace {
  return {
    ...trace,
    endMs,
    requestsMs: trace.requestsMs.filter((t) => t < endMs),
    telemetryGaps: trace.telemetryGaps.filter((gap) => gap.fromMs < endMs),
  };
}

/** The one instant in [fromMs, toMs) where the zone's offset changes, looked at slot by slot. */
function changeWithin(fromMs: number, toMs: number): number {
  const changes: number[] = [];
  for (let t = fromMs + SLOT_MS; t < toMs; t += SLOT_MS) {
    if (utcOffsetMs(t, ZONE) !== utcOffsetMs(t - SLOT_MS, ZONE)) changes.push(t);
  }
  if (changes.length !== 1) throw new Error(`expected one change of offset, found ${changes.length}`);
  return changes[0] as number;
}

type Tally = {
  requests: number;
  requestsAfter: number;
  cold: number;
  coldAfter: number;
  /** Cold starts in the hour after the change (where the nightly job may land, see `jobOnChangeDay`). */
  coldFirstHour: number;
  awake: number;
  awakeAfter: number;
  prewakes: number;
  byWeek: number[];
  meeting: number;
  /** Per draw, for the comparison between variants. */
  coldAfterByDraw: number[];
};

const WEEKS = 4;

function emptyTally(): Tally {
  return {
    requests: 0,
    requestsAfter: 0,
    cold: 0,
    coldAfter: 0,
    coldFirstHour: 0,
    awake: 0,
    awakeAfter: 0,
    prewakes: 0,
    byWeek: Array.from({ length: WEEKS }, () => 0),
    meeting: 0,
    coldAfterByDraw: [],
  };
}

function policyOf(variant: Variant, history: readonly GridPoint[]): Policy {
  return variant.forecast ? { ...FORECAST, name: variant.label, history } : FIXED;
}

type SeasonRun = {
  season: Season;
  changeMs: number;
  restStartMs: number;
  restEndMs: number;
  tallies: Tally[];
};

function runSeason(season: Season): SeasonRun {
  const profile = profileOf(season);
  if (new Date(season.startWallMs).getUTCDay() !== 1) throw new Error(`${season.name} starts on no Monday`);
  const tallies = VARIANTS.map(emptyTally);
  let changeMs = 0;
  let restStartMs = 0;
  let restEndMs = 0;
  for (let draw = FIRST_DRAW; draw < FIRST_DRAW + DRAWS; draw++) {
    const startedMs = performance.now();
    const trace = onWallClockOf(generateTrace(reseeded(profile, draw)), ZONE);
    const { history, rest } = splitHistory(trace, HISTORY_DAYS);
    // The history ends at a local midnight: no change of clocks falls in it.
    if (rest.startMs !== wallClockToUtcMs(season.startWallMs + HISTORY_DAYS * DAY_MS, ZONE)) {
      throw new Error(`${season.name}: the history does not end at a local midnight`);
    }
    changeMs = changeWithin(rest.startMs, rest.endMs);
    restStartMs = rest.startMs;
    restEndMs = rest.endMs;
    const before = until(rest, changeMs);
    const firstHour = until(rest, changeMs + HOUR_MS);
    const results = VARIANTS.map((variant) => {
      const policy = policyOf(variant, history);
      const whole = replayPolicy(rest, policy, variant.config);
      const upToChange = replayPolicy(before, policy, variant.config);
      if (whole.coldStartsByWeek[0] !== upToChange.coldStartsByWeek[0]) {
        throw new Error(`${variant.label}: the replay up to the change differs from the whole one's start`);
      }
      const coldFirstHour =
        replayPolicy(firstHour, policy, variant.config).coldStarts - upToChange.coldStarts;
      return { whole, upToChange, coldFirstHour };
    });
    const baseline = results[0]?.whole as PolicyResult;
    results.forEach(({ whole, upToChange, coldFirstHour }, i) => {
      const tally = tallies[i] as Tally;
      const coldAfter = whole.coldStarts - upToChange.coldStarts;
      const awakeAfter = whole.awakeHours - upToChange.awakeHours;
      tally.requests += whole.requests;
      tally.requestsAfter += whole.requests - upToChange.requests;
      tally.cold += whole.coldStarts;
      tally.coldAfter += coldAfter;
      tally.coldFirstHour += coldFirstHour;
      tally.awake += whole.awakeHours;
      tally.awakeAfter += awakeAfter;
      tally.prewakes += whole.prewakes;
      whole.coldStartsByWeek.forEach((count, week) => {
        const into = Math.min(week, WEEKS - 1);
        tally.byWeek[into] = (tally.byWeek[into] ?? 0) + count;
      });
      if (meetsTarget(whole, baseline)) tally.meeting++;
      tally.coldAfterByDraw.push(coldAfter);
    });
    const seconds = ((performance.now() - startedMs) / 1000).toFixed(1);
    progress(`${season.name}: draw ${draw} replayed under ${VARIANTS.length} policies in ${seconds} s`);
  }
  return { season, changeMs, restStartMs, restEndMs, tallies };
}

/** "Sun 29 Mar 2026, 03:00" on the users' clock. */
function local(atMs: number, withWeekday = true): string {
  return new Intl.DateTimeFormat("en-GB", {
    timeZone: ZONE,
    ...(withWeekday ? { weekday: "short" } : {}),
    day: "numeric",
    month: "short",
    year: "numeric",
    hour: "2-digit",
    minute: "2-digit",
    timeZoneName: "short",
  }).format(new Date(atMs));
}

function utc(atMs: number): string {
  return `${new Date(atMs).toISOString().slice(0, 16).replace("T", " ")} UTC`;
}

function span(ms: number): string {
  const days = Math.floor(ms / DAY_MS);
  const hours = Math.round((ms - days * DAY_MS) / HOUR_MS);
  return hours === 0 ? `${days} d` : `${days} d ${hours} h`;
}

/** Where the nightly job of the change's day falls: the clocks may skip its hour or show it twice. */
function jobOnChangeDay(changeMs: number): string {
  const hour = office.before.nightlyJobHour;
  if (hour === null) return "no nightly job";
  const clock = (wallMs: number) => new Date(wallMs).toISOString().slice(11, 16);
  const [fromWallMs, toWallMs] = [utcOffsetMs(changeMs - 1, ZONE), utcOffsetMs(changeMs, ZONE)].map(
    (offsetMs) => changeMs + offsetMs,
  ) as [number, number];
  const jobMs = wallClockToUtcMs(Math.floor(fromWallMs / DAY_MS) * DAY_MS + hour * HOUR_MS, ZONE);
  const when = jobMs < changeMs ? "before the change" : jobMs === changeMs ? "at the change" : "after it";
  const clocks =
    toWallMs > fromWallMs
      ? `the clocks skip ${clock(fromWallMs)}-${clock(toWallMs)}`
      : `the clocks show ${clock(toWallMs)}-${clock(fromWallMs)} twice`;
  return `${clocks}; that day's ${hour}:00 nightly job runs at ${local(jobMs, false)} (${utc(jobMs)}), ${when}`;
}

function reportSeason(run: SeasonRun) {
  const { season, changeMs, restStartMs, restEndMs, tallies } = run;
  const fixed = tallies[0] as Tally;
  const offset = (atMs: number) => {
    const hours = utcOffsetMs(atMs, ZONE) / HOUR_MS;
    return `UTC${hours < 0 ? "-" : "+"}${Math.abs(hours)}`;
  };
  write(
    `\n## ${season.name}: ${season.change} at ${utc(changeMs)} (${offset(changeMs - 1)} to ${offset(changeMs)})`,
  );
  write(
    `drawn from ${local(wallClockToUtcMs(season.startWallMs, ZONE))}; history to ${local(restStartMs)}; ` +
      `replayed from there to ${local(restEndMs)} (${span(restEndMs - restStartMs)}): ` +
      `${span(changeMs - restStartMs)} before the change, ${span(restEndMs - changeMs)} after it (to the end). ` +
      `Over the ${DRAWS} draws: ${fixed.requests} requests, ${fixed.requestsAfter} of them after the change.\n`,
  );
  write(
    table(
      [
        "policy",
        "cold starts",
        "vs (a)",
        "before change",
        "after change",
        "vs (a)",
        "of which 1st hour",
        "awake h",
        "vs (a)",
        "awake h after",
        "vs (a)",
        "pre-wakes",
        "draws meeting target",
      ],
      tallies.map((t, i) => [
        VARIANTS[i]?.label ?? "",
        String(t.cold),
        percentChange(t.cold, fixed.cold),
        String(t.cold - t.coldAfter),
        String(t.coldAfter),
        percentChange(t.coldAfter, fixed.coldAfter),
        String(t.coldFirstHour),
        t.awake.toFixed(1),
        percentChange(t.awake, fixed.awake),
        t.awakeAfter.toFixed(1),
        percentChange(t.awakeAfter, fixed.awakeAfter),
        String(t.prewakes),
        i === 0 ? "" : `${t.meeting} of ${DRAWS}`,
      ]),
    ),
  );
  write(`(1st hour: the hour after the change; ${jobOnChangeDay(changeMs)})`);
  const weekEnd = (week: number) =>
    week === WEEKS - 1 ? "end" : local(restStartMs + (week + 1) * 7 * DAY_MS, false).replace(/ \d{4},/, "");
  write(
    `\ncold starts per week of the replay (7 x 24 h from its start; the change falls in week ` +
      `${Math.floor((changeMs - restStartMs) / (7 * DAY_MS)) + 1}):`,
  );
  write(
    table(
      ["policy", ...Array.from({ length: WEEKS }, (_, w) => `week ${w + 1} (to ${weekEnd(w)})`)],
      tallies.map((t, i) => [VARIANTS[i]?.label ?? "", ...t.byWeek.map(String)]),
    ),
  );
  write(`\n${ZONE} against UTC after the change (same draws, same history, per draw):`);
  write(
    table(
      [
        "pre-wake lead",
        `cold starts after: UTC`,
        ZONE,
        "change",
        "draws fewer / equal / more",
        "awake h after: UTC",
        ZONE,
        "change",
      ],
      PAIRS.map(({ lead, utc: u, local: l }) => {
        const a = tallies[u] as Tally;
        const b = tallies[l] as Tally;
        const sign = (d: number) => Math.sign((b.coldAfterByDraw[d] ?? 0) - (a.coldAfterByDraw[d] ?? 0));
        const signs = Array.from({ length: DRAWS }, (_, d) => sign(d));
        const count = (s: number) => signs.filter((x) => x === s).length;
        return [
          lead,
          String(a.coldAfter),
          String(b.coldAfter),
          fewer(b.coldAfter, a.coldAfter),
          `${count(-1)} / ${count(0)} / ${count(1)}`,
          a.awakeAfter.toFixed(1),
          b.awakeAfter.toFixed(1),
          percentChange(b.awakeAfter, a.awakeAfter),
        ];
      }),
    ),
  );
}

function main() {
  const startedMs = performance.now();
  const d = forecastConfig();
  write("# Napwake forecast across daylight-saving changes (seasons by UTC or by the users' time zone)");
  write(
    `workload: office-app's office pattern (working days ${office.before.workStartHour}:00-` +
      `${office.before.workEndHour}:00 with a lunch dip and an evening tail to 21:00, a ` +
      `${office.before.nightlyJobHour}:00 nightly job, ${office.before.weekendSessionsPerDay} session a weekend ` +
      `day), every hour of it (the nightly job too) by the wall clock of ${ZONE}; no change of pattern, no ` +
      `holidays, no telemetry gaps; office-app's unscheduled bursts (${office.burstsPerWeek} a week, at any ` +
      `hour) and ${office.requestsPerSession} requests a session kept\n` +
      `traces: per season ${DAYS} days drawn on the local wall clock from a Monday 00:00 four weeks before the ` +
      `change, placed at their UTC instants (a time the clocks skip moved forward by the gap, a repeated time at ` +
      `its first showing); the first ${HISTORY_DAYS} days are the occupancy history every forecast starts from ` +
      `(as the operator starts a new engine from Prometheus), the policies are replayed on the rest\n` +
      `draws: ${DRAWS} of the generator, ${FIRST_DRAW}..${FIRST_DRAW + DRAWS - 1} (held out from the ` +
      `${POLICY_DRAWS} the defaults were chosen reading), the same seeds in both seasons (the same local ` +
      `activity, only the change differs); every figure is a total over the draws\n` +
      `policies: ${FIXED.name}; (c) as in bench/forecast-replay.ts's verdict: idle window ` +
      `${IDLE_MS / MINUTE_MS} min once the forecast is trusted (less where it calls the next slots quiet), ` +
      `${UNTRUSTED_IDLE_MS / MINUTE_MS} min while not, the awake budget on, pre-wake lead ` +
      `${d.prewakeLeadMs / MINUTE_MS} min, started from the history; its seasons placed by UTC (timeZone ` +
      `"UTC", the default) or by ${ZONE}; the last two rows the same with spec.forecast.prewake's default lead, ` +
      `${DEFAULT_PREWAKE_MS / MINUTE_MS} min\n` +
      `cold starts: requests that found the workload paused or still waking (a wake takes ${WAKE_MS / 1000} s); ` +
      `after change: from the instant the clocks change to the replay's end, before: from the replay's start to ` +
      `it (the days before the change replayed on their own: the replay is causal); awake h the same way; ` +
      `target: >= 50% fewer cold starts than (a) over the replay at no more awake hours, per draw`,
  );
  const runs = SEASONS.map(runSeason);
  for (const run of runs) reportSeason(run);
  write("\n## summary: after the change, seasons by the users' zone against by UTC");
  write(
    table(
      [
        "season",
        "pre-wake lead",
        "cold starts after",
        "awake h after",
        "cold starts over the replay",
        "awake h",
      ],
      runs.flatMap(({ season, tallies }) =>
        PAIRS.map(({ lead, utc: u, local: l }) => {
          const a = tallies[u] as Tally;
          const b = tallies[l] as Tally;
          return [
            season.name,
            lead,
            `${a.coldAfter} -> ${b.coldAfter} (${fewer(b.coldAfter, a.coldAfter)})`,
            `${a.awakeAfter.toFixed(1)} -> ${b.awakeAfter.toFixed(1)} (${percentChange(b.awakeAfter, a.awakeAfter)})`,
            `${a.cold} -> ${b.cold} (${fewer(b.cold, a.cold)})`,
            `${a.awake.toFixed(1)} -> ${b.awake.toFixed(1)} (${percentChange(b.awake, a.awake)})`,
          ];
        }),
      ),
    ),
  );
  progress(`done in ${((performance.now() - startedMs) / 1000).toFixed(1)} s`);
}

main();
