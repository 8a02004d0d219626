/**
 * The optional rightsizing configuration file (`--rightsizing-config FILE`, YAML or JSON), parsed once at
 * start: which metrics and labels the Prometheus-compatible source has, extra matchers, how far back and at
 * what step usage is read, and any recommender parameter (rightsizing/config.ts documents each default).
 * Durations may be written as `24h`, byte sizes and CPU as quantities (`100Mi`, `25m`). Pure: text in,
 * settings out, or a ConfigError that names the key and the fix.
 *
 *   promql:
 *     metrics: { cpuUsage: container_cpu_usage_seconds_total, memoryWorkingSet: ..., restarts: ...,
 *                initRestarts: ..., deploymentReplicas: kube_deployment_spec_replicas, statefulSetReplicas: ... }
 *     labels: { namespace: namespace, pod: pod, container: container }
 *     cadvisorMatchers: ['job="kubelet"']
 *     kubeStateMatchers: []
 *     scrapeInterval: 30s
 *   lookback: 336h
 *   step: 5m
 *   recommender: { cpuTargetPercentile: 0.9, safetyMarginFraction: 0.15, minMemoryBytes: 64Mi }
 */
import { loadYaml } from "@kubernetes/client-node";
import { parseDuration } from "../api/managedworkload.ts";
import { parseQuantity } from "../kube/quantity.ts";
import { defaultConfig, type RecommenderConfig } from "../rightsizing/index.ts";
import type { PromQLConfig } from "../rightsizing/promql.ts";
import { defaultUsageSourceConfig, type UsageSourceConfig } from "../rightsizing/usage-source.ts";
import { ConfigError } from "./operator-config.ts";

export type RightsizingFileSettings = { usage: UsageSourceConfig; recommender: RecommenderConfig };

type Raw = Record<string, unknown>;

const minStepMs = 10_000;

export function parseRightsizingConfig(text: string, file: string): RightsizingFileSettings {
  let raw: unknown;
  try {
    raw = text.trim() === "" ? {} : loadYaml(text);
  } catch (err) {
    throw new ConfigError(`${file} is not valid YAML or JSON: ${(err as Error).message}`);
  }
  const top = object(raw ?? {}, file);
  only(top, ["promql", "lookback", "step", "recommender"], file);
  const usage: UsageSourceConfig = {
    ...defaultUsageSourceConfig,
    promql: promql(top.promql, `${file}: promql`),
    ...(top.lookback !== undefined
      ? { lookbackMs: positiveDuration(top.lookback, `${file}: lookback`) }
      : {}),
    ...(top.step !== undefined ? { stepMs: positiveDuration(top.step, `${file}: step`) } : {}),
  };
  // Finer than Prometheus scrapes reads nothing new, and a lookback in millions of steps is millions of points.
  if (usage.stepMs < minStepMs) {
    throw new ConfigError(`${file}: step must be at least 10s, got ${quoted(top.step)}`);
  }
  if (usage.lookbackMs < usage.stepMs) {
    const lookback =
      top.lookback === undefined ? `the default ${usage.lookbackMs / 3_600_000}h` : quoted(top.lookback);
    throw new ConfigError(
      `${file}: lookback must be at least one step (${quoted(top.step)}), got ${lookback}`,
    );
  }
  return { usage, recommender: recommender(top.recommender, `${file}: recommender`) };
}

function promql(value: unknown, where: string): PromQLConfig {
  const base = defaultUsageSourceConfig.promql;
  if (value === undefined) return base;
  const p = object(value, where);
  only(p, ["metrics", "labels", "cadvisorMatchers", "kubeStateMatchers", "scrapeInterval"], where);
  const metrics = p.metrics === undefined ? {} : object(p.metrics, `${where}.metrics`);
  only(
    metrics,
    ["cpuUsage", "memoryWorkingSet", "restarts", "initRestarts", "deploymentReplicas", "statefulSetReplicas"],
    `${where}.metrics`,
  );
  const labels = p.labels === undefined ? {} : object(p.labels, `${where}.labels`);
  only(labels, ["namespace", "pod", "container"], `${where}.labels`);
  const names = (o: Raw, what: string) =>
    Object.fromEntries(Object.entries(o).map(([k, v]) => [k, metricName(v, `${what}.${k}`)]));
  return {
    ...base,
    metrics: { ...base.metrics, ...names(metrics, `${where}.metrics`) },
    labels: { ...base.labels, ...names(labels, `${where}.labels`) },
    cadvisorMatchers: matchers(p.cadvisorMatchers, `${where}.cadvisorMatchers`) ?? base.cadvisorMatchers,
    kubeStateMatchers: matchers(p.kubeStateMatchers, `${where}.kubeStateMatchers`) ?? base.kubeStateMatchers,
    ...(p.scrapeInterval !== undefined
      ? { scrapeIntervalMs: duration(p.scrapeInterval, `${where}.scrapeInterval`) }
      : {}),
  };
}

function recommender(value: unknown, where: string): RecommenderConfig {
  if (value === undefined) return defaultConfig;
  const r = object(value, where);
  only(r, Object.keys(defaultConfig), where);
  const overrides = Object.fromEntries(
    Object.entries(r).map(([key, v]) => [key, recommenderValue(key, v, `${where}.${key}`)]),
  );
  const config = { ...defaultConfig, ...overrides };
  checkOrder(config, where);
  return config;
}

