import { describe, expect, it } from "vitest";
import type { BatchTarget, PromQLConfig, QueryScope, UsageMetric } from "./promql.ts";
import {
  defaultBatchLimits,
  defaultPromQLConfig,
  planBatches,
  promDuration,
  rateWindowMs,
  splitRange,
  usageQuery,
} from "./promql.ts";
import { deploymentPodName } from "./testing.ts";

const MINUTE = 60_000;
const one: QueryScope = { namespaces: ["shop"], workloads: [] };
const two: QueryScope = { namespaces: ["shop", "search"], workloads: ["api", "web"] };
const sel = 'container!="",container!="POD"';

const multiCluster: PromQLConfig = {
  ...defaultPromQLConfig,
  metrics: {
    ...defaultPromQLConfig.metrics,
    cpuUsage: "cpu_seconds",
    oom: { kind: "oom-events", metric: "ooms" },
  },
  labels: { namespace: "exported_namespace", pod: "pod_name", container: "container_name" },
  cluster: { label: "cluster", value: "eu-1" },
  cadvisorMatchers: ['job="kubelet"'],
  kubeStateMatchers: ['job="kube-state-metrics"'],
};

describe("usageQuery", () => {
  it.each<[string, UsageMetric, QueryScope, PromQLConfig, string]>([
    [
      "CPU: the rate per container over a step and half a scrape",
      "cpu",
      one,
      defaultPromQLConfig,
      `max by (namespace, pod, container) (rate(container_cpu_usage_seconds_total{namespace="shop",${sel}}[5m15s]))`,
    ],
    [
      "memory: the highest working set of each step",
      "memory",
      one,
      defaultPromQLConfig,
      `max by (namespace, pod, container) (max_over_time(container_memory_working_set_bytes{namespace="shop",${sel}}[5m]))`,
    ],
    [
      "restarts: the counter's growth over exactly one step, of containers and of init containers (native sidecars)",
      "restarts",
      one,
      defaultPromQLConfig,
      "max by (namespace, pod, container) (" +
        `(kube_pod_container_status_restarts_total{namespace="shop",${sel}} - kube_pod_container_status_restarts_total{namespace="shop",${sel}} offset 5m > 0)` +
        " or " +
        `(kube_pod_init_container_status_restarts_total{namespace="shop",${sel}} - kube_pod_init_container_status_restarts_total{namespace="shop",${sel}} offset 5m > 0))`,
    ],
    [
      "OOM kills from kube-state-metrics: a restart whose last termination was OOMKilled, of containers and of init containers",
      "oom",
      one,
      defaultPromQLConfig,
      "max by (namespace, pod, container) (((" +
        `kube_pod_container_status_restarts_total{namespace="shop",${sel}} - kube_pod_container_status_restarts_total{namespace="shop",${sel}} offset 5m > 0` +
        ") and on (namespace, pod, container) " +
        `(kube_pod_container_status_last_terminated_reason{namespace="shop",${sel},reason="OOMKilled"} == 1))` +
        " or ((" +
        `kube_pod_init_container_status_restarts_total{namespace="shop",${sel}} - kube_pod_init_container_status_restarts_total{namespace="shop",${sel}} offset 5m > 0` +
        ") and on (namespace, pod, container) " +
        `(kube_pod_init_container_status_last_terminated_reason{namespace="shop",${sel},reason="OOMKilled"} == 1)))`,
    ],
    [
      "a batch of namespaces and workloads is one regex each",
      "memory",
      two,
      defaultPromQLConfig,
      `max by (namespace, pod, container) (max_over_time(container_memory_working_set_bytes{namespace=~"shop|search",pod=~"(?:api-|web-).+",${sel}}[5m]))`,
    ],
    [
      "configured metric and label names, cluster label and extra matchers",
      "cpu",
      one,
      multiCluster,
      'max by (exported_namespace, pod_name, container_name) (rate(cpu_seconds{exported_namespace="shop",container_name!="",container_name!="POD",cluster="eu-1",job="kubelet"}[5m15s]))',
    ],
    [
      "OOM kills from cAdvisor's counter",
      "oom",
      one,
      multiCluster,
      'max by (exported_namespace, pod_name, container_name) (ooms{exported_namespace="shop",container_name!="",container_name!="POD",cluster="eu-1",job="kubelet"} - ooms{exported_namespace="shop",container_name!="",container_name!="POD",cluster="eu-1",job="kubelet"} offset 5m > 0)',
    ],
    [
      "kube-state-metrics matchers go on the restarts counter",
      "restarts",
      { namespaces: ["shop"], workloads: ["api"] },
      multiCluster,
      'max by (exported_namespace, pod_name, container_name) ((kube_pod_container_status_restarts_total{exported_namespace="shop",pod_name=~"(?:api-).+",container_name!="",container_name!="POD",cluster="eu-1",job="kube-state-metrics"} - kube_pod_container_status_restarts_total{exported_namespace="shop",pod_name=~"(?:api-).+",container_name!="",container_name!="POD",cluster="eu-1",job="kube-state-metrics"} offset 5m > 0) or (kube_pod_init_container_status_restarts_total{exported_namespace="shop",pod_name=~"(?:api-).+",container_name!="",container_name!="POD",cluster="eu-1",job="kube-state-metrics"} - kube_pod_init_container_status_restarts_total{exported_namespace="shop",pod_name=~"(?:api-).+",container_name!="",container_name!="POD",cluster="eu-1",job="kube-state-metrics"} offset 5m > 0))',
    ],
  ])("%s", (_, metric, scope, config, expected) => {
    expect(usageQuery(metric, scope, 5 * MINUTE, config)).toBe(expected);
  });

  it("selects the pods of a Deployment whose long name the API server cut in its pods' names", () => {
    const name = `checkout-${"x".repeat(60)}`;
    const pod = deploymentPodName(name);
    const query = usageQuery(
      "memory",
      { namespaces: ["shop"], workloads: [name] },
      5 * MINUTE,
      defaultPromQLConfig,
    );
    const regex = query.match(/pod=~"([^"]+)"/)?.[1] ?? "";
    expect(pod).toMatch(new RegExp(`^(?:${regex})$`));
  });

  it("escapes regex and string metacharacters in names", () => {
    const query = usageQuery("memory", { namespaces: ["a.b", 'c"d'], workloads: ["x+y"] }, 5 * MINUTE, {
      ...defaultPromQLConfig,
      cluster: { label: "cluster", value: 'q"uote' },
    });
    expect(query).toContain('namespace=~"a\\\\.b|c\\"d"');
    expect(query).toContain('pod=~"(?:x\\\\+y-).+"');
    expect(query).toContain('cluster="q\\"uote"');
  });
});

