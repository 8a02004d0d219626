import { describe, expect, it } from "vitest";
import type { ActivityQuery, ManagedWorkload } from "../../api/managedworkload.ts";
import { SLOT_MS, slotOf } from "../../forecast/index.ts";
import { defaultPromQLConfig } from "../../rightsizing/promql.ts";
import { deploymentPodName } from "../../rightsizing/testing.ts";
import { ForecastBook } from "./forecasting.ts";
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
    expect(queries.cpu).toContain('pod=~"web-[4-9bcdf]{6,10}-[bcdfghjklmnpqrstvwxz2456789]{5}"');
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
  const values = (answers: HistoryAnswers, count = 4, startupMs = 0) =>
    historyPoints(answers, { cpuThresholdCores: 0.05, startupMs }, from, from + count).map((p) => p.value);

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
      what: "with replica counts, CPU in a step asked to run no pods (pods still stopping) is not activity",
      answers: {
        ...none,
        cpu: [
          {
            metric: {},
            points: [
              [at(0), 0.01],
              [at(1), 0.4],
            ] as const,
          },
        ],
        replicas: [
          {
            metric: {},
            points: [
              [at(0, 0), 2],
              [at(1, 0), 0],
              [at(1, 5), 0],
            ] as const,
          },
        ],
      },
      want: [0, 0, null, null],
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

  it.each([
    {
      what: "a wake's start-up CPU (within the pre-wake lead after it) makes its slot a gap, not activity",
      cpu: [[1, 5, 0.3] as const],
      startupMs: 10 * 60_000,
      want: [0, null, null, null],
    },
    {
      what: "CPU after the start-up counts as ever",
      cpu: [[1, 5, 0.3] as const, [1, 15, 0.2] as const, [2, 5, 0.2] as const],
      startupMs: 10 * 60_000,
      want: [0, 1, 1, null],
    },
    {
      what: "idle CPU after the start-up, in the same slot, makes it idle",
      cpu: [[1, 5, 0.3] as const, [1, 14, 0.01] as const],
      startupMs: 5 * 60_000,
      want: [0, 0, null, null],
    },
    {
      what: "without a lead, start-up CPU counts",
      cpu: [[1, 5, 0.3] as const],
      startupMs: 0,
      want: [0, 1, null, null],
    },
  ])("$what", ({ cpu, startupMs, want }) => {
    // At 0 replicas in the step from 00:10, woken before the step from 00:15 (replicas read at the steps' starts).
    const steps: [slot: number, minute: number, replicas: number][] = [
      [0, 10, 0],
      [1, 0, 2],
      [1, 5, 2],
      [1, 10, 2],
      [2, 0, 2],
      [3, 0, 2],
    ];
    const answers = {
      ...none,
      cpu: [{ metric: {}, points: cpu.map(([slot, minute, cores]) => [at(slot, minute), cores] as const) }],
      replicas: [{ metric: {}, points: steps.map(([slot, minute, n]) => [at(slot, minute), n] as const) }],
    };
    expect(values(answers, 4, startupMs)).toEqual(want);
  });

  it("does not take hours of traffic for start-up where the replica counts skip a stretch", () => {
    // At 0 replicas at slot 0's start, then no count until slot 3's: busy all along from slot 1.
    const answers = {
      ...none,
      cpu: series([1, 0.3], [2, 0.3], [3, 0.3]),
      replicas: replicasAt([0, 0], [3, 2]),
    };
    expect(values(answers, 4, 10 * 60_000)).toEqual([0, 1, 1, 1]);
  });

  it("numbers the slots from the first one asked for", () => {
    expect(
      historyPoints(
        { cpu: [], replicas: [], activity: [] },
        { cpuThresholdCores: 0.05, startupMs: 0 },
        from,
        from + 2,
      ).map((p) => p.slot),
    ).toEqual([from, from + 1]);
  });
});

describe("a forecast started from a history of its own pre-wakes", () => {
  const minute = 60_000;
  const day = 24 * 60 * minute;
  const step = 5 * minute;
  const now = Date.parse("2026-11-24T08:00:00Z");
  const paused: ManagedWorkload = {
    ...mw("Deployment", "web"),
    spec: { targetRef: { kind: "Deployment", name: "web" } },
    status: { phase: "Paused" },
  };

  /** The next pre-wake after 14 days of history in which the workload was pre-woken at 09:50 for 10:00-12:00. */
  function nextPrewakeAfter(startupCores: number): string | undefined {
    const cpu: [number, number][] = [];
    const replicas: [number, number][] = [];
    for (let t = now - 14 * day + step; t <= now; t += step) {
      const minuteOfDay = ((t - step) % day) / minute;
      const awake = minuteOfDay >= 9 * 60 + 50 && minuteOfDay < 12 * 60 + 15;
      replicas.push([t - step, awake ? 3 : 0]);
      if (!awake) continue;
      const traffic = minuteOfDay >= 10 * 60 && minuteOfDay < 12 * 60 ? 1 : 0;
      // Start-up (caches, JIT) in the first step after the pre-wake.
      cpu.push([t, traffic + (minuteOfDay === 9 * 60 + 50 ? startupCores : 0)]);
    }
    const answers = {
      cpu: [{ metric: {}, points: cpu }],
      replicas: [{ metric: {}, points: replicas }],
      activity: [],
    };
    const points = historyPoints(
      answers,
      { cpuThresholdCores: 0.05, startupMs: 10 * minute },
      slotOf(now - 14 * day),
      slotOf(now),
    );
    const book = new ForecastBook({}, { history: true });
    book.look("k", paused, now, 30 * minute);
    book.learnHistory("k", paused, points);
    return book.look("k", paused, now + 30_000, 30 * minute).prediction?.nextPrewake;
  }

  it("pre-wakes when it was pre-woken, whether or not the pods' start-up showed as CPU", () => {
    expect(nextPrewakeAfter(0)).toBe("2026-11-24T09:50:00.000Z");
    expect(nextPrewakeAfter(0.09)).toBe("2026-11-24T09:50:00.000Z");
  });
});
