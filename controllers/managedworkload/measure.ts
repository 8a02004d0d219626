import type { CustomObjectsApi } from "@kubernetes/client-node";
import type { ActivityQuery } from "../../api/managedworkload.ts";
import { untilAborted, withinDeadline } from "../../kube/abort.ts";
import { parseQuantity } from "../../kube/quantity.ts";
import { matchesSelector, type SelectorLike } from "../../kube/selectors.ts";
import { SharedSnapshots } from "../../kube/shared-snapshots.ts";
import { partialAnswerNote } from "../../rightsizing/prometheus-client.ts";
import { firstValue, type InstantAnswer, isQueryActive } from "./activity-rules.ts";
import type { ActivitySample } from "./observation.ts";

type PodMetrics = {
  metadata?: { labels?: Record<string, string> };
  containers: { usage: { cpu: string } }[];
};
interface PodMetricsList {
  items: PodMetrics[];
}

/** Reads what tells whether a workload is active: its pods' CPU from metrics.k8s.io and its PromQL queries. */
export interface ActivityMeter {
  measure(input: {
    namespace: string;
    /** The workload's pod selector; its pods are found among the namespace's pod metrics. */
    selector: SelectorLike | undefined;
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
  /**
   * How old a namespace's pod metrics may be before they are listed again. Every workload of a namespace reads
   * the same list, so the requests grow with namespaces, not workloads. metrics-server itself scrapes every 15 s.
   */
  podMetricsMaxAgeMs?: number;
}): ActivityMeter {
  const doFetch = deps.fetch ?? fetch;
  const timeoutMs = deps.timeoutMs ?? 10_000;
  const snapshots = new SharedSnapshots<PodMetrics[]>(deps.podMetricsMaxAgeMs ?? 10_000);

  async function podCpu(
    namespace: string,
    selector: SelectorLike | undefined,
    replicas: number,
    nowMs: number,
    signal: AbortSignal | undefined,
  ): Promise<number> {
    const shared = snapshots.get(namespace, nowMs, async () => {
      // Shared by every workload of the namespace, so bounded on its own rather than by one reconcile:
      // a hung metrics-server must not hold each check of the namespace until the reconcile times out.
      const list = await withinDeadline(
        timeoutMs,
        `metrics.k8s.io gave no pod metrics within ${timeoutMs} ms`,
        (options) =>
          deps.custom.listNamespacedCustomObject(
            { group: "metrics.k8s.io", version: "v1beta1", namespace, plural: "pods" },
            options,
          ),
      );
      return (list as PodMetricsList).items;
    });
    // A reconcile that is aborted stops waiting; the list goes on for the others.
    const items = await (signal ? untilAborted(shared, signal) : shared);
    const pods = items.filter((pod) => matchesSelector(selector ?? {}, pod.metadata?.labels ?? {}));
    // New pods have no metrics for a scrape or two: no figure is not the same as zero.
    if (replicas > 0 && pods.length === 0) throw new Error("no pod metrics yet");
    return pods.reduce(
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
      warnings?: unknown;
      data?: InstantAnswer;
    };
    if (body.status !== "success") throw new Error(body.error ?? `HTTP ${res.status}`);
    const value = firstValue(body.data);
    if (value === null) throw new Error("the query returned no series with a value");
    const active = isQueryActive(q, value);
    // A partial answer may lack the series that show activity: what activity it shows is there, but an idle
    // reading from it proves nothing, so it is unknown (and holds a pause) rather than idle.
    const partial = active ? null : partialAnswerNote(body.warnings);
    if (partial) throw new Error(`${partial}; an idle reading from it is not trusted`);
    return active;
  }

  return {
    async measure({ namespace, selector, replicas, queries, nowMs, signal }) {
      const errors: string[] = [];
      const cpuCores = await podCpu(namespace, selector, replicas, nowMs, signal).catch((err: Error) => {
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
