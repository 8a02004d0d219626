import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import { type ManagedWorkload, type Phase, phases } from "../api/managedworkload.ts";
import { PHASES } from "../forecast/index.ts";
import { type Priority, priorities, type QueueMetrics, type ReconcileResult } from "./workqueue.ts";

/**
 * Napwake's Prometheus metrics, in a registry of their own (never prom-client's global one, so tests and
 * several operators in one process do not share counters). Served by kube/metrics-server.ts.
 */

const reconcileResults: readonly ReconcileResult[] = [
  "done",
  "requeue",
  "retry",
  "timeout",
  "terminal",
  "superseded",
];

/** Wake sources with a series of their own; anything else is counted as `other` to bound label values. */
export const wakeSources = [
  "cpu",
  "prometheus",
  "request",
  "annotation",
  "manual",
  "scale-up",
  "forecast",
  "dry-run",
  "unknown",
] as const;
export type WakeSource = (typeof wakeSources)[number];

export interface MetricsOptions {
  /**
   * ManagedWorkloads per phase, read at each scrape (e.g. `countPhases` over the informer cache); undefined while
   * the count is not known yet (caches still syncing), which exports no series rather than zeros.
   */
  workloadsByPhase?: () => Partial<Record<string, number>> | undefined;
  /** ManagedWorkloads per forecast phase, read as `workloadsByPhase` is (e.g. `countForecastPhases`). */
  workloadsByForecastPhase?: () => Partial<Record<string, number>> | undefined;
  /** Node.js process metrics (CPU, memory, event loop, GC). Default true. */
  processMetrics?: boolean;
}

/** What an admission request came to: as its handler decided, or its failurePolicy when the handler failed. */
export const admissionResults = ["allowed", "refused", "failed-open", "failed-closed"] as const;
export type AdmissionResult = (typeof admissionResults)[number];

/** The webhook server's hooks. */
export interface AdmissionMetrics {
  /** An AdmissionReview answered by `webhook`, and how long its handler took. */
  reviewed(webhook: string, result: AdmissionResult, durationMs: number): void;
  /** A TLS handshake that failed: a caller that does not trust the serving certificate, most often. */
  handshakeFailed(): void;
}

export interface NapwakeMetrics {
  readonly registry: Registry;
  /** The admission webhooks' hooks; `webhooks` are the names to give series from the start. */
  admissionMetrics(webhooks: readonly string[]): AdmissionMetrics;
  /** The work queue hooks of one controller (e.g. `managedworkload`, `optin`). */
  queueMetrics(controller: string): QueueMetrics;
  /** A workload was scaled to zero by Napwake. */
  recordPause(): void;
  /** A paused workload was scaled back up, for this reason (its last activity's source, `manual`, …). */
  recordWake(source: string): void;
  /** The Prometheus text exposition of every metric. */
  text(): Promise<string>;
  readonly contentType: string;
}

const secondsBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];
const waitBuckets = [0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5, 10, 30, 60, 300];

