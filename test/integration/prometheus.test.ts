import { describe, expect, it } from "vitest";
import { loadPrometheusHistory } from "../cluster/harness-api.ts";
import { containerUsageOpenMetrics } from "../cluster/history.ts";
import { instantQuery } from "../cluster/prometheus.ts";
import { clusterClients } from "./cluster.ts";

const minute = 60_000;
const hour = 60 * minute;
const day = 24 * hour;

describe("Prometheus with loaded history", () => {
  it("answers PromQL over 14 days of per-container CPU and memory history", async () => {
    const { info } = clusterClients();
    const end = Date.now() - 10 * minute;
    // Busy in the day (14:00-22:00 UTC, 500m), quiet at night (50m); memory grows 1 MiB a day from 200 MiB.
    const cpuCores = (t: number) => {
      const h = new Date(t).getUTCHours();
      return h >= 14 && h < 22 ? 0.5 : 0.05;
    };
    const memoryBytes = (t: number) => (200 + Math.floor((t - (end - 14 * day)) / day)) * 2 ** 20;
    const history = containerUsageOpenMetrics(
      [
        { namespace: "history", pod: "api-0", container: "api", cpuCores, memoryBytes },
        { namespace: "history", pod: "api-1", container: "api", cpuCores, memoryBytes },
      ],
      { end, durationMs: 14 * day, stepMs: 5 * minute },
    );
    await loadPrometheusHistory(info.harnessUrl, history);

    // An evening and a night three days ago: rate() needs two samples in its window.
    const base = new Date(end - 3 * day);
    base.setUTCMinutes(0, 0, 0);
    const at = (h: number) =>
      new Date(Date.UTC(base.getUTCFullYear(), base.getUTCMonth(), base.getUTCDate(), h));
    const busy = await instantQuery(
      'sum(rate(container_cpu_usage_seconds_total{namespace="history"}[15m]))',
      at(18),
    );
    const quiet = await instantQuery(
      'sum(rate(container_cpu_usage_seconds_total{namespace="history"}[15m]))',
      at(4),
    );
    expect(busy[0]?.value).toBeCloseTo(1.0, 2);
    expect(quiet[0]?.value).toBeCloseTo(0.1, 2);

    const peak = await instantQuery(
      'max(max_over_time(container_memory_working_set_bytes{namespace="history"}[14d]))',
      new Date(end),
    );
    expect((peak[0]?.value ?? 0) / 2 ** 20).toBeGreaterThanOrEqual(213);
    const samples = await instantQuery(
      'count_over_time(container_memory_working_set_bytes{namespace="history",pod="api-0"}[14d])',
      new Date(end),
    );
    // 14 days of 5-minute samples.
    expect(samples[0]?.value).toBeGreaterThanOrEqual(14 * 288);
  });
});
