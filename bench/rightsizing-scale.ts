// Scale benchmark: recommendations for 1,000 containers from 14 days of history in a real Prometheus.
// Run inside the cluster's network namespace:
//   test/cluster/netns-run.sh npx node bench/rightsizing-scale.ts [containers]
// Starts its own control plane (temporary state), loads the history with promtool (slow: progress is
// printed), then measures the operator's recommender run (queries, wall time, memory), the next run from what
// it learned, and, as the peer in the same run, the naive way: one query per metric per workload (as tools
// that list pods and query each do).

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { memoryUsage, resourceUsage } from "node:process";
import type { CoveredWorkload } from "../controllers/rightsizing/coverage.ts";
import { RecommenderMemory, runRecommender } from "../controllers/rightsizing/run.ts";
import { defaultConfig } from "../rightsizing/index.ts";
import type { ModeResolution } from "../rightsizing/modes.ts";
import type { PrometheusClient } from "../rightsizing/prometheus-client.ts";
import { prometheusClient } from "../rightsizing/prometheus-client.ts";
import { defaultPromQLConfig, usageQuery } from "../rightsizing/promql.ts";
import type { UsageTarget } from "../rightsizing/usage-source.ts";
import { defaultUsageSourceConfig } from "../rightsizing/usage-source.ts";
import { ensureBinaries } from "../test/cluster/binaries.ts";
import { startControlPlane } from "../test/cluster/control-plane.ts";
import { type ContainerSeries, containerUsageOpenMetrics } from "../test/cluster/history.ts";
import { table } from "./format.ts";

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;
const STEP = 5 * MINUTE;
const MIB = 2 ** 20;
const CONTAINERS = Number(process.argv[2] ?? 1000);
const NAMESPACES = 20;
const CONTAINERS_PER_POD = 2;
const LOAD_CHUNK = 250;

const audit = { mode: "audit", requested: "audit", source: "global-default" } as const;
const auditEverywhere: ModeResolution = {
  cpu: audit,
  memory: audit,
  strategy: "in-place",
  matchedPolicies: [],
};

const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);

/** Deterministic per-container shapes: a mix of steady and diurnal CPU at different levels. */
function seriesFor(index: number): ContainerSeries & { workload: string } {
  const workloadIndex = Math.floor(index / CONTAINERS_PER_POD);
  const namespace = `bench-${String(workloadIndex % NAMESPACES).padStart(2, "0")}`;
  const workload = `w${String(workloadIndex).padStart(4, "0")}`;
  const level = 0.05 + (index % 17) * 0.05;
  const diurnal = index % 3 === 0;
  return {
    namespace,
    workload,
    pod: `${workload}-0`,
    container: `c${index % CONTAINERS_PER_POD}`,
    cpuCores: (t) =>
      diurnal && new Date(t).getUTCHours() >= 14 && new Date(t).getUTCHours() < 22 ? level * 4 : level,
    memoryBytes: () => (100 + (index % 23) * 40) * MIB,
  };
}

function countingClient(client: PrometheusClient): PrometheusClient & { count: () => number } {
  let queries = 0;
  return {
    count: () => queries,
    queryRange: (query, range) => {
      queries++;
      return client.queryRange(query, range);
    },
    query: (query, time) => {
      queries++;
      return client.query(query, time);
    },
  };
}

/** Runs `work`, sampling RSS and heap every 20 ms: wall time and the peaks above the baseline. */
async function measure<T>(work: () => Promise<T>) {
  globalThis.gc?.();
  const before = memoryUsage();
  let peakRss = before.rss;
  let peakHeap = before.heapUsed;
  const timer = setInterval(() => {
    const now = memoryUsage();
    peakRss = Math.max(peakRss, now.rss);
    peakHeap = Math.max(peakHeap, now.heapUsed);
  }, 20);
  const started = performance.now();
  const value = await work();
  const wallMs = performance.now() - started;
  clearInterval(timer);
  const after = memoryUsage();
  peakRss = Math.max(peakRss, after.rss);
  peakHeap = Math.max(peakHeap, after.heapUsed);
  return { value, wallMs, rssMiB: (peakRss - before.rss) / MIB, heapMiB: (peakHeap - before.heapUsed) / MIB };
}

