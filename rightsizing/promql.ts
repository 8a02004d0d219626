// PromQL for container usage history, batched: one query per metric per batch of namespaces and workloads
// (never one per container), and range windows split so that no response holds more than a bounded number
// of points (series x steps). Metric names, label names and an optional cluster label are configurable, so
// one Prometheus (or VictoriaMetrics, Thanos, Mimir) can serve many clusters. Pure.
import { escapeRegex, podNamePrefix } from "./pod-names.ts";

export type UsageMetric = "cpu" | "memory" | "oom" | "restarts";
export const usageMetrics: readonly UsageMetric[] = ["cpu", "memory", "oom", "restarts"];

/** Where OOM kills come from. */
export type OomSource =
  /**
   * kube-state-metrics: a restart while the last termination reason is OOMKilled; `initMetric` is the same for
   * init containers, as native sidecars (restartPolicy: Always) are reported.
   */
  | { readonly kind: "last-terminated-reason"; readonly metric: string; readonly initMetric: string }
  /** cAdvisor's counter of OOM events. */
  | { readonly kind: "oom-events"; readonly metric: string };

export type PromQLConfig = {
  readonly metrics: {
    /** Counter of CPU seconds per container (cAdvisor). */
    readonly cpuUsage: string;
    /** Gauge of working-set bytes per container (cAdvisor). */
    readonly memoryWorkingSet: string;
    /** Counter of container restarts (kube-state-metrics). */
    readonly restarts: string;
    /** The same for init containers: native sidecars' restarts are reported only there (kube-state-metrics). */
    readonly initRestarts: string;
    /** Gauges of the replicas a Deployment and a StatefulSet ask for (kube-state-metrics). */
    readonly deploymentReplicas: string;
    readonly statefulSetReplicas: string;
    readonly oom: OomSource;
  };
  readonly labels: { readonly namespace: string; readonly pod: string; readonly container: string };
  /** When one Prometheus serves several clusters: only series with this label value are read. */
  readonly cluster?: { readonly label: string; readonly value: string };
  /** Extra raw matchers for the cAdvisor metrics, e.g. `job="kubelet"` or `metrics_path="/metrics/cadvisor"`. */
  readonly cadvisorMatchers: readonly string[];
  /** Extra raw matchers for the kube-state-metrics metrics. */
  readonly kubeStateMatchers: readonly string[];
  /** How often the usage metrics are scraped: rate() needs two samples in its window. */
  readonly scrapeIntervalMs: number;
};

export const defaultPromQLConfig: PromQLConfig = {
  metrics: {
    cpuUsage: "container_cpu_usage_seconds_total",
    memoryWorkingSet: "container_memory_working_set_bytes",
    restarts: "kube_pod_container_status_restarts_total",
    initRestarts: "kube_pod_init_container_status_restarts_total",
    deploymentReplicas: "kube_deployment_spec_replicas",
    statefulSetReplicas: "kube_statefulset_replicas",
    oom: {
      kind: "last-terminated-reason",
      metric: "kube_pod_container_status_last_terminated_reason",
      initMetric: "kube_pod_init_container_status_last_terminated_reason",
    },
  },
  labels: { namespace: "namespace", pod: "pod", container: "container" },
  cadvisorMatchers: [],
  kubeStateMatchers: [],
  scrapeIntervalMs: 30_000,
};

/** Which series a query reads: namespaces, and optionally pods by the name of the workload that owns them. */
export type QueryScope = {
  readonly namespaces: readonly string[];
  /**
   * Workload names; a pod belongs to one when its name starts as the workload's pods' do (see `podNamePrefix`).
   * Empty: every pod.
   */
  readonly workloads: readonly string[];
  /** A regex the pod name must match in full, in place of the one `workloads` gives. */
  readonly podRegex?: string;
};

