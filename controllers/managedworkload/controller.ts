/**
 * The ManagedWorkload controller: the IO around decide(). Shared informer caches (controllers/caches.ts) hold
 * ManagedWorkloads, their targets, Namespaces and autoscalers; the work queue runs one reconcile per `namespace/name` key at a time.
 * A reconcile re-reads everything from the caches (whatever woke it), measures activity when a periodic
 * check is due, decides, writes in order, records Events and writes status if it changed.
 */
import type {
  KubernetesObject,
  V1Deployment,
  V1HorizontalPodAutoscaler,
  V1Namespace,
  V1StatefulSet,
} from "@kubernetes/client-node";
import { findCondition } from "../../api/conditions.ts";
import { annotations, conditionTypes } from "../../api/keys.ts";
import {
  type ManagedWorkload,
  type ManagedWorkloadStatus,
  parseDuration,
  specDefaults,
  type TargetKind,
} from "../../api/managedworkload.ts";
import { farAhead, pausedFromOf, timeOf } from "../../api/meta.ts";
import { slotOf } from "../../forecast/index.ts";
import type { Clock } from "../../kube/clock.ts";
import type { EventRecorder } from "../../kube/events.ts";
import {
  type Outcome,
  type Priority,
  type QueueMetrics,
  type ReconcileContext,
  WorkQueue,
} from "../../kube/workqueue.ts";
import type { Caches } from "../caches.ts";
import { OwnStatusMemory } from "../own-status.ts";
import { autoscalersFor, type ScaledObject } from "./autoscalers.ts";
import { activityKnown, decide } from "./decide.ts";
import { type ForecastBook, type ForecastLook, type ForecastNotice, shownPrediction } from "./forecasting.ts";
import { type ActivityHistoryReader, HistoryLoader, type HistoryResult } from "./history-reader.ts";
import { type Counted, LifecycleLedger, specSeen } from "./lifecycle-ledger.ts";
import type { ActivityMeter } from "./measure.ts";
import type {
  ActivitySample,
  Decision,
  EventIntent,
  ReconcilerSettings,
  TargetState,
} from "./observation.ts";
import { otherOwner } from "./owner.ts";
import { type ClusterWrites, makeWrites } from "./writes.ts";

type Workload = V1Deployment | V1StatefulSet;

export interface ControllerDeps {
  caches: Caches;
  clock: Clock;
  writes: ClusterWrites;
  events: EventRecorder;
  meter: ActivityMeter;
  settings: ReconcilerSettings;
  fieldManager: string;
  maxConcurrentReconciles?: number;
  /** One forecast engine per workload: its advice vetoes pauses and pre-wakes; absent, the clock decides alone. */
  forecasts?: ForecastBook;
  /** Where a new engine's activity history comes from (Prometheus); absent, new engines learn from now. */
  history?: ActivityHistoryReader;
  metrics?: QueueMetrics;
  /** Counts pauses and wakes (the metrics); called once per scale write, not per Event. */
  lifecycle?: { recordPause(): void; recordWake(source: string): void };
  log: {
    info(obj: object, msg: string): void;
    warn(obj: object, msg: string): void;
    error(obj: object, msg: string): void;
  };
}

export interface ManagedWorkloadController {
  /** Queue a key, e.g. when the doorman holds a request for the workload. */
  enqueue(key: string, priority: Priority): void;
  stop(): Promise<void>;
}