describe("promDuration and rateWindowMs", () => {
  it.each([
    [3_600_000, "1h"],
    [5 * MINUTE, "5m"],
    [90_000, "1m30s"],
    [315_000, "5m15s"],
    [1500, "1s500ms"],
  ])("%d ms is %s", (ms, text) => {
    expect(promDuration(ms)).toBe(text);
  });

  it.each([
    ["a 30 s scrape at a 5 m step", 5 * MINUTE, 30_000, 315_000],
    ["a 5 m scrape at a 5 m step: two samples", 5 * MINUTE, 5 * MINUTE, 450_000],
    ["a 1 m scrape at a 30 s step: at least one scrape", 30_000, MINUTE, 90_000],
  ])("%s", (_, step, scrape, expected) => {
    expect(rateWindowMs(step, { ...defaultPromQLConfig, scrapeIntervalMs: scrape })).toBe(expected);
  });
});

describe("splitRange", () => {
  const step = 5 * MINUTE;
  const day = 24 * 60 * MINUTE;

  it.each<[string, number, number, number, number]>([
    ["14 days of 10 series fit one window", 10, 14 * day, 1, 4033],
    ["14 days of 1,000 series split by the point bound", 1000, 14 * day, 17, 250],
    ["one series over 60 days is split at 11,000 steps", 1, 60 * day, 2, 11_000],
    ["more series than points still makes progress one step at a time", 500_000, 3 * step, 4, 1],
  ])("%s", (_, series, span, windows, firstSteps) => {
    const result = splitRange({ start: 0, end: span, stepMs: step }, series);
    expect(result).toHaveLength(windows);
    const [first] = result;
    expect(first && (first.end - first.start) / step + 1).toBe(firstSteps);
  });

  it("covers every step exactly once, in order", () => {
    const windows = splitRange({ start: 0, end: 100 * step, stepMs: step }, 1, {
      maxPoints: 7,
      maxSteps: 100,
    });
    const times = windows.flatMap((w) =>
      Array.from({ length: (w.end - w.start) / step + 1 }, (_, i) => w.start + i * step),
    );
    expect(times).toEqual(Array.from({ length: 101 }, (_, i) => i * step));
    expect(windows.every((w) => (w.end - w.start) / step + 1 <= 7)).toBe(true);
  });

  it("is empty when there is nothing new", () => {
    expect(splitRange({ start: 2 * step, end: step, stepMs: step }, 1)).toEqual([]);
  });
});