async function main() {
  if (process.env.NAPWAKE_IN_NETNS !== "1") throw new Error("run me with test/cluster/netns-run.sh");
  const binDir = await ensureBinaries();
  const stateDir = await mkdtemp(join(tmpdir(), "napwake-bench-"));
  const cluster = await startControlPlane({ binDir, stateDir, log });
  try {
    const all = Array.from({ length: CONTAINERS }, (_, i) => seriesFor(i));
    const end = Date.now() - 10 * MINUTE;
    for (let from = 0; from < all.length; from += LOAD_CHUNK) {
      const chunk = all.slice(from, from + LOAD_CHUNK);
      const started = performance.now();
      const text = containerUsageOpenMetrics(chunk, { end, durationMs: 14 * DAY, stepMs: STEP });
      log(
        `loading containers ${from + 1}-${from + chunk.length} of ${all.length} (${(text.length / 1e6).toFixed(0)} MB OpenMetrics)...`,
      );
      await cluster.prometheus.loadHistory(text);
      log(`  loaded in ${((performance.now() - started) / 1000).toFixed(1)} s`);
    }

    const targets: UsageTarget[] = [
      ...new Map(all.map((s) => [`${s.namespace}/${s.workload}`, s])).values(),
    ].map((s) => ({
      namespace: s.namespace,
      workload: s.workload,
      kind: "StatefulSet",
      containers: Array.from({ length: CONTAINERS_PER_POD }, (_, c) => `c${c}`),
      since: null,
    }));
    const client = countingClient(prometheusClient({ url: cluster.prometheus.url, timeoutMs: 120_000 }));
    const now = Date.now();

    log(
      "batched usage source: the operator's recommender run (probe, fetch, fold, recommend, checkpoint)...",
    );
    const covered: CoveredWorkload[] = targets.map((t) => ({
      kind: "StatefulSet",
      namespace: t.namespace,
      name: t.workload,
      uid: "",
      replicas: 1,
      containers: t.containers.map((name) => ({ name })),
      modes: auditEverywhere,
    }));
    const memory = new RecommenderMemory();
    const run = (nowMs: number) =>
      runRecommender({
        client,
        covered,
        memory,
        checkpointOf: () => undefined,
        settings: { usage: defaultUsageSourceConfig, recommender: defaultConfig },
        nowMs,
        log: { warn: (o, m) => log(`${m} ${JSON.stringify(o)}`) },
      });
    const batched = await measure(async () => {
      const summary = await run(now);
      if (!summary.ok) throw new Error(summary.error);
      let recommended = 0;
      for (const outcome of memory.outcomes.values()) {
        if (!outcome.ok) continue;
        for (const c of outcome.containers.values()) if (c.recommendation.status === "ok") recommended++;
      }
      return { recommended, containers: summary.containers };
    });
    const batchedQueries = client.count();
    log("the next run an hour later, resuming from what the first one learned...");
    const resumed = await measure(async () => {
      const summary = await run(now + 60 * MINUTE);
      if (!summary.ok) throw new Error(summary.error);
      return summary.queries.length;
    });
    const resumedQueries = client.count() - batchedQueries;

    log("peer: one query per metric per workload (CPU and memory only)...");
    const naive = await measure(async () => {
      const cpuAndMemory = ["cpu", "memory"] as const;
      let next = 0;
      const jobs = targets.flatMap((s) => cpuAndMemory.map((metric) => ({ s, metric })));
      const worker = async () => {
        while (next < jobs.length) {
          const job = jobs[next++];
          if (!job) break;
          const query = usageQuery(
            job.metric,
            { namespaces: [job.s.namespace], workloads: [job.s.workload] },
            STEP,
            defaultPromQLConfig,
          );
          const result = await client.queryRange(query, {
            start: now - 14 * DAY,
            end: now - MINUTE,
            stepMs: STEP,
          });
          if (!result.ok) throw new Error(result.error.message);
        }
      };
      await Promise.all(Array.from({ length: defaultUsageSourceConfig.concurrency }, worker));
      return jobs.length;
    });
    const naiveQueries = client.count() - batchedQueries - resumedQueries;

    const rows = [
      [
        "batched (napwake run)",
        String(batchedQueries),
        (batched.wallMs / 1000).toFixed(1),
        batched.rssMiB.toFixed(0),
        batched.heapMiB.toFixed(0),
      ],
      [
        "next run, from checkpoints",
        String(resumedQueries),
        (resumed.wallMs / 1000).toFixed(1),
        resumed.rssMiB.toFixed(0),
        resumed.heapMiB.toFixed(0),
      ],
      [
        "one query per workload",
        String(naiveQueries),
        (naive.wallMs / 1000).toFixed(1),
        naive.rssMiB.toFixed(0),
        naive.heapMiB.toFixed(0),
      ],
    ];
    process.stdout.write(
      `\nRightsizing at scale: ${CONTAINERS} containers (${targets.length} workloads in ${NAMESPACES} namespaces), 14 days at a 5 m step\n` +
        `recommendations: ${batched.value.recommended} ok of ${batched.value.containers} containers with history\n\n` +
        `${table(["method", "queries", "wall s", "peak RSS +MiB", "peak heap +MiB"], rows)}\n\n` +
        `queries: ${(naiveQueries / batchedQueries).toFixed(0)}x fewer batched; wall time: ${(naive.wallMs / batched.wallMs).toFixed(1)}x (the peer fetches CPU and memory only)\n` +
        `process max RSS over the whole run (history generation included): ${(resourceUsage().maxRSS / 1024).toFixed(0)} MiB\n`,
    );
  } finally {
    await cluster.stop();
    await rm(stateDir, { recursive: true, force: true });
  }
}

await main();
