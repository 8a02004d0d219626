/**
 * The rightsizing controller (audit side): a periodic recommender run over every covered workload, and a
 * level-based reconcile per workload that keeps its Rightsizing object and status true to the caches and
 * the last run. A reconcile never reads Prometheus: it decides from the caches and the run's outcome in
 * memory, so a change of policy or annotation shows in status at once. Writes nothing to workloads.
 */
import type { KubernetesObject } from "@kubernetes/client-node";
import {
  type Rightsizing,
  type RightsizingStatus,
  rightsizingCrd,
  rightsizingName,
} from "../../api/rightsizing.ts";
import type {
  RightsizingMode,
  RightsizingPolicy,
  RightsizingPolicyStatus,
  RightsizingResource,
  WorkloadKind,
} from "../../api/rightsizingpolicy.ts";
import { type Clock, settlesWithin } from "../../kube/clock.ts";
import type { EventRecorder } from "../../kube/events.ts";
import { type Outcome, type Priority, type QueueMetrics, WorkQueue } from "../../kube/workqueue.ts";
import type { PrometheusClient } from "../../rightsizing/prometheus-client.ts";
import type { Caches } from "../caches.ts";
import { OwnStatusMemory } from "../own-status.ts";
import {
  type CoverageInput,
  type CoveredWorkload,
  coverage,
  rightsizedModes,
  runningContainers,
  type Workload,
} from "./coverage.ts";
import { decideRightsizing } from "./decide.ts";
import { decidePolicyStatus, policyReach, SeenValues, selectionInputs } from "./policy-status.ts";
import { RecommenderMemory, type RunSettings, type RunSummary, runRecommender, workloadKey } from "./run.ts";
import type { RightsizingWrites } from "./writes.ts";

export type RightsizingSettings = RunSettings & {
  readonly operatorNamespace: string;
  /** How often the recommender reads new usage. */
  readonly intervalMs: number;
  readonly clusterDefault: Partial<Record<RightsizingResource, RightsizingMode>>;
  /** Whether the API server offers in-place pod resize (the pods/resize subresource). */
  readonly inPlaceResize: boolean;
};

export type RightsizingMetrics = {
  run(summary: RunSummary, seconds: number): void;
  recommendation(w: CoveredWorkload, status: RightsizingStatus): void;
  /** A workload (its key, `namespace/name.kind`) that is gone or no longer covered. */
  forget(key: string): void;
  /** Every workload: this replica no longer leads, and the leader's series are the ones to read. */
  forgetAll(): void;
};

export interface RightsizingControllerDeps {
  caches: Caches;
  prometheus: PrometheusClient;
  writes: RightsizingWrites;
  events: EventRecorder;
  clock: Clock;
  settings: RightsizingSettings;
  queueMetrics?: QueueMetrics;
  metrics?: RightsizingMetrics;
  log: {
    info(obj: object, msg: string): void;
    warn(obj: object, msg: string): void;
    error(obj: object, msg: string): void;
  };
}

export interface RightsizingController {
  /** Runs the recommender now (the periodic timer calls it too) and queues every covered workload. */
  runNow(): Promise<RunSummary>;
  /**
   * Stops: reconciles are given `deadlineMs` (default 10 s) and the queue's settle time, and a recommender run
   * still waiting on Prometheus at the deadline is dropped.
   */
  stop(opts?: { deadlineMs?: number }): Promise<void>;
}

const kinds: readonly WorkloadKind[] = ["Deployment", "StatefulSet"];

const generationOf = (o: KubernetesObject | undefined) =>
  o ? String(o.metadata?.generation ?? 0) : undefined;

/** The queue key of the pass that writes every RightsizingPolicy's status: no workload key lacks a slash. */
const policiesKey = "rightsizingpolicies";
const policyStatusDelayMs = 5_000;

const containerNames = (w: Workload) => runningContainers(w).map((c) => c.name);

