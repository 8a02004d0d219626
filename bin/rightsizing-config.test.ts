import { describe, expect, it } from "vitest";
import { defaultConfig } from "../rightsizing/index.ts";
import { defaultUsageSourceConfig } from "../rightsizing/usage-source.ts";
import { ConfigError } from "./operator-config.ts";
import { parseRightsizingConfig } from "./rightsizing-config.ts";

const parse = (text: string) => parseRightsizingConfig(text, "rightsizing.yaml");

describe("the rightsizing configuration file", () => {
  it("keeps every default when empty", () => {
    expect(parse("")).toEqual({ usage: defaultUsageSourceConfig, recommender: defaultConfig });
  });

  it("reads metric and label names, matchers, lookback, step and recommender parameters in people's units", () => {
    const c = parse(`
promql:
  metrics: { cpuUsage: node_container_cpu_seconds, memoryWorkingSet: container_mem_ws, initRestarts: init_restarts }
  labels: { namespace: kube_namespace, pod: pod_name }
  cadvisorMatchers: ['job="kubelet"', 'metrics_path="/metrics/cadvisor"']
  scrapeInterval: 1m
lookback: 168h
step: 10m
recommender:
  cpuTargetPercentile: 0.95
  memoryHalfLifeMs: 48h
  minMemoryBytes: 64Mi
  minCpuCores: 10m
  oomFloorRetentionMs: .inf
`);
    expect(c.usage.promql.metrics).toMatchObject({
      cpuUsage: "node_container_cpu_seconds",
      memoryWorkingSet: "container_mem_ws",
      restarts: defaultUsageSourceConfig.promql.metrics.restarts,
      initRestarts: "init_restarts",
    });
    expect(c.usage.promql.labels).toEqual({
      namespace: "kube_namespace",
      pod: "pod_name",
      container: "container",
    });
    expect(c.usage.promql.cadvisorMatchers).toEqual(['job="kubelet"', 'metrics_path="/metrics/cadvisor"']);
    expect(c.usage.promql.scrapeIntervalMs).toBe(60_000);
    expect(c.usage).toMatchObject({ lookbackMs: 168 * 3_600_000, stepMs: 600_000 });
    expect(c.recommender).toMatchObject({
      cpuTargetPercentile: 0.95,
      memoryHalfLifeMs: 48 * 3_600_000,
      minMemoryBytes: 64 * 2 ** 20,
      minCpuCores: 0.01,
      oomFloorRetentionMs: Number.POSITIVE_INFINITY,
      safetyMarginFraction: defaultConfig.safetyMarginFraction,
    });
  });

  it("reads the kube-state-metrics replica gauges a new forecast's history tells a pause by", () => {
    const c = parse(
      "promql: { metrics: { deploymentReplicas: ksm_deploy_replicas, statefulSetReplicas: ksm_sts } }",
    );
    expect(c.usage.promql.metrics).toMatchObject({
      deploymentReplicas: "ksm_deploy_replicas",
      statefulSetReplicas: "ksm_sts",
      cpuUsage: defaultUsageSourceConfig.promql.metrics.cpuUsage,
    });
  });

  it.each([
    { text: "promql: [1, 2]", message: /rightsizing.yaml: promql must be a mapping/ },
    {
      text: "lookbak: 24h",
      message: /unknown key lookbak; the keys are promql, lookback, step, recommender/,
    },
    { text: "step: 5 minutes", message: /rightsizing.yaml: step: "5 minutes" is not a duration/ },
    {
      text: "recommender: { cpuTargetPercentil: 0.9 }",
      message: /recommender: unknown key cpuTargetPercentil/,
    },
    {
      text: "recommender: { minMemoryBytes: lots }",
      message: /recommender.minMemoryBytes: "lots" is not a Kubernetes quantity/,
    },
    {
      text: "recommender: { cpuTargetPercentile: high }",
      message: /cpuTargetPercentile must be a number of at least 0/,
    },
    {
      text: "promql: { metrics: { cpuUsage: 'rate(x[5m])' } }",
      message: /metrics.cpuUsage must be a Prometheus metric or label name/,
    },
    {
      text: "promql: { cadvisorMatchers: ['job'] }",
      message: /cadvisorMatchers must be a list of label matchers such as 'job="kubelet"'/,
    },
    { text: "promql: {", message: /rightsizing.yaml is not valid YAML or JSON/ },
    { text: "step: 0s", message: /step must be longer than 0/ },
    {
      text: "recommender: { cpuTargetPercentile: 90 }",
      message: /cpuTargetPercentile must be a fraction above 0 and at most 1 \(0.9 for the 90th percentile\)/,
    },
    {
      text: "recommender: { safetyMarginFraction: 15 }",
      message: /safetyMarginFraction must be a fraction from 0 up to 1/,
    },
    { text: "recommender: { bucketGrowthRatio: 1 }", message: /bucketGrowthRatio must be above 1/ },
    {
      text: "recommender: { limitPeakWindows: 0 }",
      message: /limitPeakWindows must be a whole number of at least 1/,
    },
    {
      text: "recommender: { spikeRecurrenceCount: 2.5 }",
      message: /spikeRecurrenceCount must be a whole number of at least 1/,
    },
    { text: "recommender: { oomBumpRatio: 0.5 }", message: /oomBumpRatio must be at least 1/ },
    { text: "recommender: { cpuHalfLifeMs: 0s }", message: /cpuHalfLifeMs must be above 0/ },
    {
      text: "recommender: { minMemoryBytes: -64Mi }",
      message: /minMemoryBytes must be a size of at least 0 such as 100Mi, got "-64Mi"/,
    },
    {
      text: "recommender: { minCpuCores: -10m }",
      message: /minCpuCores must be a CPU quantity of at least 0 such as 25m, got "-10m"/,
    },
    {
      text: "recommender: { memoryHalfLifeMs: .inf }",
      message: /memoryHalfLifeMs must be a duration such as 24h, got Infinity/,
    },
    {
      text: "recommender: { oomBumpRatio: .nan }",
      message: /oomBumpRatio must be a number of at least 0, got NaN/,
    },
    { text: "step: 1ms", message: /rightsizing.yaml: step must be at least 10s, got "1ms"/ },
    { text: "lookback: 1m\nstep: 5m", message: /lookback must be at least one step \("5m"\), got "1m"/ },
    { text: "step: 400h", message: /lookback must be at least one step \("400h"\), got the default 336h/ },
    {
      text: "recommender: { cpuTargetPercentile: 0.99 }",
      message:
        /cpuTargetPercentile \(0.99\) must be at most cpuUpperPercentile \(0.95\); a key left out keeps its default/,
    },
    {
      text: "recommender: { memoryLowerPercentile: 0.95 }",
      message: /memoryLowerPercentile \(0.95\) must be at most memoryTargetPercentile \(0.9\)/,
    },
    {
      text: "recommender: { spikeRecurrenceCount: 9 }",
      message: /spikeRecurrenceCount \(9\) must be at most spikeRecurrenceWindows \(7\)/,
    },
    {
      text: "recommender: { minHistoryMs: 336h }",
      message: /minHistoryMs \(336h\) must be at most fullConfidenceMs \(168h\)/,
    },
    {
      text: "recommender: { cpuMaxCores: 0.005 }",
      message: /cpuFirstBucketCores \(0.01\) must be at most cpuMaxCores \(0.005\)/,
    },
    {
      text: "recommender: { trendWindows: 2 }",
      message: /trendMinWindows \(3\) must be at most trendWindows \(2\)/,
    },
    // Written as a percent, no fit could reach it: memory trends would be off with no word.
    {
      text: "recommender: { trendMinFit: 80 }",
      message: /recommender.trendMinFit must be an R² from 0 to 1 \(0.8: .*\), got 80/,
    },
  ])("refuses $text with a message naming the key and the fix", ({ text, message }) => {
    expect(() => parse(text)).toThrow(ConfigError);
    expect(() => parse(text)).toThrow(message);
  });
});
