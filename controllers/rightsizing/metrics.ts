import { Counter, Gauge, Histogram, type Registry } from "prom-client";
import { parseQuantity } from "../../kube/quantity.ts";
import type { RightsizingMetrics } from "./controller.ts";
import { workloadKey } from "./run.ts";

/** Recommended against requested CPU and memory per container, recommender run time and query errors. */
export function rightsizingMetrics(registry: Registry): RightsizingMetrics {
  const registers = [registry];
  const labelNames = ["namespace", "workload", "container"] as const;
  const gauge = (name: string, help: string) => new Gauge({ name, help, labelNames, registers });
  const recommendedCpu = gauge(
    "napwake_rightsizing_recommended_cpu_cores",
    "Recommended CPU request per container, in cores.",
  );
  const requestedCpu = gauge(
    "napwake_rightsizing_requested_cpu_cores",
    "CPU request per container now, in cores.",
  );
  const recommendedMemory = gauge(
    "napwake_rightsizing_recommended_memory_bytes",
    "Recommended memory request per container, in bytes.",
  );
  const requestedMemory = gauge(
    "napwake_rightsizing_requested_memory_bytes",
    "Memory request per container now, in bytes.",
  );
  const runDuration = new Histogram({
    name: "napwake_rightsizing_run_duration_seconds",
    help: "Time a recommender run took (queries, folding, recommending), by result.",
    labelNames: ["result"] as const,
    buckets: [0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600],
    registers,
  });
  const queries = new Counter({
    name: "napwake_rightsizing_queries_total",
    help: "Range queries the recommender made to the metrics source.",
    registers,
  });
  const queryErrors = new Counter({
    name: "napwake_rightsizing_query_errors_total",
    help: "Recommender runs that stopped on a metrics source error.",
    registers,
  });
  queries.inc(0);
  queryErrors.inc(0);
  const gauges = [recommendedCpu, requestedCpu, recommendedMemory, requestedMemory];
  const set = (
    g: Gauge<(typeof labelNames)[number]>,
    labels: Record<string, string>,
    value: string | undefined,
  ) => {
    if (value === undefined) g.remove(labels);
    else g.set(labels, parseQuantity(value));
  };
  // Series per workload, so a workload that goes takes all of its containers' series with it.
  const series = new Map<string, Record<string, string>[]>();
  return {
    run(summary, seconds) {
      runDuration.observe({ result: summary.ok ? "ok" : "error" }, seconds);
      queries.inc(summary.queries.length);
      if (!summary.ok) queryErrors.inc();
    },
    recommendation(w, status) {
      const workload = `${w.kind.toLowerCase()}/${w.name}`;
      const key = workloadKey(w);
      const labels = (status.containers ?? []).map((c) => ({
        namespace: w.namespace,
        workload,
        container: c.name,
      }));
      for (const old of series.get(key) ?? []) {
        if (!labels.some((l) => l.workload === old.workload && l.container === old.container)) {
          for (const g of gauges) g.remove(old);
        }
      }
      series.set(key, labels);
      (status.containers ?? []).forEach((c, i) => {
        const l = labels[i] as Record<string, string>;
        set(recommendedCpu, l, c.state === "ok" ? c.target?.cpuRequest : undefined);
        set(recommendedMemory, l, c.state === "ok" ? c.target?.memoryRequest : undefined);
        set(requestedCpu, l, c.current.cpuRequest);
        set(requestedMemory, l, c.current.memoryRequest);
      });
    },
    forget(key) {
      for (const old of series.get(key) ?? []) for (const g of gauges) g.remove(old);
      series.delete(key);
    },
    forgetAll() {
      for (const key of [...series.keys()]) this.forget(key);
    },
  };
}