const escapeString = (s: string): string => s.replace(/\\/g, "\\\\").replace(/"/g, '\\"');

/** A duration as PromQL writes it: `5m`, `5m15s`, `1h`, `1500ms`. */
export function promDuration(ms: number): string {
  const units: [string, number][] = [
    ["h", 3_600_000],
    ["m", 60_000],
    ["s", 1000],
    ["ms", 1],
  ];
  let rest = Math.max(0, Math.round(ms));
  let text = "";
  for (const [unit, size] of units) {
    const whole = Math.floor(rest / size);
    if (whole > 0) text += `${whole}${unit}`;
    rest -= whole * size;
  }
  return text || "0s";
}

/** rate() window: one step plus half a scrape, so it holds two samples even when the step equals the scrape. */
export function rateWindowMs(stepMs: number, config: PromQLConfig): number {
  return Math.max(stepMs, config.scrapeIntervalMs) + Math.ceil(config.scrapeIntervalMs / 2);
}

function selector(scope: QueryScope, config: PromQLConfig, extra: readonly string[]): string {
  const { namespace, pod, container } = config.labels;
  const matchers: string[] = [];
  const [only] = scope.namespaces;
  matchers.push(
    scope.namespaces.length === 1 && only !== undefined
      ? `${namespace}="${escapeString(only)}"`
      : `${namespace}=~"${escapeString(scope.namespaces.map(escapeRegex).join("|"))}"`,
  );
  if (scope.podRegex !== undefined) {
    matchers.push(`${pod}=~"${escapeString(scope.podRegex)}"`);
  } else if (scope.workloads.length > 0) {
    const prefixes = [...new Set(scope.workloads.map(podNamePrefix))].sort().map(escapeRegex).join("|");
    matchers.push(`${pod}=~"${escapeString(`(?:${prefixes}).+`)}"`);
  }
  matchers.push(`${container}!=""`, `${container}!="POD"`);
  if (config.cluster) matchers.push(`${config.cluster.label}="${escapeString(config.cluster.value)}"`);
  matchers.push(...extra);
  return `{${matchers.join(",")}}`;
}

/**
 * The replicas a workload asked for over time, as kube-state-metrics exports them (labelled `deployment` or
 * `statefulset`): the highest, should two exporters report it.
 */
export function replicasQuery(
  kind: "Deployment" | "StatefulSet",
  namespace: string,
  name: string,
  config: PromQLConfig,
): string {
  const [metric, label] =
    kind === "Deployment"
      ? [config.metrics.deploymentReplicas, "deployment"]
      : [config.metrics.statefulSetReplicas, "statefulset"];
  const matchers = [
    `${config.labels.namespace}="${escapeString(namespace)}"`,
    `${label}="${escapeString(name)}"`,
  ];
  if (config.cluster) matchers.push(`${config.cluster.label}="${escapeString(config.cluster.value)}"`);
  matchers.push(...config.kubeStateMatchers);
  return `max(${metric}{${matchers.join(",")}})`;
}

const byContainer = (config: PromQLConfig): string =>
  `max by (${config.labels.namespace}, ${config.labels.pod}, ${config.labels.container})`;

/** Increase of a counter over exactly one step, only where it grew: each event lands in one step. */
const stepIncrease = (series: string, stepMs: number): string =>
  `${series} - ${series} offset ${promDuration(stepMs)} > 0`;

/** The PromQL for one metric of one batch, evaluated at each step of a range query. */
export function usageQuery(
  metric: UsageMetric,
  scope: QueryScope,
  stepMs: number,
  config: PromQLConfig,
): string {
  const by = byContainer(config);
  const usage = selector(scope, config, config.cadvisorMatchers);
  const state = selector(scope, config, config.kubeStateMatchers);
  switch (metric) {
    case "cpu":
      return `${by} (rate(${config.metrics.cpuUsage}${usage}[${promDuration(rateWindowMs(stepMs, config))}]))`;
    case "memory":
      // The highest sample of each step, so a spike between two steps is not missed.
      return `${by} (max_over_time(${config.metrics.memoryWorkingSet}${usage}[${promDuration(stepMs)}]))`;
    case "restarts": {
      // Plain init containers' restarts come too; only the containers a workload reads are kept.
      const { restarts, initRestarts } = config.metrics;
      const grew = (counter: string) => `(${stepIncrease(`${counter}${state}`, stepMs)})`;
      return `${by} (${grew(restarts)} or ${grew(initRestarts)})`;
    }
    case "oom":
      return oomQuery(scope, stepMs, config);
  }
}

function oomQuery(scope: QueryScope, stepMs: number, config: PromQLConfig): string {
  const by = byContainer(config);
  const { oom } = config.metrics;
  if (oom.kind === "oom-events") {
    return `${by} (${stepIncrease(`${oom.metric}${selector(scope, config, config.cadvisorMatchers)}`, stepMs)})`;
  }
  const state = selector(scope, config, config.kubeStateMatchers);
  const { namespace, pod, container } = config.labels;
  const killed = (restarts: string, reasons: string) =>
    `((${stepIncrease(`${restarts}${state}`, stepMs)}) ` +
    `and on (${namespace}, ${pod}, ${container}) (${reasons}${state.slice(0, -1)},reason="OOMKilled"} == 1))`;
  return `${by} (${killed(config.metrics.restarts, oom.metric)} or ${killed(config.metrics.initRestarts, oom.initMetric)})`;
}

export type TimeWindow = { readonly start: number; readonly end: number };

export type RangeLimits = {
  /** Most points (series x steps) one response may hold. */
  readonly maxPoints: number;
  /** Most steps per series per query (Prometheus refuses more than 11,000). */
  readonly maxSteps: number;
};

export const defaultRangeLimits: RangeLimits = { maxPoints: 250_000, maxSteps: 11_000 };

export const alignDown = (t: number, stepMs: number): number => Math.floor(t / stepMs) * stepMs;
export const alignUp = (t: number, stepMs: number): number => Math.ceil(t / stepMs) * stepMs;

/**
 * Splits evaluation times start..end (both on the step grid, inclusive) into consecutive windows so that
 * `series` series at each step stay within the limits. Empty when start is after end.
 */
export function splitRange(
  range: TimeWindow & { readonly stepMs: number },
  series: number,
  limits: RangeLimits = defaultRangeLimits,
): TimeWindow[] {
  const { start, end, stepMs } = range;
  if (start > end) return [];
  const stepsPerWindow = Math.max(
    1,
    Math.min(limits.maxSteps, Math.floor(limits.maxPoints / Math.max(1, series))),
  );
  const windows: TimeWindow[] = [];
  for (let from = start; from <= end; from += stepsPerWindow * stepMs) {
    windows.push({ start: from, end: Math.min(end, from + (stepsPerWindow - 1) * stepMs) });
  }
  return windows;
}

export type BatchTarget = {
  readonly namespace: string;
  readonly workload: string;
  /** Series one metric is expected to return for this target (containers x pods), for sizing. */
  readonly series: number;
};

export type BatchLimits = {
  /** Most expected series per query. */
  readonly maxSeries: number;
  /** Longest selector (namespaces and workload names) per query, so URLs and request bodies stay small. */
  readonly maxSelectorChars: number;
};

// 250 series keep a batch's histories (the unit a caller folds and lets go) to a few tens of MiB.
export const defaultBatchLimits: BatchLimits = { maxSeries: 250, maxSelectorChars: 4_000 };

export type QueryBatch<T extends BatchTarget> = {
  readonly scope: QueryScope;
  readonly targets: readonly T[];
  readonly series: number;
};

/** Packs targets (sorted by namespace, so a namespace stays together) into batches within the limits. */
export function planBatches<T extends BatchTarget>(
  targets: readonly T[],
  limits: BatchLimits = defaultBatchLimits,
): QueryBatch<T>[] {
  const sorted = [...targets].sort(
    (a, b) => a.namespace.localeCompare(b.namespace) || a.workload.localeCompare(b.workload),
  );
  const batches: QueryBatch<T>[] = [];
  let current: T[] = [];
  let series = 0;
  const names = { namespaces: new Set<string>(), prefixes: new Set<string>(), chars: 0 };
  const flush = () => {
    if (current.length > 0) batches.push(batchOf(current));
    current = [];
    series = 0;
    names.namespaces.clear();
    names.prefixes.clear();
    names.chars = 0;
  };
  // Characters a target adds to the selectors' alternations, as they are written (escaped, a `|` each).
  const charsAdded = (namespace: string, prefix: string): number =>
    (names.namespaces.has(namespace) ? 0 : escapeRegex(namespace).length + 1) +
    (names.prefixes.has(prefix) ? 0 : prefix.length + 1);
  for (const target of sorted) {
    const prefix = escapeRegex(podNamePrefix(target.workload));
    const full =
      series + target.series > limits.maxSeries ||
      names.chars + charsAdded(target.namespace, prefix) > limits.maxSelectorChars;
    if (current.length > 0 && full) flush();
    current.push(target);
    series += target.series;
    names.chars += charsAdded(target.namespace, prefix);
    names.namespaces.add(target.namespace);
    names.prefixes.add(prefix);
  }
  flush();
  return batches;
}

function batchOf<T extends BatchTarget>(targets: readonly T[]): QueryBatch<T> {
  return {
    scope: {
      namespaces: [...new Set(targets.map((t) => t.namespace))],
      workloads: [...new Set(targets.map((t) => t.workload))],
    },
    targets,
    series: targets.reduce((sum, t) => sum + t.series, 0),
  };
}