export async function startManagedWorkloadController(
  deps: ControllerDeps,
): Promise<ManagedWorkloadController> {
  const { caches } = deps;
  const lastSample = new Map<string, ActivitySample>();
  const lifecycle = new LifecycleLedger();
  const ownStatus = new OwnStatusMemory<ManagedWorkloadStatus>();
  let queue: WorkQueue | undefined;
  const enqueue = (key: string, priority: Priority) => queue?.add(key, priority);
  const mwCache = caches.managedWorkloads.cache;
  const histories = historyLoaderFor(deps, enqueue);
  // Without a loader, a book that waits for histories would wait for ever, saving no state.
  const requestHistory = (key: string, mw: ManagedWorkload, nowMs: number) =>
    deps.forecasts && askForHistory(deps.forecasts, histories, key, mw, nowMs);

  // A change to a workload queues the ManagedWorkloads that target it, at the priority its state calls for.
  const queueTargetOwners = (obj: KubernetesObject, kind: TargetKind) => {
    const ns = obj.metadata?.namespace ?? "";
    for (const mw of mwCache.list(ns)) {
      if (mw.spec.targetRef.kind === kind && mw.spec.targetRef.name === obj.metadata?.name) {
        enqueue(`${ns}/${mw.metadata.name}`, targetPriority(obj as Workload));
      }
    }
  };
  const unsubscribe = [
    caches.deployments.onChange((o) => queueTargetOwners(o, "Deployment")),
    caches.statefulSets.onChange((o) => queueTargetOwners(o, "StatefulSet")),
    caches.managedWorkloads.onChange((mw) => {
      enqueue(`${mw.metadata.namespace}/${mw.metadata.name}`, mwPriority(mw));
      // Another ManagedWorkload of the same target may own it now (this one deleted, or being deleted), or no
      // longer (this one came back): it waits for no change of its own.
      for (const other of mwCache.list(mw.metadata.namespace)) {
        const same =
          other.metadata.name !== mw.metadata.name &&
          other.spec.targetRef.kind === mw.spec.targetRef.kind &&
          other.spec.targetRef.name === mw.spec.targetRef.name;
        if (same) enqueue(`${other.metadata.namespace}/${other.metadata.name}`, mwPriority(other));
      }
    }),
    // A Namespace's protection and opt-in labels decide whether its workloads are managed.
    caches.namespaces.onChange((ns) => {
      for (const mw of mwCache.list(ns.metadata?.name)) {
        enqueue(`${mw.metadata.namespace}/${mw.metadata.name}`, mwPriority(mw));
      }
    }),
  ];
  const deployments = caches.deployments;
  const statefulSets = caches.statefulSets;
  const namespaces = caches.namespaces;
  const hpas = caches.hpas;

  const targetOf = (mw: ManagedWorkload): Workload | undefined => {
    const ref = mw.spec.targetRef;
    const cache = ref.kind === "Deployment" ? deployments.cache : statefulSets.cache;
    return cache.get(ref.name, mw.metadata.namespace) as Workload | undefined;
  };

  async function reconcile(key: string, ctx: ReconcileContext): Promise<Outcome> {
    const [namespace = "", name = ""] = key.split("/");
    const cached = mwCache.get(name, namespace);
    if (!cached) {
      lastSample.delete(key);
      lifecycle.forget(key);
      deps.forecasts?.forget(key);
      ownStatus.forget(key);
      return { done: true };
    }
    const mw = ownStatus.view(key, cached);
    const nowMs = deps.clock.now();
    const workload = targetOf(mw);
    const target = workload ? targetState(workload, mw.spec.targetRef.kind) : null;
    const activity = await measureIfDue(key, mw, workload, target, nowMs, ctx);
    const existingOwner = otherOwner(mw, mwCache.list(namespace));
    // A second ManagedWorkload of a target neither learns nor shows a forecast: the owner's engine is the one.
    const look = existingOwner
      ? noForecast(deps, key)
      : lookOrClockAlone(deps, key, () =>
          deps.forecasts?.look(
            key,
            mw,
            nowMs,
            parseDuration(mw.spec.idle?.window ?? specDefaults.idleWindow),
            knownActivity(mw, workload, nowMs),
            activityKnown(target, activity),
          ),
        );
    const decided = decide({
      nowMs,
      mw,
      target,
      namespace: namespaceMeta(namespaces.cache.get(namespace)),
      existingOwner,
      autoscalers: target
        ? autoscalersFor(
            target,
            hpas.cache.list(namespace) as V1HorizontalPodAutoscaler[],
            caches.scaledObjects?.cache.list(namespace) ?? [],
          )
        : [],
      scaledObjects: (caches.scaledObjects?.cache.list(namespace) ?? []) as ScaledObject[],
      activity,
      forecast: look?.advice ?? null,
      settings: deps.settings,
      fieldManager: deps.fieldManager,
    });
    // Read once Napwake manages the workload: a target not there yet has no history of its own, and one let go
    // (protected, ignored) may never need it; its engine learns live meanwhile, and the read keeps what it learned.
    if (look && decided.status.phase !== "Unmanaged") requestHistory(key, mw, nowMs);
    const notices = noticeEvents(look);
    const decision = withPrediction(decided, look, [...notices.keys()], nowMs);
    deps.forecasts?.noteActivity(key, timeOf(decision.status.lastActivity?.time));
    if (ctx.signal.aborted) throw ctx.signal.reason;
    if (target) {
      const decided = {
        pausedAt: mw.status?.pausedAt,
        source: wakeSource(decision.status),
        spec: specSeen(target),
      };
      lifecycle.decided(key, decision.writes, decided);
      await makeWrites(decision.writes, target, deps.writes, (w) => count(lifecycle.landed(key, w, decided)));
    }
    const sent = await recordEvents(mw, decision);
    // A notice whose Event did not go out stays with the forecast book and comes back next reconcile.
    deps.forecasts?.sent(
      key,
      [...notices].filter(([event]) => sent.has(event)).map(([, notice]) => notice),
    );
    const written = await ownStatus.writeIfChanged(key, cached, mw, decision.status, deps.writes.writeStatus);
    if (written === "gone") return { done: true };
    deps.log.info(
      { key, phase: decision.status.phase, writes: decision.writes.length, why: decision.summary },
      "reconciled",
    );
    return decision.requeueAfterMs === null
      ? { done: true }
      : { requeueAfterMs: decision.requeueAfterMs, priority: "periodic" };
  }

  async function measureIfDue(
    key: string,
    mw: ManagedWorkload,
    workload: Workload | undefined,
    target: TargetState | null,
    nowMs: number,
    ctx: ReconcileContext,
  ): Promise<ActivitySample | null> {
    if (!workload || !target) return null;
    const previous = lastSample.get(key);
    const paused = pausedFromOf(target) !== null;
    const queries = mw.spec.idle?.activityQueries ?? [];
    // Paused workloads have no pods: only their queries can tell activity.
    if (paused && queries.length === 0) return null;
    const interval = paused ? deps.settings.pausedCheckIntervalMs : deps.settings.checkIntervalMs;
    if (previous && sampleReusable(previous, nowMs, interval)) return previous;
    const sample = await deps.meter.measure({
      namespace: target.namespace,
      selector: workload.spec?.selector,
      replicas: target.replicas,
      queries,
      nowMs,
      signal: ctx.signal,
    });
    lastSample.set(key, sample);
    return sample;
  }

  // Counted as the writes land (see lifecycle-ledger.ts), so a write after them that fails loses no count.
  function count(counted: Counted) {
    if (counted?.kind === "pause") deps.lifecycle?.recordPause();
    else if (counted?.kind === "wake") deps.lifecycle?.recordWake(counted.source);
  }

  /** Sends the decision's Events; returns those that went out. */
  async function recordEvents(mw: ManagedWorkload, decision: Decision): Promise<Set<EventIntent>> {
    const regarding = {
      apiVersion: mw.apiVersion,
      kind: mw.kind,
      name: mw.metadata.name,
      namespace: mw.metadata.namespace,
      uid: mw.metadata.uid ?? "",
    };
    const sent = new Set<EventIntent>();
    for (const e of decision.events) {
      const input = { regarding, type: e.type, reason: e.reason, action: e.reason, note: e.note };
      const result =
        e.kind === "action"
          ? await deps.events.action({ ...input, ...(e.settledAs ? { settledAs: e.settledAs } : {}) })
          : e.kind === "notice"
            ? await deps.events.notice(input)
            : await deps.events.skip({
                ...input,
                ...(e.fingerprint ? { fingerprint: e.fingerprint } : {}),
                ...(e.sameAs ? { sameAs: e.sameAs } : {}),
              });
      if (result === "sent") sent.add(e);
    }
    return sent;
  }

  queue = new WorkQueue({
    reconcile,
    clock: deps.clock,
    ...(deps.maxConcurrentReconciles ? { maxConcurrentReconciles: deps.maxConcurrentReconciles } : {}),
    ...(deps.metrics ? { metrics: deps.metrics } : {}),
    log: deps.log,
  });
  for (const mw of mwCache.list()) enqueue(`${mw.metadata.namespace}/${mw.metadata.name}`, "change");

  return {
    enqueue,
    async stop({ deadlineMs = 10_000 }: { deadlineMs?: number } = {}) {
      for (const remove of unsubscribe) remove();
      histories?.stop();
      await queue?.shutdown({ deadlineMs });
    },
  };
}

