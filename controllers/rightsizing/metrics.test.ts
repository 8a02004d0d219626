import { Registry } from "prom-client";
import { describe, expect, it } from "vitest";
import type { RightsizingStatus } from "../../api/rightsizing.ts";
import type { CoveredWorkload } from "./coverage.ts";
import { rightsizingMetrics } from "./metrics.ts";

const web = { kind: "Deployment", namespace: "shop", name: "web" } as CoveredWorkload;
const status = (containers: RightsizingStatus["containers"]): RightsizingStatus => ({ containers });
const series = async (registry: Registry, name: string) =>
  (await registry.getSingleMetric(name)?.get())?.values.map((v) => [v.labels.container, v.value]) ?? [];

describe("rightsizing metrics", () => {
  it("exports recommended against requested per container, only for recommendations with enough history", async () => {
    const registry = new Registry();
    const m = rightsizingMetrics(registry);
    m.recommendation(
      web,
      status([
        {
          name: "app",
          current: { cpuRequest: "500m", memoryRequest: "512Mi" },
          target: { cpuRequest: "200m", memoryRequest: "300Mi" },
          state: "ok",
        },
        {
          name: "sidecar",
          current: { cpuRequest: "100m" },
          target: { cpuRequest: "20m" },
          state: "insufficient-history",
        },
      ]),
    );
    expect(await series(registry, "napwake_rightsizing_recommended_cpu_cores")).toEqual([["app", 0.2]]);
    expect(await series(registry, "napwake_rightsizing_requested_cpu_cores")).toEqual([
      ["app", 0.5],
      ["sidecar", 0.1],
    ]);
    expect(await series(registry, "napwake_rightsizing_recommended_memory_bytes")).toEqual([
      ["app", 300 * 2 ** 20],
    ]);
  });

  it("drops the series of a container that went, and of a workload that is no longer covered", async () => {
    const registry = new Registry();
    const m = rightsizingMetrics(registry);
    const both = status([
      { name: "app", current: { cpuRequest: "500m" }, target: { cpuRequest: "200m" }, state: "ok" },
      { name: "sidecar", current: { cpuRequest: "100m" }, target: { cpuRequest: "20m" }, state: "ok" },
    ]);
    m.recommendation(web, both);
    m.recommendation(web, status(both.containers?.slice(0, 1)));
    expect(await series(registry, "napwake_rightsizing_recommended_cpu_cores")).toEqual([["app", 0.2]]);
    m.forget("shop/web.deployment");
    expect(await series(registry, "napwake_rightsizing_recommended_cpu_cores")).toEqual([]);
  });

  it("drops every workload's series once this replica stops leading, so only the leader's are read", async () => {
    const registry = new Registry();
    const m = rightsizingMetrics(registry);
    const one = status([{ name: "app", current: {}, target: { cpuRequest: "200m" }, state: "ok" }]);
    m.recommendation(web, one);
    m.recommendation({ ...web, name: "api" }, one);
    m.forgetAll();
    expect(await series(registry, "napwake_rightsizing_recommended_cpu_cores")).toEqual([]);
    expect(await series(registry, "napwake_rightsizing_requested_cpu_cores")).toEqual([]);
  });

  it("keeps a Deployment's and a StatefulSet's series apart when they share a name", async () => {
    const registry = new Registry();
    const m = rightsizingMetrics(registry);
    const db = { kind: "StatefulSet", namespace: "shop", name: "web" } as CoveredWorkload;
    const one = status([{ name: "app", current: {}, target: { cpuRequest: "200m" }, state: "ok" }]);
    m.recommendation(web, one);
    m.recommendation(db, one);
    const workloads = async () =>
      (await registry.getSingleMetric("napwake_rightsizing_recommended_cpu_cores")?.get())?.values.map(
        (v) => v.labels.workload,
      );
    expect(await workloads()).toEqual(["deployment/web", "statefulset/web"]);
    m.forget("shop/web.statefulset");
    expect(await workloads()).toEqual(["deployment/web"]);
  });

  it("counts queries, and runs stopped by a metrics source error", async () => {
    const registry = new Registry();
    const m = rightsizingMetrics(registry);
    m.run({ ok: true, workloads: 3, containers: 4, queries: [{ metric: "cpu", start: 0, end: 1 }] }, 0.2);
    m.run({ ok: false, workloads: 3, containers: 0, queries: [], error: "down" }, 0.1);
    const text = await registry.metrics();
    expect(text).toMatch(/^napwake_rightsizing_queries_total 1$/m);
    expect(text).toMatch(/^napwake_rightsizing_query_errors_total 1$/m);
    expect(text).toMatch(/^napwake_rightsizing_run_duration_seconds_count\{result="error"\} 1$/m);
  });
});