export function createMetrics(options: MetricsOptions = {}): NapwakeMetrics {
  const registry = new Registry();
  const registers = [registry];

  const reconcileTotal = new Counter({
    name: "napwake_reconcile_total",
    help: "Reconciles finished, by controller, result and the priority they ran at.",
    labelNames: ["controller", "result", "priority"] as const,
    registers,
  });
  const reconcileDuration = new Histogram({
    name: "napwake_reconcile_duration_seconds",
    help: "Time a reconcile took, by controller and priority.",
    labelNames: ["controller", "priority"] as const,
    buckets: secondsBuckets,
    registers,
  });
  const queueDepth = new Gauge({
    name: "napwake_queue_depth",
    help: "Keys waiting for a worker, by controller and priority.",
    labelNames: ["controller", "priority"] as const,
    registers,
  });
  const queueWait = new Histogram({
    name: "napwake_queue_wait_seconds",
    help: "Time a key waited between being queued and a worker taking it, by priority.",
    labelNames: ["priority"] as const,
    buckets: waitBuckets,
    registers,
  });
  phaseGauge(registers, "napwake_workloads", "ManagedWorkloads by phase.", phases, options.workloadsByPhase);
  phaseGauge(
    registers,
    "napwake_forecast_workloads",
    "ManagedWorkloads by the phase of their forecast (off: turned off, not started, or a phase not known here).",
    forecastPhases,
    options.workloadsByForecastPhase,
  );
  const pausesTotal = new Counter({
    name: "napwake_pauses_total",
    help: "Workloads scaled to zero by Napwake.",
    registers,
  });
  const wakesTotal = new Counter({
    name: "napwake_wakes_total",
    help: "Paused workloads woken by Napwake (its scale from zero, or KEDA's on the release of its hold), by what woke them.",
    labelNames: ["source"] as const,
    registers,
  });
  const admissionTotal = new Counter({
    name: "napwake_webhook_requests_total",
    help:
      "AdmissionReviews answered, by webhook and result (failed-open, failed-closed: the handler failed and the " +
      "webhook's failurePolicy answered).",
    labelNames: ["webhook", "result"] as const,
    registers,
  });
  const admissionDuration = new Histogram({
    name: "napwake_webhook_request_duration_seconds",
    help: "Time a webhook's handler took to answer an AdmissionReview, by webhook.",
    labelNames: ["webhook"] as const,
    buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
    registers,
  });
  const handshakeFailures = new Counter({
    name: "napwake_webhook_tls_handshake_errors_total",
    help:
      "TLS handshakes with the webhook server that failed: an API server that does not trust the serving " +
      "certificate (a caBundle without its CA) fails every call this way.",
    registers,
  });
  pausesTotal.inc(0);
  for (const source of wakeSources) wakesTotal.inc({ source }, 0);
  if (options.processMetrics ?? true) collectDefaultMetrics({ register: registry });

  return {
    registry,
    queueMetrics(controller) {
      // Every series exists from the start, so rate() and absent() behave before the first reconcile.
      for (const priority of priorities) {
        queueDepth.set({ controller, priority }, 0);
        for (const result of reconcileResults) reconcileTotal.inc({ controller, result, priority }, 0);
      }
      return {
        depth: (priority, depth) => queueDepth.set({ controller, priority }, depth),
        reconciled(result, priority, durationMs) {
          reconcileTotal.inc({ controller, result, priority });
          reconcileDuration.observe({ controller, priority }, durationMs / 1000);
        },
        waited: (priority: Priority, waitMs: number) => queueWait.observe({ priority }, waitMs / 1000),
      };
    },
    admissionMetrics(webhooks) {
      handshakeFailures.inc(0);
      for (const webhook of webhooks) {
        for (const result of admissionResults) admissionTotal.inc({ webhook, result }, 0);
      }
      return {
        reviewed(webhook, result, durationMs) {
          admissionTotal.inc({ webhook, result });
          admissionDuration.observe({ webhook }, durationMs / 1000);
        },
        handshakeFailed: () => handshakeFailures.inc(),
      };
    },
    recordPause: () => pausesTotal.inc(),
    recordWake: (source) => wakesTotal.inc({ source: wakeSourceLabel(source) }),
    text: () => registry.metrics(),
    contentType: registry.contentType,
  };
}

/**
 * A gauge of ManagedWorkloads per phase, read from `count` at each scrape: every phase in `known` has a series
 * (0 when none), so absent() and rates behave; a phase not in it is shown as counted.
 */
function phaseGauge(
  registers: Registry[],
  name: string,
  help: string,
  known: readonly string[],
  count: (() => Partial<Record<string, number>> | undefined) | undefined,
): void {
  new Gauge({
    name,
    help,
    labelNames: ["phase"] as const,
    registers,
    collect() {
      if (!count) return;
      this.reset();
      const counts = count();
      if (!counts) return;
      for (const [phase, n] of Object.entries(allPhases(known, counts))) this.set({ phase }, n);
    },
  });
}

export function wakeSourceLabel(source: string): WakeSource | "other" {
  return (wakeSources as readonly string[]).includes(source) ? (source as WakeSource) : "other";
}

/**
 * `counts` with every phase of `known` present (0 where it has none, so a series never vanishes), plus any
 * other phase reported.
 */
export function allPhases(
  known: readonly string[],
  counts: Partial<Record<string, number>>,
): Record<string, number> {
  const all: Record<string, number> = Object.fromEntries(known.map((p) => [p, 0]));
  for (const [phase, count] of Object.entries(counts)) all[phase] = count ?? 0;
  return all;
}

/** Forecast phases with a series of their own, as `status.prediction.phase` shows them, and `off`. */
export const forecastPhases = ["off", ...PHASES] as const;

/**
 * ManagedWorkloads per forecast phase; a status without a known one (forecasting turned off or not started, or a
 * phase a newer version wrote) counts as `off`.
 */
export function countForecastPhases(
  workloads: readonly Pick<ManagedWorkload, "status">[],
): Record<(typeof forecastPhases)[number], number> {
  const counts = Object.fromEntries(forecastPhases.map((p) => [p, 0])) as Record<
    (typeof forecastPhases)[number],
    number
  >;
  for (const mw of workloads) {
    const phase = mw.status?.prediction?.phase;
    const known = forecastPhases.find((p) => p === phase && p !== "off") ?? "off";
    counts[known]++;
  }
  return counts;
}

/** ManagedWorkloads per phase; one not yet reconciled (no status) counts as Pending. */
export function countPhases(workloads: readonly Pick<ManagedWorkload, "status">[]): Record<Phase, number> {
  const counts = Object.fromEntries(phases.map((p) => [p, 0])) as Record<Phase, number>;
  for (const mw of workloads) {
    // A phase this version does not know (written by a newer one) is counted under its own name.
    const phase = mw.status?.phase ?? "Pending";
    counts[phase] = (counts[phase] ?? 0) + 1;
  }
  return counts;
}