/** Histories read at once at most: a new install with many workloads asks Prometheus one after another. */
const HISTORY_READS_AT_ONCE = 2;

function historyLoaderFor(
  deps: ControllerDeps,
  enqueue: (key: string, priority: Priority) => void,
): HistoryLoader | undefined {
  const { forecasts, history } = deps;
  if (!forecasts || !history) return undefined;
  return new HistoryLoader(
    history,
    HISTORY_READS_AT_ONCE,
    (result) => {
      settleHistory(forecasts, deps.log, deps.clock.now(), result);
      // The next reconcile acts on the forecast and sends its notice.
      enqueue(result.key, "change");
    },
    {
      // Deleted, its forecast turned off, or its history settled since it was queued: not read.
      wanted: (key) => forecasts.wantsHistory(key, deps.clock.now()),
      failed: (key, err) =>
        deps.log.error({ key, err: String(err) }, "forecast: activity history not handed over"),
    },
  );
}

/**
 * Hands a read history to the engine. Learning it only advises, like a look: a fault in it leaves the
 * engine learning from now, said with the Event of a history that could not be read.
 */
export function settleHistory(
  forecasts: Pick<ForecastBook, "learnHistory" | "historyUnavailable">,
  log: Pick<ControllerDeps["log"], "warn" | "error">,
  nowMs: number,
  result: HistoryResult,
): void {
  if ("points" in result) {
    try {
      forecasts.learnHistory(result.key, result.mw, result.points);
      return;
    } catch (err) {
      log.error({ key: result.key, err: String(err) }, "forecast: could not learn the activity history");
      forecasts.historyUnavailable(result.key, result.mw, `learning it failed: ${String(err)}`, {
        retryable: false,
        nowMs,
      });
      return;
    }
  }
  log.warn(
    { key: result.key, err: result.error, retryable: result.retryable },
    "forecast: activity history unavailable",
  );
  forecasts.historyUnavailable(result.key, result.mw, result.error, { retryable: result.retryable, nowMs });
}