export function startRightsizingController(deps: RightsizingControllerDeps): RightsizingController {
  const { caches, settings } = deps;
  const policiesCache = caches.rightsizingPolicies;
  const objectsCache = caches.rightsizings;
  if (!policiesCache || !objectsCache) {
    throw new Error("the rightsizing controller needs caches started with { rightsizing: true }");
  }
  const memory = new RecommenderMemory();
  const ownStatus = new OwnStatusMemory<RightsizingStatus>();
  const policyStatus = new OwnStatusMemory<RightsizingPolicyStatus>();
  /** Each policy's generation, and what selection reads of each workload: their other changes move no policy. */
  const policyGenerations = new SeenValues();
  const workloadSelections = new SeenValues();
  let lastRunOk: boolean | null = null;
  let stopped = false;
  let firstRunDone = false;

  const workloadCache = (kind: WorkloadKind) =>
    kind === "Deployment" ? caches.deployments : caches.statefulSets;
  const policies = () => policiesCache.cache.list() as RightsizingPolicy[];
  const namespaceLabels = (namespace: string) =>
    caches.namespaces.cache.get(namespace)?.metadata?.labels as Record<string, string> | undefined;

  const coverageInput = (workload: Workload, kind: WorkloadKind): CoverageInput => {
    const key = workloadKey({
      namespace: workload.metadata?.namespace ?? "",
      name: workload.metadata?.name ?? "",
      kind,
    });
    const outcome = memory.outcomes.get(key);
    return {
      workload,
      kind,
      namespaceLabels: namespaceLabels(workload.metadata?.namespace ?? ""),
      policies: policies(),
      clusterDefault: settings.clusterDefault,
      operatorNamespace: settings.operatorNamespace,
      readiness: {
        metricsSourceHealthy: outcome ? outcome.ok : lastRunOk === true,
        enoughHistory:
          outcome?.ok === true &&
          containerNames(workload).length > 0 &&
          containerNames(workload).every(
            (name) => outcome.containers.get(name)?.recommendation.status === "ok",
          ),
        inPlaceResizeAvailable: settings.inPlaceResize,
      },
    };
  };
  const covering = (workload: Workload, kind: WorkloadKind) => coverage(coverageInput(workload, kind));

  /** Every Deployment and StatefulSet in the caches, with its kind. */
  const allWorkloads = () =>
    kinds.flatMap((kind) =>
      workloadCache(kind)
        .cache.list()
        .map((workload) => ({ workload: workload as Workload, kind })),
    );
  const allCovered = (): CoveredWorkload[] =>
    allWorkloads().flatMap(({ workload, kind }) => {
      const c = covering(workload, kind);
      return "covered" in c ? [c.covered] : [];
    });

  /** Every policy's status, from one pass over the workloads in the caches (see policy-status.ts). */
  async function writePolicyStatuses(): Promise<Outcome> {
    const resolutions = allWorkloads().flatMap(({ workload, kind }) => {
      const resolved = rightsizedModes(coverageInput(workload, kind));
      return "modes" in resolved ? [resolved.modes] : [];
    });
    const reach = policyReach(resolutions);
    const nowIso = new Date(deps.clock.now()).toISOString();
    const current = policies();
    policyStatus.retain(new Set(current.map((p) => p.metadata.name)));
    for (const cached of current) {
      const name = cached.metadata.name;
      const seen = policyStatus.view(name, cached);
      const status = decidePolicyStatus(seen, reach.get(name), nowIso);
      await policyStatus.writeIfChanged(name, cached, seen, status, deps.writes.writePolicyStatus);
    }
    return { done: true };
  }

  async function reconcile(key: string): Promise<Outcome> {
    if (key === policiesKey) return writePolicyStatuses();
    // Until the first run after starting (or winning the lease) nothing is known of the source or the history:
    // deciding then would hold auto-patch to audit and drop notices for nothing. The run queues every workload.
    if (!firstRunDone) return { done: true };
    // A key names the workload (`workloadKey`); its Rightsizing's name may be cut from a long one.
    const [namespace = "", workloadAndKind = ""] = key.split("/");
    const dot = workloadAndKind.lastIndexOf(".");
    const name = workloadAndKind.slice(0, dot);
    const kind = kinds.find((k) => k.toLowerCase() === workloadAndKind.slice(dot + 1));
    if (!kind) return { done: true };
    const objectName = rightsizingName(kind, name);
    const cachedObject = objectsCache?.cache.get(objectName, namespace) as Rightsizing | undefined;
    const workload = workloadCache(kind).cache.get(name, namespace) as Workload | undefined;
    // A deleted workload takes its Rightsizing with it (owner reference): nothing to do.
    if (!workload) {
      ownStatus.forget(key);
      deps.metrics?.forget(key);
      return { done: true };
    }
    const c = covering(workload, kind);
    if ("notCovered" in c) {
      if (cachedObject) {
        await deps.writes.remove(namespace, objectName);
        deps.log.info({ key, why: c.notCovered }, "rightsizing let go");
      }
      ownStatus.forget(key);
      deps.metrics?.forget(key);
      return { done: true };
    }
    const object = cachedObject ?? (await deps.writes.create(c.covered));
    const current = ownStatus.view(key, object);
    const decision = decideRightsizing({
      nowMs: deps.clock.now(),
      generation: current.metadata.generation,
      previous: current.status,
      containers: c.covered.containers,
      modes: c.covered.modes,
      run: memory.outcomes.get(key) ?? null,
      config: settings.recommender,
    });
    const written = await ownStatus.writeIfChanged(
      key,
      object,
      current,
      decision.status,
      deps.writes.writeStatus,
    );
    if (written === "gone") return { done: true };
    // After the status that records them: a conflict retried from a fresher read does not send them twice.
    for (const e of decision.events) {
      await deps.events.action({
        regarding: {
          apiVersion: rightsizingCrd.apiVersion,
          kind: rightsizingCrd.kind,
          name: objectName,
          namespace,
          uid: current.metadata.uid ?? "",
        },
        type: e.type,
        reason: e.reason,
        action: "Recommend",
        note: e.note,
      });
    }
    // A reconcile that outlived its controller's stop (a slow write) leaves the series to the next leader.
    if (!stopped) deps.metrics?.recommendation(c.covered, decision.status);
    return { done: true };
  }

  const queue = new WorkQueue({
    keepOneForWakes: false, // only changes and checks: no wake to keep a worker for
    reconcile,
    clock: deps.clock,
    ...(deps.queueMetrics ? { metrics: deps.queueMetrics } : {}),
    log: deps.log,
  });
  const enqueueWorkload = (o: KubernetesObject, kind: WorkloadKind, priority: Priority = "change") =>
    queue.add(
      workloadKey({ namespace: o.metadata?.namespace ?? "", name: o.metadata?.name ?? "", kind }),
      priority,
    );
  const enqueueAll = (priority: Priority = "change") => {
    for (const { workload, kind } of allWorkloads()) enqueueWorkload(workload, kind, priority);
  };
  /** Whether a policy's or a workload's change (or its deletion) can move what policies govern. */
  const policyChanged = (name: string) =>
    policyGenerations.changed(name, generationOf(policiesCache.cache.get(name)));
  const selectionChanged = (o: KubernetesObject, kind: WorkloadKind) => {
    const [namespace, name] = [o.metadata?.namespace ?? "", o.metadata?.name ?? ""];
    const live = workloadCache(kind).cache.get(name, namespace);
    const key = workloadKey({ namespace, name, kind });
    return workloadSelections.changed(key, live?.metadata ? selectionInputs(live.metadata) : undefined);
  };
  // Seeded from the caches as they stand: listeners are told only of later changes.
  for (const p of policies()) policyChanged(p.metadata.name);
  for (const { workload, kind } of allWorkloads()) selectionChanged(workload, kind);
  // Policy statuses follow the workloads a few seconds behind: one pass covers a burst of workload changes.
  const workloadChanged = (o: KubernetesObject, kind: WorkloadKind) => {
    enqueueWorkload(o, kind);
    if (selectionChanged(o, kind)) queue.addAfter(policiesKey, policyStatusDelayMs, "periodic");
  };
  const unsubscribe = [
    caches.deployments.onChange((o) => workloadChanged(o, "Deployment")),
    caches.statefulSets.onChange((o) => workloadChanged(o, "StatefulSet")),
    caches.namespaces.onChange((ns) => {
      for (const kind of kinds)
        for (const w of workloadCache(kind).cache.list(ns.metadata?.name)) enqueueWorkload(w, kind);
      queue.add(policiesKey, "change");
    }),
    policiesCache.onChange((o) => {
      // A status write (this controller's own) leaves the generation alone: only a new spec, a new policy or a
      // deleted one changes what the workloads decide.
      if (policyChanged(o.metadata?.name ?? "")) enqueueAll();
      queue.add(policiesKey, "change");
    }),
    objectsCache.onChange((o) => {
      const target = (o as Rightsizing).spec?.targetRef;
      if (target) {
        const workload = { namespace: o.metadata?.namespace ?? "", name: target.name, kind: target.kind };
        queue.add(workloadKey(workload), "change");
      }
    }),
  ];

  let running: Promise<RunSummary> | undefined;
  async function runNow(): Promise<RunSummary> {
    // One run at a time: a second caller waits for the run under way.
    running ??= (async () => {
      const started = performance.now();
      const covered = allCovered();
      const summary = await runRecommender({
        client: deps.prometheus,
        covered,
        // Covered or not: whose pods a pod's name could be is judged against every workload in the caches.
        workloads: allWorkloads().map(({ workload, kind }) => ({
          namespace: workload.metadata?.namespace ?? "",
          name: workload.metadata?.name ?? "",
          kind,
        })),
        memory,
        checkpointOf: (w, container) => {
          const o = objectsCache?.cache.get(rightsizingName(w.kind, w.name), w.namespace) as
            | Rightsizing
            | undefined;
          return o?.status?.containers?.find((c) => c.name === container)?.checkpoint;
        },
        settings,
        nowMs: deps.clock.now(),
        log: deps.log,
      });
      // A run that outlived its controller's stop reports nothing: another term's runs are the ones to show.
      if (stopped) return summary;
      lastRunOk = summary.ok;
      firstRunDone = true;
      const seconds = (performance.now() - started) / 1000;
      deps.metrics?.run(summary, seconds);
      deps.log.info(
        {
          ok: summary.ok,
          workloads: summary.workloads,
          containers: summary.containers,
          queries: summary.queries.length,
          seconds: Number(seconds.toFixed(3)),
          ...(summary.error ? { error: summary.error } : {}),
        },
        "recommender run",
      );
      // Every workload, covered or not: one that is no longer covered has its Rightsizing removed.
      enqueueAll("periodic");
      queue.add(policiesKey, "periodic");
      return summary;
    })().finally(() => {
      running = undefined;
    });
    return running;
  }

  let timer: ReturnType<typeof setTimeout> | undefined;
  const loop = () => {
    if (stopped) return;
    runNow()
      .catch((err) => deps.log.error({ err: String(err) }, "recommender run failed"))
      .finally(() => {
        if (!stopped) timer = setTimeout(loop, settings.intervalMs);
      });
  };
  loop();

  return {
    runNow,
    async stop({ deadlineMs = 10_000 }: { deadlineMs?: number } = {}) {
      stopped = true;
      const stopAt = deps.clock.now() + deadlineMs;
      if (timer) clearTimeout(timer);
      for (const remove of unsubscribe) remove();
      // The queue first: it is what writes. A run in flight only reads and fills this term's memory, which goes
      // with it: it is waited for until the deadline and no longer, or a Prometheus that never answers (30 s an
      // attempt, with retries) would hold a shutdown or a hand-over for minutes.
      await queue.shutdown({ deadlineMs });
      deps.metrics?.forgetAll();
      if (running && !(await settlesWithin(deps.clock, running, Math.max(0, stopAt - deps.clock.now())))) {
        deps.log.warn(
          { deadlineMs },
          "stopped with a recommender run still waiting on Prometheus; it is dropped",
        );
      }
    },
  };
}
