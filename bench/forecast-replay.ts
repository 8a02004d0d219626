// Replay benchmark for the forecast engine: `npx node bench/forecast-replay.ts`
// For each trace: cold starts, awake hours and pauses under three policies, forecast accuracy
// (MASE vs seasonal-naive), then the engine's speed.

import { type ForecastConfig, forecastConfig } from "../forecast/index.ts";
import { percentChange, table } from "./format.ts";
import { evaluateAccuracy } from "./sim/accuracy.ts";
import { gridOf, type Policy, type PolicyResult, replayPolicy } from "./sim/replay.ts";
import { measureSpeed } from "./sim/speed.ts";
import { loadFlightsTrace } from "./traces/load-flights.ts";
import { generateTrace, SYNTHETIC_PROFILES } from "./traces/synthetic.ts";
import type { Trace } from "./traces/trace.ts";

const MINUTE_MS = 60_000;

const POLICIES: readonly Policy[] = [
  { name: "(a) fixed 30 min idle timeout", idleWindowMs: 30 * MINUTE_MS, useForecast: false },
  { name: "(b) idle clock 15 min", idleWindowMs: 15 * MINUTE_MS, useForecast: false },
  { name: "(c) idle clock 15 min + forecast", idleWindowMs: 15 * MINUTE_MS, useForecast: true },
];

/** Sensitivity rows: policy (c) with other settings (not part of the verdict). */
const SENSITIVITY: readonly { label: string; overrides: Partial<ForecastConfig> }[] = [
  { label: "activityThreshold 0.5", overrides: { activityThreshold: 0.5 } },
  { label: "activityThreshold 2", overrides: { activityThreshold: 2 } },
  { label: "suspendAfterMissedSlots 2", overrides: { suspendAfterMissedSlots: 2 } },
];

const write = (text: string) => process.stdout.write(`${text}\n`);

function policyRows(results: readonly PolicyResult[]): string[][] {
  const baseline = results[0] as PolicyResult;
  return results.map((r) => [
    r.policy,
    String(r.coldStarts),
    percentChange(r.coldStarts, baseline.coldStarts),
    r.awakeHours.toFixed(1),
    percentChange(r.awakeHours, baseline.awakeHours),
    String(r.pauses),
    String(r.prewakes),
  ]);
}

function verdict(results: readonly PolicyResult[]): string {
  const [fixed, , forecast] = results;
  if (!fixed || !forecast) return "";
  const fewer = fixed.coldStarts === 0 ? 0 : 1 - forecast.coldStarts / fixed.coldStarts;
  const met = fewer >= 0.5 && forecast.awakeHours <= fixed.awakeHours;
  return (
    `target (>= 50% fewer cold starts than (a) at no more awake hours): ${met ? "MET" : "NOT MET"} ` +
    `(${(fewer * 100).toFixed(0)}% fewer cold starts, awake ${percentChange(forecast.awakeHours, fixed.awakeHours)})`
  );
}

function reportTrace(trace: Trace) {
  const config = forecastConfig();
  const days = (trace.endMs - trace.startMs) / 86_400_000;
  write(`\n## ${trace.name}: ${trace.description}`);
  write(`${days} days, ${trace.requestsMs.length} requests, ${trace.telemetryGaps.length} telemetry gaps\n`);
  const results = POLICIES.map((policy) => replayPolicy(trace, policy, config));
  const forecastPolicy = POLICIES[2] as Policy;
  const sensitivity = SENSITIVITY.map(({ label, overrides }) => ({
    ...replayPolicy(trace, forecastPolicy, forecastConfig(overrides)),
    policy: `    (c) with ${label}`,
  }));
  write(
    table(
      ["policy", "cold starts", "vs (a)", "awake h", "vs (a)", "pauses", "pre-wakes"],
      policyRows([...results, ...sensitivity]),
    ),
  );
  write(verdict(results));
  const accuracy = evaluateAccuracy(gridOf(trace), config);
  write("");
  write(
    table(
      ["forecast (15 min slots)", "MASE vs snaive", "MAE model", "MAE snaive", "slots"],
      [
        ["Holt-Winters one-step", accuracy.oneStep, "1 slot"],
        ["Holt-Winters 24 h ahead", accuracy.dayAhead, "96 slots"],
      ].map(([label, a]) => {
        const h = a as typeof accuracy.oneStep;
        return [
          label as string,
          h.mase.toFixed(3),
          h.modelMae.toFixed(3),
          h.naiveMae.toFixed(3),
          String(h.points),
        ];
      }),
    ),
  );
}

function reportSpeed(trace: Trace) {
  const config = forecastConfig();
  const speed = measureSpeed(gridOf(trace), config, 10_000);
  const p = speed.fitAndForecastMs;
  write("\n## speed (this machine, single thread)");
  write(
    table(
      ["measure", "value"],
      [
        [
          `fit + 24 h forecast, 14 days history (${speed.repetitions} runs)`,
          `p50 ${p.p50.toFixed(1)} ms, p90 ${p.p90.toFixed(1)} ms, p99 ${p.p99.toFixed(1)} ms, max ${p.max.toFixed(1)} ms`,
        ],
        ["observe one slot, daily refit amortised", `${(speed.observeAmortisedMs * 1000).toFixed(0)} us`],
        ["encode state for status", `${(speed.encodeMs * 1000).toFixed(0)} us, ${speed.encodedBytes} bytes`],
        [
          `CPU per hour for ${speed.workloads} workloads (4 slots/h + hourly save)`,
          `${speed.cpuSecondsPerHour.toFixed(1)} s (${((speed.cpuSecondsPerHour / 3600) * 100).toFixed(2)}% of one core)`,
        ],
      ],
    ),
  );
}

function main() {
  write("# Napwake forecast replay");
  write("library forecaster (@bsull/augurs): not installed here, column omitted");
  const defaults = forecastConfig();
  write(
    `forecast defaults: activityThreshold ${defaults.activityThreshold}/slot, pre-wake lead ` +
      `${defaults.prewakeLeadMs / MINUTE_MS} min, activate at confidence ${defaults.activateAt}`,
  );
  const traces = SYNTHETIC_PROFILES.map(generateTrace);
  for (const trace of traces) reportTrace(trace);
  const flights = loadFlightsTrace();
  write(`\n(${flights.note})`);
  if (flights.trace) reportTrace(flights.trace);
  const office = traces[0];
  if (office) reportSpeed(office);
}

main();