/**
 * Asks for the activity history of a new engine that wants it now (the book knows spec.forecast.history and
 * the retries); without a loader (no Prometheus), the engine learns from now.
 */
export function askForHistory(
  forecasts: Pick<ForecastBook, "wantsHistory" | "skipHistory" | "historyWindowSlots">,
  histories: Pick<HistoryLoader, "request"> | undefined,
  key: string,
  mw: ManagedWorkload,
  nowMs: number,
): void {
  if (!forecasts.wantsHistory(key, nowMs)) return;
  if (!histories) {
    forecasts.skipHistory(key);
    return;
  }
  const toSlot = slotOf(nowMs);
  histories.request(key, mw, toSlot - forecasts.historyWindowSlots(), toSlot);
}

/**
 * Whether the last activity sample may stand for a check at `nowMs`: taken within half a check interval, and
 * not ahead of now (a clock stepped back would otherwise reuse it until it caught up).
 */
export function sampleReusable(
  previous: Pick<ActivitySample, "atMs">,
  nowMs: number,
  intervalMs: number,
): boolean {
  return previous.atMs <= nowMs && nowMs - previous.atMs < intervalMs / 2;
}

/** What woke a workload, for the wakes metric: the forecast, dry-run, or the source of its last activity. */
export function wakeSource(status: ManagedWorkloadStatus): string {
  const reason = findCondition(status.conditions, conditionTypes.paused)?.reason;
  if (reason === "PreWake") return "forecast";
  if (reason === "DryRun") return "dry-run";
  return status.lastActivity?.source ?? "unknown";
}