/** Parameters that only make sense in order: each pair must be `[smaller, larger]` (equal allowed). */
const ordered: readonly (readonly [keyof RecommenderConfig, keyof RecommenderConfig])[] = [
  ["cpuLowerPercentile", "cpuTargetPercentile"],
  ["cpuTargetPercentile", "cpuUpperPercentile"],
  ["memoryLowerPercentile", "memoryTargetPercentile"],
  ["memoryTargetPercentile", "memoryUpperPercentile"],
  ["spikeRecurrenceCount", "spikeRecurrenceWindows"],
  ["trendMinWindows", "trendWindows"],
  ["minHistoryMs", "fullConfidenceMs"],
  ["cpuFirstBucketCores", "cpuMaxCores"],
  ["memoryFirstBucketBytes", "memoryMaxBytes"],
  ["minCpuCores", "cpuMaxCores"],
  ["minMemoryBytes", "memoryMaxBytes"],
];

/** A parameter's value as the file would write it: durations in hours, the rest as numbers. */
function shown(key: string, value: number): string {
  return key.endsWith("Ms") ? `${value / 3_600_000}h` : String(value);
}

function checkOrder(config: RecommenderConfig, where: string): void {
  for (const [smaller, larger] of ordered) {
    if (config[smaller] > config[larger]) {
      throw new ConfigError(
        `${where}.${smaller} (${shown(smaller, config[smaller])}) must be at most ${larger} ` +
          `(${shown(larger, config[larger])}); ` +
          "a key left out keeps its default",
      );
    }
  }
}

/** The value of a recommender parameter, checked against the range its name implies. */
function recommenderValue(key: string, value: unknown, where: string): number {
  const n = recommenderNumber(key, value, where);
  const [ok, range] = key.endsWith("Percentile")
    ? [n > 0 && n <= 1, "a fraction above 0 and at most 1 (0.9 for the 90th percentile)"]
    : key.endsWith("Fraction")
      ? [n >= 0 && n < 1, "a fraction from 0 up to 1 (0.15 for 15%)"]
      : key.endsWith("Windows") || key.endsWith("Count")
        ? [Number.isInteger(n) && n >= 1, "a whole number of at least 1"]
        : key === "trendMinFit"
          ? [n <= 1, "an R² from 0 to 1 (0.8: a trend is believed when it explains 80% of the growth)"]
          : key === "bucketGrowthRatio"
            ? [n > 1, "above 1 (1.05 for 5% wider buckets)"]
            : key.endsWith("Ratio")
              ? [n >= 1, "at least 1"]
              : key.endsWith("Ms") ||
                  key.endsWith("MaxBytes") ||
                  key.endsWith("MaxCores") ||
                  key.endsWith("FirstBucketBytes") ||
                  key.endsWith("FirstBucketCores")
                ? [n > 0, "above 0"]
                : [true, ""];
  if (!ok) throw new ConfigError(`${where} must be ${range}, got ${quoted(value)}`);
  return n;
}

/** By the key's unit suffix: durations for `Ms`, quantities for `Bytes` and `Cores`, plain numbers otherwise. */
function recommenderNumber(key: string, value: unknown, where: string): number {
  if (typeof value === "number" && Number.isFinite(value) && value >= 0) return value;
  // A retention may be for ever (YAML's .inf), as the OOM floor's is by default.
  if (value === Number.POSITIVE_INFINITY && key.endsWith("RetentionMs")) return value;
  if (typeof value === "string" && key.endsWith("Ms")) return duration(value, where);
  if (typeof value === "string" && (key.endsWith("Bytes") || key.endsWith("Cores"))) {
    let parsed: number;
    try {
      parsed = parseQuantity(value);
    } catch (err) {
      throw new ConfigError(`${where}: ${(err as Error).message}`);
    }
    if (parsed >= 0) return parsed;
  }
  const unit = key.endsWith("Ms")
    ? "a duration such as 24h"
    : key.endsWith("Bytes")
      ? "a size of at least 0 such as 100Mi"
      : key.endsWith("Cores")
        ? "a CPU quantity of at least 0 such as 25m"
        : "a number of at least 0";
  const forever = key.endsWith("RetentionMs") ? " (or .inf to keep it for ever)" : "";
  throw new ConfigError(`${where} must be ${unit}${forever}, got ${quoted(value)}`);
}

/** A value as the config file wrote it: JSON would show .inf and .nan as null. */
function quoted(value: unknown): string {
  return typeof value === "number" && !Number.isFinite(value) ? String(value) : JSON.stringify(value);
}

function object(value: unknown, where: string): Raw {
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ConfigError(`${where} must be a mapping of keys to values`);
  }
  return value as Raw;
}

function only(o: Raw, allowed: readonly string[], where: string): void {
  const unknown = Object.keys(o).filter((k) => !allowed.includes(k));
  if (unknown.length > 0) {
    throw new ConfigError(`${where}: unknown key ${unknown.join(", ")}; the keys are ${allowed.join(", ")}`);
  }
}

function duration(value: unknown, where: string): number {
  try {
    return parseDuration(String(value));
  } catch (err) {
    throw new ConfigError(`${where}: ${(err as Error).message}`);
  }
}

function positiveDuration(value: unknown, where: string): number {
  const ms = duration(value, where);
  if (!(ms > 0)) throw new ConfigError(`${where} must be longer than 0, got ${JSON.stringify(value)}`);
  return ms;
}

function metricName(value: unknown, where: string): string {
  if (typeof value !== "string" || !/^[a-zA-Z_:][a-zA-Z0-9_:]*$/.test(value)) {
    throw new ConfigError(`${where} must be a Prometheus metric or label name, got ${JSON.stringify(value)}`);
  }
  return value;
}

function matchers(value: unknown, where: string): string[] | undefined {
  if (value === undefined) return undefined;
  if (
    !Array.isArray(value) ||
    value.some((m) => typeof m !== "string" || !/^[a-zA-Z_]\w*\s*(=|!=|=~|!~)\s*".*"$/.test(m))
  ) {
    throw new ConfigError(`${where} must be a list of label matchers such as 'job="kubelet"'`);
  }
  return value as string[];
}
