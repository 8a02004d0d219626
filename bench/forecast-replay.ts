// Replay benchmark for the forecast engine: `npx node bench/forecast-replay.ts`
// For each trace: cold starts, awake hours and pauses under fixed policies, forecast accuracy (MASE vs
// seasonal-naive, and vs a library forecaster), then the engine's speed. Every parameter is the same
// for every trace; nothing is tuned per trace.

import {
  DEFAULT_FORECAST_CONFIG,
  type ForecastConfig,
  forecastConfig,
  type GridPoint,
} from "../forecast/index.ts";
import { fewer, percentChange, relativeChange, table } from "./format.ts";
import { type Accuracy, evaluateAccuracy } from "./sim/accuracy.ts";
import { type Forecaster, loadAugursMstl } from "./sim/augurs.ts";
import { generatorChances, timeOfDayChances } from "./sim/chances.ts";
import { meetsTarget, replayDraws } from "./sim/draws.ts";
import {
  bestWithinAwakeBudget,
  FRONTIER_IDLE_MINUTES,
  FRONTIER_PROBABILITIES,
  type FrontierPoint,
  onGridEdge,
  replayFrontier,
} from "./sim/frontier.ts";
import { knownRatesAtBudget } from "./sim/ideal.ts";
import {
  DEFAULT_PREWAKE_MS,
  FIXED,
  FORECAST,
  HISTORY_DAYS,
  IDLE_MS,
  POLICY_DRAWS,
  UNTRUSTED_IDLE_MS,
} from "./sim/policies.ts";
import {
  type ChanceOf,
  gridOf,
  type Policy,
  type PolicyResult,
  replayPolicy,
  type Signal,
} from "./sim/replay.ts";
import { measureSpeed } from "./sim/speed.ts";
import { extendedBack, splitHistory } from "./sim/warm-start.ts";
import { compareWeeks, unsettledWeeks } from "./sim/weeks.ts";
import { loadFlightsTrace } from "./traces/load-flights.ts";
import {
  generateTrace,
  generateTraceWithRates,
  reseeded,
  SYNTHETIC_PROFILES,
  sessionFollowUpHazard,
  type TraceProfile,
} from "./traces/synthetic.ts";
import type { Trace } from "./traces/trace.ts";

const MINUTE_MS = 60_000;
/** Reseeded draws of a synthetic profile behind its true chances of activity (for the reference row). */
const CHANCE_RUNS = 200;
/** Draws held out from that choice, after them, that the verdict from history is scored on. */
const HELD_OUT_DRAWS = 24;

const POLICIES: readonly Policy[] = [
  FIXED,
  { name: "(b) idle clock 15 min", idleWindowMs: IDLE_MS, useForecast: false },
  FORECAST,
  { ...FORECAST, name: "(c0) = (c) with its advice ignored", ignoreAdvice: true },
];

/** Policy (c) with one thing changed (not part of the verdict). */
const SENSITIVITY: readonly { label: string; policy?: Partial<Policy>; config?: Partial<ForecastConfig> }[] =
  [
    { label: "no awake budget (chance fixed at 35%)", policy: { awakeBudget: false } },
    {
      label: "idle 15 min while learning too (no budget: equal windows)",
      policy: { untrustedIdleWindowMs: IDLE_MS },
    },
    { label: "idle 10 min", policy: { idleWindowMs: 10 * MINUTE_MS } },
    {
      label: "pre-wake lead 10 min (spec.forecast.prewake's default)",
      config: { prewakeLeadMs: 10 * MINUTE_MS },
    },
    { label: "engine fed request counts", policy: { signal: "requests" } },
  ];

const write = (text: string) => process.stdout.write(`${text}\n`);

function policyRows(results: readonly PolicyResult[]): string[][] {
  const baseline = results[0] as PolicyResult;
  return results.map((r) => [
    r.policy,
    String(r.coldStarts),
    percentChange(r.coldStarts, baseline.coldStarts),
    String(r.coldWakes),
    percentChange(r.coldWakes, baseline.coldWakes),
    r.awakeHours.toFixed(1),
    percentChange(r.awakeHours, baseline.awakeHours),
    String(r.pauses),
    String(r.prewakes),
  ]);
}