/** No forecast for this ManagedWorkload: its engine is forgotten, and status shows no prediction. */
function noForecast(deps: Pick<ControllerDeps, "forecasts">, key: string): ForecastLook | undefined {
  if (!deps.forecasts) return undefined;
  deps.forecasts.forget(key);
  return { advice: null, prediction: undefined, notices: [] };
}

/**
 * The forecast's look, or none when it fails: the forecast only advises, so a fault in it must leave
 * pausing and waking to the idle clock rather than fail every reconcile of the workload. Its engine is
 * forgotten, so the next look starts again from the saved state.
 */
export function lookOrClockAlone(
  deps: Pick<ControllerDeps, "forecasts" | "log">,
  key: string,
  look: () => ForecastLook | undefined,
): ForecastLook | undefined {
  try {
    return look();
  } catch (err) {
    deps.log.error({ key, err: String(err) }, "forecast failed; the idle clock decides alone");
    deps.forecasts?.forget(key);
    return undefined;
  }
}

/** The forecast's notices as action Events, each with the notice it came from. */
function noticeEvents(look: ForecastLook | undefined): Map<EventIntent, ForecastNotice> {
  return new Map((look?.notices ?? []).map((n) => [{ ...n, kind: "notice" as const }, n]));
}

/** The engine owns status.prediction; its phase changes and anomalies are Events of their own. */
function withPrediction(
  decision: Decision,
  look: ForecastLook | undefined,
  notices: readonly EventIntent[],
  nowMs: number,
): Decision {
  if (!look) return decision;
  const status = { ...decision.status };
  if (look.prediction) status.prediction = shownPrediction(look.prediction, decision.status, nowMs);
  else delete status.prediction;
  return { ...decision, status, events: [...decision.events, ...notices] };
}

/**
 * The latest activity known before deciding: status and the activity annotations on the target, as stamped. A
 * stamp too far ahead of this clock is ignored rather than believed, as the decision ignores it; one within the
 * skew allowed is left ahead, for the forecast to count once (when first known) rather than at every look.
 */
export function knownActivity(
  mw: ManagedWorkload,
  workload: Workload | undefined,
  nowMs: number,
): number | null {
  const a = workload?.metadata?.annotations ?? {};
  const times = [mw.status?.lastActivity?.time, a[annotations.lastRequest], a[annotations.activity]]
    .map((value) => timeOf(value))
    .filter((t): t is number => t !== null && !farAhead(t, nowMs));
  return times.length > 0 ? Math.max(...times) : null;
}

/** What a change of the target says about urgency: a workload scaled up from zero is woken first. */
function targetPriority(workload: Workload): Priority {
  const annotationsOn = workload.metadata?.annotations ?? {};
  if (annotationsOn[annotations.pausedFrom] !== undefined) {
    return (workload.spec?.replicas ?? 0) > 0 ? "resume-in-progress" : "wake";
  }
  return "change";
}

function mwPriority(mw: ManagedWorkload): Priority {
  const a = mw.metadata.annotations ?? {};
  return a[annotations.resumeRequested] || a[annotations.pauseRequested] ? "wake" : "change";
}

function targetState(workload: Workload, kind: TargetKind): TargetState {
  return {
    kind,
    name: workload.metadata?.name ?? "",
    namespace: workload.metadata?.namespace ?? "",
    uid: workload.metadata?.uid ?? "",
    replicas: workload.spec?.replicas ?? 1,
    generation: workload.metadata?.generation,
    labels: workload.metadata?.labels ?? {},
    annotations: workload.metadata?.annotations ?? {},
    managedFields: (workload.metadata?.managedFields ?? []) as TargetState["managedFields"],
    deletesVolumesWhenScaled:
      kind === "StatefulSet" &&
      (workload as V1StatefulSet).spec?.persistentVolumeClaimRetentionPolicy?.whenScaled === "Delete",
  };
}

function namespaceMeta(ns: V1Namespace | undefined) {
  return ns ? { labels: ns.metadata?.labels ?? {}, annotations: ns.metadata?.annotations ?? {} } : null;
}
