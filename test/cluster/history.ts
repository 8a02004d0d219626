/**
 * OpenMetrics text for per-container usage history, the shape cAdvisor and the kubelet export
 * (container_cpu_usage_seconds_total as a counter, container_memory_working_set_bytes as a gauge),
 * for `promtool tsdb create-blocks-from openmetrics`. Pure: the caller supplies the usage functions.
 */
export interface ContainerSeries {
  namespace: string;
  pod: string;
  container: string;
  /** CPU cores in use at a time (ms since epoch). */
  cpuCores: (t: number) => number;
  /** Working-set bytes at a time. */
  memoryBytes: (t: number) => number;
}

export interface HistoryWindow {
  /** Last sample time, ms since epoch. */
  end: number;
  durationMs: number;
  stepMs: number;
}

export function containerUsageOpenMetrics(series: readonly ContainerSeries[], window: HistoryWindow): string {
  const times: number[] = [];
  // Align to the step so that series written by separate calls line up.
  const last = Math.floor(window.end / window.stepMs) * window.stepMs;
  for (let t = last - window.durationMs; t <= last; t += window.stepMs) times.push(t);
  const lines: string[] = [];
  lines.push("# TYPE container_cpu_usage_seconds_total counter");
  for (const s of series) {
    let total = 0;
    for (const t of times) {
      total += s.cpuCores(t) * (window.stepMs / 1000);
      lines.push(`container_cpu_usage_seconds_total${labels(s)} ${total.toFixed(3)} ${t / 1000}`);
    }
  }
  lines.push("# TYPE container_memory_working_set_bytes gauge");
  for (const s of series) {
    for (const t of times) {
      lines.push(
        `container_memory_working_set_bytes${labels(s)} ${Math.round(s.memoryBytes(t))} ${t / 1000}`,
      );
    }
  }
  lines.push("# EOF", "");
  return lines.join("\n");
}

function labels(s: ContainerSeries): string {
  return `{namespace="${s.namespace}",pod="${s.pod}",container="${s.container}"}`;
}