function verdict(fixed: PolicyResult, forecast: PolicyResult): { met: boolean; text: string } {
  const met = meetsTarget(forecast, fixed);
  return {
    met,
    text:
      `target (>= 50% fewer cold starts than (a) at no more awake hours): ${met ? "MET" : "NOT MET"} ` +
      `(${fewer(forecast.coldStarts, fixed.coldStarts)} cold starts, awake ` +
      `${percentChange(forecast.awakeHours, fixed.awakeHours)}; counting only the wakes a request started, ` +
      `${fewer(forecast.coldWakes, fixed.coldWakes)})`,
  };
}

/** "53.4% fewer" (one decimal: a verdict at 50% must not round into the target). */
function accuracyRows(signal: Signal, trace: Trace, library: Forecaster | null): string[][] {
  const report = evaluateAccuracy(gridOf(trace, signal), forecastConfig(), library);
  const row = (label: string, a: Accuracy, horizon: string) => [
    `${label}, ${signal}`,
    horizon,
    a.mase.toFixed(3),
    a.relativeMae.toFixed(3),
    a.mseRatio.toFixed(3),
    a.mae.toFixed(3),
    a.naiveMae.toFixed(3),
    String(a.points),
  ];
  return [
    row("Holt-Winters (ours)", report.engineOneStep, "1 slot"),
    row("Holt-Winters (ours)", report.engineDayAhead, `24 h x ${report.engineDayAhead.origins}`),
    ...(report.libraryDayAhead
      ? [row("augurs MSTL + AutoETS", report.libraryDayAhead, `24 h x ${report.libraryDayAhead.origins}`)]
      : []),
  ];
}

function reportTrace(
  trace: Trace,
  chances: ChanceOf,
  chancesNote: string,
  library: Forecaster | null,
  drawn?: { profile: TraceProfile; firstRequests: Float64Array },
) {
  const config = forecastConfig();
  const days = (trace.endMs - trace.startMs) / 86_400_000;
  write(`\n## ${trace.name}: ${trace.description}`);
  write(`${days} days, ${trace.requestsMs.length} requests, ${trace.telemetryGaps.length} telemetry gaps\n`);
  const results = POLICIES.map((policy) => replayPolicy(trace, policy, config));
  const sensitivity = SENSITIVITY.map(({ label, policy, config: overrides }) => ({
    ...replayPolicy(trace, { ...FORECAST, ...policy }, forecastConfig(overrides)),
    policy: `    (c) with ${label}`,
  }));
  const reference = {
    ...replayPolicy(trace, { ...FORECAST, oracle: chances }, config),
    policy: "    ref: (c)'s rule on the true chances",
  };
  write(
    table(
      [
        "policy",
        "cold starts",
        "vs (a)",
        "request wakes",
        "vs (a)",
        "awake h",
        "vs (a)",
        "pauses",
        "pre-wakes",
      ],
      policyRows([...results, ...sensitivity, reference]),
    ),
  );
  const [fixed, , forecast] = results;
  if (fixed && forecast) write(verdict(fixed, forecast).text);
  if (fixed && forecast) reportWeeks(fixed, forecast, drawn?.profile.changeAtDay ?? null);
  write(
    `(ref: not a policy, it knows the odds ahead: ${chancesNote}; same rule, windows and trust as (c), chance fixed)`,
  );
  if (fixed) reportFrontier(trace, fixed, chances);
  if (drawn) reportDraws(drawn.profile);
  reportWarmStart(drawn ? drawsWithHistory(drawn.profile) : [splitHistory(trace, HISTORY_DAYS)]);
  if (fixed && drawn) reportKnownRates(trace, fixed, drawn.profile, drawn.firstRequests);
  write("");
  write(
    table(
      [
        "forecaster, series",
        "horizon x origins",
        "MASE",
        "rel. MAE",
        "MSE ratio",
        "MAE",
        "MAE snaive",
        "slots",
      ],
      (["occupancy", "requests"] as const).flatMap((signal) => accuracyRows(signal, trace, library)),
    ),
  );
}

