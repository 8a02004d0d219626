import { describe, expect, it } from "vitest";
import type { ActivityQuery, ManagedWorkload } from "../../api/managedworkload.ts";
import { SLOT_MS, slotOf } from "../../forecast/index.ts";
import { defaultPromQLConfig } from "../../rightsizing/promql.ts";
import { deploymentPodName } from "../../rightsizing/testing.ts";
import { type HistoryAnswers, historyPoints, historyQueries } from "./history.ts";

const from = slotOf(Date.parse("2026-11-23T00:00:00Z"));
const at = (slot: number, minute = 5) => (from + slot) * SLOT_MS + minute * 60_000;
const series = (...points: [slot: number, value: number][]) => [
  { metric: {}, points: points.map(([slot, value]) => [at(slot), value] as const) },
];
const busy: ActivityQuery = { name: "queue", query: "sum(queue_depth)", threshold: 10 };
const quietBelow: ActivityQuery = {
  name: "idle",
  query: "min(idle_ratio)",
  threshold: 0.5,
  activeWhen: "Below",
};

function mw(kind: "Deployment" | "StatefulSet", name: string): ManagedWorkload {
  return {
    apiVersion: "napwake.dev/v1alpha1",
    kind: "ManagedWorkload",
    metadata: { name: `${name}.${kind.toLowerCase()}`, namespace: "shop" },
    spec: { targetRef: { kind, name }, idle: { activityQueries: [busy] } },
  };
}

