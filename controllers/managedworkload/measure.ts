import type { CustomObjectsApi } from "@kubernetes/client-node";
import type { ActivityQuery } from "../../api/managedworkload.ts";
import { parseQuantity } from "../../kube/quantity.ts";
import type { ActivitySample } from "./observation.ts";

interface PodMetricsList {
  items: { containers: { usage: { cpu: string } }[] }[];
}

/** Reads what tells whether a workload is active: its pods' CPU from metrics.k8s.io and its PromQL queries. */
export interface ActivityMeter {
  measure(input: {
    namespace: string;
    selector: string;
    replicas: number;
    queries: readonly ActivityQuery[];
    nowMs: number;
    signal?: AbortSignal;
  }): Promise<ActivitySample>;
}

export function activityMeter(deps: {
  custom: CustomObjectsApi;
  /** Prometheus-compatible base URL for activity queries; undefined when none is configured. */
  prometheusUrl?: string;
  fetch?: typeof fetch;
  timeoutMs?: number;
}): ActivityMeter {
  const doFetch = deps.fetch ?? fetch;
  const timeoutMs = deps.timeoutMs ?? 10_000;

  async function podCpu(namespace: string, selector: string, replicas: number): Promise<number> {
    const list = (await deps.custom.listNamespacedCustomObject({
      group: "metrics.k8s.io",
      version: "v1beta1",
      namespace,
      plural: "pods",
      labelSelector: selector,
    })) as PodMetricsList;
    // New pods have no metrics for a scrape or two: no figure is not the same as zero.
    if (replicas > 0 && list.items.length === 0) throw new Error("no pod metrics yet");
    return list.items.reduce(
      (sum, pod) => sum + pod.containers.reduce((s, c) => s + parseQuantity(c.usage.cpu), 0),
      0,
    );
  }

  async function query(q: ActivityQuery, signal?: AbortSignal): Promise<boolean> {
    if (!deps.prometheusUrl) throw new Error("no Prometheus URL is configured (--prometheus-url)");
    const url = `${deps.prometheusUrl}/api/v1/query?${new URLSearchParams({ query: q.query })}`;
    const timeout = AbortSignal.timeout(timeoutMs);
    const res = await doFetch(url, { signal: signal ? AbortSignal.any([signal, timeout]) : timeout });
    const body = (await res.json()) as {
      status: string;
      error?: string;
      data?: { result?: { value: [number, string] }[] };
    };
    if (body.status !== "success") throw new Error(body.error ?? `HTTP ${res.status}`);
    const first = body.data?.result?.[0];
    if (!first) throw new Error("the query returned no series");
    const value = Number(first.value[1]);
    return (q.activeWhen ?? "Above") === "Above" ? value > q.threshold : value < q.threshold;
  }

  return {
    async measure({ namespace, selector, replicas, queries, nowMs, signal }) {
      const errors: string[] = [];
      const cpuCores = await podCpu(namespace, selector, replicas).catch((err: Error) => {
        errors.push(`pod CPU: ${err.message}`);
        return null;
      });
      const results = await Promise.all(
        queries.map(async (q) => {
          try {
            return { name: q.name, active: await query(q, signal) };
          } catch (err) {
            return { name: q.name, active: null, error: (err as Error).message };
          }
        }),
      );
      return { atMs: nowMs, cpuCores, queries: results, errors };
    },
  };
}