/** Cold starts of (a) and (c) week by week, and over the weeks where (c) had neither to learn nor to follow a change. */
function reportWeeks(fixed: PolicyResult, forecast: PolicyResult, changeAtDay: number | null) {
  const excluded = unsettledWeeks(changeAtDay);
  const { steady } = compareWeeks(fixed.coldStartsByWeek, forecast.coldStartsByWeek, excluded);
  const weeks = (r: PolicyResult) => r.coldStartsByWeek.join(" ");
  write(
    `cold starts per week, (a): ${weeks(fixed)}; (c): ${weeks(forecast)}. Leaving out week ` +
      `${excluded.map((w) => w + 1).join(" and ")} (learning${excluded.length > 1 ? ", the change of pattern" : ""}): ` +
      `${steady.policy} against ${steady.baseline}, ${percentChange(steady.policy, steady.baseline)} (not the target's measure)`,
  );
}

function describePoint(point: FrontierPoint | null): string {
  if (!point) return "none within the awake hours of (a)";
  const pct = (change: number) => {
    const rounded = Math.round(change * 1000) / 10;
    return `${rounded > 0 ? "+" : ""}${rounded === 0 ? 0 : rounded}%`;
  };
  return (
    `${pct(point.coldStartChange)} cold starts, awake ${pct(point.awakeChange)} ` +
    `(chance ${point.activityProbability}, idle ${point.idleWindowMinutes} min` +
    `${onGridEdge(point) ? ", on the grid's edge" : ""})`
  );
}

/** Whether any setting of (c)'s rule meets the target, with the engine's forecast and with the true chances. */
function reportFrontier(trace: Trace, fixed: PolicyResult, chances: ChanceOf) {
  const frontier = replayFrontier(trace, FORECAST, fixed, chances);
  const meets = (points: readonly FrontierPoint[]) =>
    points.filter((p) => p.coldStartChange <= -0.5 && p.awakeChange <= 0).length;
  write(
    `\nfrontier of (c)'s rule, ${frontier.engine.length} settings (chance ${FRONTIER_PROBABILITIES.join(", ")} x ` +
      `idle ${FRONTIER_IDLE_MINUTES.join(", ")} min), best within the awake hours of (a):`,
  );
  write(
    table(
      ["forecast", "best point", "settings meeting the target"],
      [
        ["engine", describePoint(bestWithinAwakeBudget(frontier.engine)), String(meets(frontier.engine))],
        [
          "ref: true chances",
          describePoint(bestWithinAwakeBudget(frontier.reference)),
          String(meets(frontier.reference)),
        ],
      ],
    ),
  );
}

/** (b) and (c) against (a) over several draws of the same generator: how much the verdict owes to one draw. */
function reportDraws(profile: TraceProfile) {
  const [fixed, ...others] = POLICIES;
  if (!fixed) return;
  const summaries = replayDraws(profile, POLICY_DRAWS, fixed, others.slice(0, 2), forecastConfig());
  const pct = (change: number) => `${change > 0 ? "+" : ""}${(change * 100).toFixed(0)}%`;
  write(`\nover ${POLICY_DRAWS} draws of the same generator (this trace and ${POLICY_DRAWS - 1} reseeded):`);
  write(
    table(
      [
        "policy",
        "cold starts vs (a)",
        "per draw",
        "request wakes vs (a)",
        "awake h vs (a)",
        "draws meeting the target",
      ],
      summaries.map((s) => [
        s.policy,
        pct(s.coldStartChange),
        `${pct(s.coldStartRange[0])} .. ${pct(s.coldStartRange[1])}`,
        pct(s.coldWakeChange),
        pct(s.awakeChange),
        `${s.drawsMeetingTarget} of ${s.draws}`,
      ]),
    ),
  );
}

/** Each held-out draw of `profile`, drawn with two weeks more before it, split where the original starts. */
function drawsWithHistory(profile: TraceProfile): ReturnType<typeof splitHistory>[] {
  return Array.from({ length: HELD_OUT_DRAWS }, (_, i) =>
    splitHistory(
      generateTrace(extendedBack(reseeded(profile, POLICY_DRAWS + i), HISTORY_DAYS)),
      HISTORY_DAYS,
    ),
  );
}

/**
 * (c) started from the days before the trace, as the operator starts a new engine from Prometheus, against (a)
 * and a fresh (c) on the same days.
 */