describe("the activity history queries", () => {
  it("sums the workload's pod CPU over the step, with the cluster's metric names and cluster label", () => {
    const promql = { ...defaultPromQLConfig, cluster: { label: "cluster", value: "eu-1" } };
    const queries = historyQueries(mw("Deployment", "web"), promql);
    expect(queries.cpu).toMatch(
      /^sum\(max by \(namespace, pod, container\) \(rate\(container_cpu_usage_seconds_total\{/,
    );
    expect(queries.cpu).toContain('namespace="shop"');
    expect(queries.cpu).toContain('pod=~"web-[4-9bcdf]{1,10}-[bcdfghjklmnpqrstvwxz2456789]{5}"');
    expect(queries.cpu).toContain('cluster="eu-1"');
    expect(queries.activity).toEqual([busy]);
    expect(queries.replicas).toBe(
      'max(kube_deployment_spec_replicas{namespace="shop",deployment="web",cluster="eu-1"})',
    );
  });

  it("counts the CPU of a Deployment whose long name the API server cut in its pods' names", () => {
    const name = `checkout-${"x".repeat(50)}`;
    const pod = deploymentPodName(name);
    const regex = historyQueries(mw("Deployment", name), defaultPromQLConfig).cpu.match(
      /pod=~"([^"]+)"/,
    )?.[1];
    expect(pod).toMatch(new RegExp(`^(?:${regex})$`));
  });

  it("reads a StatefulSet's replicas from its own gauge, with the cluster's extra kube-state-metrics matchers", () => {
    const promql = { ...defaultPromQLConfig, kubeStateMatchers: ['job="kube-state-metrics"'] };
    expect(historyQueries(mw("StatefulSet", "db"), promql).replicas).toBe(
      'max(kube_statefulset_replicas{namespace="shop",statefulset="db",job="kube-state-metrics"})',
    );
  });
});

describe("the slots an activity history makes", () => {
  const none: HistoryAnswers = { cpu: [], replicas: [], activity: [] };
  const values = (answers: HistoryAnswers, count = 4) =>
    historyPoints(answers, 0.05, from, from + count).map((p) => p.value);

  it.each([
    {
      what: "a slot with CPU at or above the threshold is active",
      answers: { ...none, cpu: series([0, 0.05]) },
      want: [1, null, null, null],
    },
    {
      what: "a slot watched below the threshold is idle",
      answers: { ...none, cpu: series([0, 0.01], [1, 0.2]) },
      want: [0, 1, null, null],
    },
    {
      what: "slots before the first CPU sample are unknown (retention, a workload made since)",
      answers: { ...none, cpu: series([2, 0.01]) },
      want: [null, null, 0, null],
    },
    {
      what: "after the first CPU sample, a slot without pods (scaled to zero) is idle",
      answers: { ...none, cpu: series([0, 0.2], [3, 0.2]) },
      want: [1, 0, 0, 1],
    },
    {
      what: "slots after the last CPU sample are unknown (not yet written)",
      answers: { ...none, cpu: series([0, 0.01], [1, 0.01]) },
      want: [0, 0, null, null],
    },
    { what: "nothing is known without any answer", answers: none, want: [null, null, null, null] },
    {
      what: "an activity query above its threshold is activity, and only its samples are known",
      answers: { ...none, activity: [{ query: busy, series: series([1, 11], [2, 10]) }] },
      want: [null, 1, 0, null],
    },
    {
      what: "a query active Below its threshold counts as the clock counts it",
      answers: { ...none, activity: [{ query: quietBelow, series: series([0, 0.2], [1, 0.9]) }] },
      want: [1, 0, null, null],
    },
    {
      what: "either source active makes the slot active",
      answers: {
        ...none,
        cpu: series([0, 0.01], [1, 0.01]),
        activity: [{ query: busy, series: series([1, 50]) }],
      },
      want: [0, 1, null, null],
    },
    {
      what: "a CPU rate belongs to the slot of the step it covers: one at a slot's start, to the slot before",
      answers: {
        ...none,
        cpu: [
          {
            metric: {},
            points: [
              [at(1, 0), 0.2],
              [at(1, 5), 0.01],
              [at(1, 10), 0.01],
              [at(2, 0), 0.01],
            ] as const,
          },
        ],
      },
      want: [1, 0, null, null],
    },
    {
      what: "a query with several series is read at each step from the first that has a value then",
      answers: {
        ...none,
        activity: [
          {
            query: busy,
            series: [
              { metric: { pod: "a" }, points: [[at(0), 50]] as const },
              {
                metric: { pod: "b" },
                points: [
                  [at(0), 0],
                  [at(1), 0],
                  [at(2), 50],
                ] as const,
              },
            ],
          },
        ],
      },
      want: [1, 0, 1, null],
    },
    {
      what: "with replica counts, a stretch at 0 replicas after the last CPU sample is idle",
      answers: { ...none, cpu: series([0, 0.2]), replicas: series([0, 2], [1, 0], [2, 0]) },
      want: [1, 0, 0, null],
    },
    {
      what: "with replica counts, a stretch with replicas and no CPU (not scraped, Prometheus down) is unknown",
      answers: { ...none, cpu: series([0, 0.2], [3, 0.2]), replicas: series([0, 2], [1, 2], [2, 0], [3, 2]) },
      want: [1, null, 0, 1],
    },
    {
      what: "with replica counts, a workload at 0 replicas before its first CPU sample is idle, not unknown",
      answers: { ...none, cpu: series([2, 0.2]), replicas: series([0, 0], [1, 0], [2, 1]) },
      want: [0, 0, 1, null],
    },
    {
      what: "with replica counts, a workload at 0 replicas all along, with no CPU, is idle",
      answers: { ...none, replicas: series([0, 0], [1, 0], [2, 0], [3, 0]) },
      want: [0, 0, 0, 0],
    },
    {
      what: "replica counts of a workload whose pods the CPU query never found are left out (only its queries tell)",
      answers: {
        ...none,
        replicas: series([0, 2], [1, 0], [2, 2], [3, 0]),
        activity: [{ query: busy, series: series([2, 11]) }],
      },
      want: [null, null, 1, null],
    },
    {
      what: "samples outside the range are left out",
      answers: { ...none, cpu: series([-1, 0.3], [4, 0.3]) },
      want: [0, 0, 0, 0],
    },
  ])("$what", ({ answers, want }) => {
    expect(values(answers)).toEqual(want);
  });

  // Replica counts as the reader asks for them, at the steps' starts.
  const replicasAt = (...points: [slot: number, value: number][]) => [
    { metric: {}, points: points.map(([slot, value]) => [at(slot, 0), value] as const) },
  ];

  it("before kube-state-metrics' first sample (installed since), CPU counts from its first sample as without it", () => {
    const answers = {
      ...none,
      cpu: series([0, 0.2], [4, 0.2]),
      replicas: replicasAt([3, 2], [4, 2], [5, 2]),
    };
    expect(values(answers, 6)).toEqual([1, 0, 0, null, 1, null]);
  });

  it("after kube-state-metrics' last sample (removed), CPU counts to its last sample as without it", () => {
    const answers = { ...none, cpu: series([0, 0.2], [4, 0.2]), replicas: replicasAt([0, 2], [1, 0]) };
    expect(values(answers, 6)).toEqual([1, 0, 0, 0, 1, null]);
  });

  it("numbers the slots from the first one asked for", () => {
    expect(
      historyPoints({ cpu: [], replicas: [], activity: [] }, 0.05, from, from + 2).map((p) => p.slot),
    ).toEqual([from, from + 1]);
  });
});