describe("planBatches", () => {
  const t = (namespace: string, workload: string, series = 2): BatchTarget => ({
    namespace,
    workload,
    series,
  });

  it("keeps a namespace together and packs namespaces up to the series bound", () => {
    const batches = planBatches([t("b", "x"), t("a", "y"), t("a", "x"), t("c", "z")], {
      maxSeries: 4,
      maxSelectorChars: 100,
    });
    expect(batches.map((b) => b.scope)).toEqual([
      { namespaces: ["a"], workloads: ["x", "y"] },
      { namespaces: ["b", "c"], workloads: ["x", "z"] },
    ]);
    expect(batches.map((b) => b.series)).toEqual([4, 4]);
  });

  it("gives a target larger than the bound a batch of its own", () => {
    const batches = planBatches([t("a", "big", 50), t("a", "small", 1)], {
      maxSeries: 10,
      maxSelectorChars: 100,
    });
    expect(batches.map((b) => b.targets.map((x) => x.workload))).toEqual([["big"], ["small"]]);
  });

  it("bounds the selector length", () => {
    const targets = Array.from({ length: 10 }, (_, i) => t(`namespace-${i}`, "w", 1));
    const batches = planBatches(targets, { maxSeries: 1000, maxSelectorChars: 40 });
    expect(batches.length).toBeGreaterThan(1);
    expect(batches.flatMap((b) => b.targets)).toHaveLength(10);
  });

  it("bounds the selectors as written: escaped names and pod name prefixes", () => {
    const targets = Array.from({ length: 300 }, (_, i) =>
      t("n", `workload.${String(i).padStart(6, "0")}`, 1),
    );
    const batches = planBatches(targets);
    expect(batches.flatMap((b) => b.targets)).toHaveLength(300);
    for (const { scope } of batches) {
      const query = usageQuery("memory", scope, 5 * MINUTE, defaultPromQLConfig);
      // The regexes as Prometheus reads them (PromQL's string escapes undone), without the pod one's wrapper.
      const regexes = [...query.matchAll(/(?:namespace|pod)=~?"([^"]*)"/g)].map((m) =>
        (m[1] ?? "").replace(/\\\\/g, "\\").replace(/^\(\?:(.*)\)\.\+$/, "$1"),
      );
      const chars = regexes.reduce((sum, text) => sum + text.length, 0);
      expect(chars).toBeLessThanOrEqual(defaultBatchLimits.maxSelectorChars);
    }
  });

  it("makes four batches for 1,000 containers by default", () => {
    const targets = Array.from({ length: 500 }, (_, i) => t(`ns-${Math.floor(i / 25)}`, `w-${i % 25}`, 2));
    expect(planBatches(targets)).toHaveLength(4);
  });
});