function reportWarmStart(splits: readonly ReturnType<typeof splitHistory>[]) {
  const config = forecastConfig();
  const [fixed] = POLICIES;
  if (!fixed) return;
  const run = (policyOf: (history: readonly GridPoint[]) => Policy, runConfig = config) =>
    splits.map(({ history, rest }) => replayPolicy(rest, policyOf(history), runConfig));
  const sum = (results: readonly PolicyResult[]) => ({
    cold: results.reduce((total, r) => total + r.coldStarts, 0),
    wakes: results.reduce((total, r) => total + r.coldWakes, 0),
    awake: results.reduce((total, r) => total + r.awakeHours, 0),
  });
  const baseline = run(() => fixed);
  const warmRuns = run((history) => ({ ...FORECAST, history }));
  const defaultLead = forecastConfig({ prewakeLeadMs: DEFAULT_PREWAKE_MS });
  const [a, fresh, warm, warmDefaultLead] = [
    baseline,
    run(() => FORECAST),
    warmRuns,
    run((history) => ({ ...FORECAST, history }), defaultLead),
  ].map(sum) as [
    ReturnType<typeof sum>,
    ReturnType<typeof sum>,
    ReturnType<typeof sum>,
    ReturnType<typeof sum>,
  ];
  const against = (t: ReturnType<typeof sum>) =>
    `${t.cold} cold starts (${fewer(t.cold, a.cold)}; request wakes ${fewer(t.wakes, a.wakes)}), awake ` +
    `${percentChange(t.awake, a.awake)}`;
  const meets = (t: ReturnType<typeof sum>) =>
    relativeChange(t.cold, a.cold) <= -0.5 && t.awake <= a.awake ? "MET" : "NOT MET";
  const meeting = warmRuns.filter((r, i) => meetsTarget(r, baseline[i] as PolicyResult)).length;
  const what =
    splits.length === 1
      ? `the trace after its first ${HISTORY_DAYS} days`
      : `${splits.length} draws held out from the ${POLICY_DRAWS} the defaults were chosen on, each drawn ` +
        `${HISTORY_DAYS} days earlier`;
  write(
    `\nstarted from ${HISTORY_DAYS} days of history, as the operator starts a new engine from Prometheus ` +
      `(${what}; the same days for each policy): (a) ${a.cold} cold starts; (c) from scratch ${against(fresh)}; ` +
      `(c) from history ${against(warm)}: target ${meets(warm)}` +
      (splits.length > 1 ? ` (on ${meeting} of ${splits.length} draws)` : "") +
      `; from history with spec.forecast.prewake at its default, ${DEFAULT_PREWAKE_MS / MINUTE_MS} min: ` +
      `${against(warmDefaultLead)}: target ${meets(warmDefaultLead)}`,
  );
}

/** How far a policy deciding from chances could go within the awake hours of (a), were its chances true. */
function reportKnownRates(
  trace: Trace,
  fixed: PolicyResult,
  profile: TraceProfile,
  firstRequests: Float64Array,
) {
  const ideal = knownRatesAtBudget(
    trace,
    { firstRequests, followUp: sessionFollowUpHazard(profile) },
    fixed.awakeHours,
  );
  const change = ideal ? `${(relativeChange(ideal.coldStarts, fixed.coldStarts) * 100).toFixed(1)}%` : "n/a";
  write(
    "\nref: awake in each minute worth it under the rates this trace was drawn from (its sessions' and jobs' " +
      "first requests, and the chance a session goes on), priced to the awake hours of (a): " +
      `${ideal ? ideal.coldStarts.toFixed(0) : "n/a"} cold starts, ${change} vs (a) (no policy knows these rates)`,
  );
}

function reportSpeed(trace: Trace, library: Forecaster | null) {
  const config = forecastConfig();
  const speed = measureSpeed(gridOf(trace, "occupancy"), config, {
    workloads: 10_000,
    hours: 2,
    runs: 50,
    library,
  });
  const ms = (p: { p50: number; p90: number; max: number; runs: number }) =>
    `p50 ${p.p50.toFixed(2)} ms, p90 ${p.p90.toFixed(2)} ms, max ${p.max.toFixed(2)} ms (${p.runs} runs)`;
  const fleet = speed.fleet;
  write(`\n## speed (${trace.name}, this machine, one thread)`);
  write(
    table(
      ["measure", "value"],
      [
        ["refit + 24 h forecast, 14 days of history (ours)", ms(speed.fitAndForecastMs)],
        ...(speed.libraryFitAndForecastMs
          ? [["fit + 24 h forecast, 14 days of history (augurs MSTL)", ms(speed.libraryFitAndForecastMs)]]
          : []),
        ["encoded state", `${speed.encodedBytes} bytes`],
        [
          `CPU per hour, ${fleet.workloads} workloads learning (measured over ${fleet.hours} simulated h)`,
          `${fleet.cpuSecondsPerHour.toFixed(1)} s (${((fleet.cpuSecondsPerHour / 3600) * 100).toFixed(2)}% of one core)`,
        ],
        [
          "  of which work per hour",
          `${fleet.observes / fleet.hours} slot updates, ${fleet.refits / fleet.hours} refits, ` +
            `${fleet.encodes / fleet.hours} state encodes`,
        ],
      ],
    ),
  );
}

async function main() {
  write("# Napwake forecast replay");
  const augurs = await loadAugursMstl();
  const library = augurs.ok ? augurs.mstl : null;
  write(
    augurs.ok
      ? `library forecaster: @bsull/augurs ${augurs.version}, MSTL (periods 96 and 672 slots) with an AutoETS trend`
      : `library forecaster: not run: ${augurs.reason}`,
  );
  const d = DEFAULT_FORECAST_CONFIG;
  write(
    `engine fed: whether any request came in each 15-min slot (0/1), as the operator records activity\n` +
      `forecast defaults: activity expected at a ${d.activityProbability * 100}% chance of any request in a slot ` +
      `to start with, steered by the awake budget within ${d.activityProbabilityBounds.join("..")} ` +
      `(${d.budgetGain} log-odds per slot of awake time beyond ${d.budgetShare * 100}% of what (a) would spend), ` +
      `pre-wake lead ${d.prewakeLeadMs / MINUTE_MS} min, advice suspended after a silence with < ` +
      `${d.missedLikelihood * 100}% chance, acted on from confidence ${d.activateAt}\n` +
      `policy (c): idle window ${IDLE_MS / MINUTE_MS} min once the forecast is trusted ` +
      `(${Math.round((IDLE_MS * d.quietIdleWindowShare) / MINUTE_MS)} min where it gives this slot and the next ` +
      `less than a ${Math.round(d.quietProbability * 100)}% chance of activity), ` +
      `${UNTRUSTED_IDLE_MS / MINUTE_MS} min (as (a)) while it is learning or in shadow; in a ManagedWorkload: ` +
      `spec.idle.window ${UNTRUSTED_IDLE_MS / MINUTE_MS}m, spec.forecast.idleWindow unset (half of it), ` +
      `spec.forecast.prewake ${d.prewakeLeadMs / MINUTE_MS}m (its default, ${DEFAULT_PREWAKE_MS / MINUTE_MS}m, ` +
      "leaves room for workloads slow to become ready; a wake here takes 30 s), " +
      "spec.forecast.awakeBudget IdleWindow (the default)\n" +
      "accuracy: MASE = each absolute error over seasonal-naive's (same slot a week before) mean absolute error in " +
      "sample, on the two weeks the forecast is made from; rel. MAE = MAE / MAE of seasonal-naive on the same " +
      "held-out slots; MSE ratio = the same with squared errors, the proper score on 0/1 occupancy (MAE there " +
      "rewards guessing 0 or 1 over a calibrated chance)\n" +
      "cold starts: requests that found the workload paused or still waking (each waits for the wake); request " +
      "wakes: the wakes those requests started (one per burst that found it paused)",
  );
  const traces = SYNTHETIC_PROFILES.map((profile) => ({ profile, ...generateTraceWithRates(profile) }));
  for (const { profile, trace, firstRequests } of traces) {
    const chances = generatorChances(profile, CHANCE_RUNS);
    const note = `chances from ${CHANCE_RUNS} reseeded draws of the same generator`;
    reportTrace(trace, chances, note, library, { profile, firstRequests });
  }
  const flights = loadFlightsTrace();
  write(`\n(${flights.note})`);
  if (flights.trace) {
    const note = "chances per time of day measured on the whole trace (it peeks ahead)";
    reportTrace(flights.trace, timeOfDayChances(flights.trace), note, library);
  }
  const office = traces[0];
  if (office) reportSpeed(office.trace, library);
}

await main();
