/**
 * The opt-in controller for Deployments and StatefulSets: keys are `Kind/namespace/name`; a change to the
 * workload, its Namespace or a ManagedWorkload targeting it queues the workload; each reconcile re-reads the
 * caches and acts on decideOptIn().
 */
import type {
  CustomObjectsApi,
  KubernetesObject,
  V1Deployment,
  V1StatefulSet,
} from "@kubernetes/client-node";
import { eventReasons } from "../../api/keys.ts";
import { type ManagedWorkload, managedWorkloadCrd, type TargetKind } from "../../api/managedworkload.ts";
import { pausedFromOf } from "../../api/meta.ts";
import { replicaCount } from "../../api/text.ts";
import type { Clock } from "../../kube/clock.ts";
import { httpCode } from "../../kube/errors.ts";
import type { EventRecorder } from "../../kube/events.ts";
import { type Outcome, type QueueMetrics, WorkQueue } from "../../kube/workqueue.ts";
import type { Caches } from "../caches.ts";
import {
  type ScaledObject,
  scaledObjectHoldWrites,
  scaledObjectsOf,
} from "../managedworkload/autoscalers.ts";
import type { ClusterWrites } from "../managedworkload/writes.ts";
import { makeWrites } from "../managedworkload/writes.ts";
import { decideOptIn, type OptInWorkload } from "./decide.ts";

export interface OptInDeps {
  caches: Caches;
  custom: CustomObjectsApi;
  writes: ClusterWrites;
  events: EventRecorder;
  clock: Clock;
  fieldManager: string;
  metrics?: QueueMetrics;
  log: {
    info(obj: object, msg: string): void;
    warn(obj: object, msg: string): void;
    error(obj: object, msg: string): void;
  };
}

export function startOptInController(deps: OptInDeps): { stop(): Promise<void> } {
  const { caches } = deps;
  const queue = new WorkQueue({
    reconcile,
    clock: deps.clock,
    maxConcurrentReconciles: 2,
    log: deps.log,
    ...(deps.metrics ? { metrics: deps.metrics } : {}),
  });
  const key = (kind: TargetKind, ns: string, name: string) => `${kind}/${ns}/${name}`;
  const queueWorkload = (kind: TargetKind) => (o: KubernetesObject) =>
    queue.add(key(kind, o.metadata?.namespace ?? "", o.metadata?.name ?? ""), "change");
  const unsubscribe = [
    caches.deployments.onChange(queueWorkload("Deployment")),
    caches.statefulSets.onChange(queueWorkload("StatefulSet")),
    caches.managedWorkloads.onChange((mw) =>
      queue.add(key(mw.spec.targetRef.kind, mw.metadata.namespace, mw.spec.targetRef.name), "change"),
    ),
    caches.namespaces.onChange((ns) => {
      const name = ns.metadata?.name ?? "";
      for (const d of caches.deployments.cache.list(name)) queueWorkload("Deployment")(d);
      for (const s of caches.statefulSets.cache.list(name)) queueWorkload("StatefulSet")(s);
    }),
  ];
  for (const d of caches.deployments.cache.list()) queueWorkload("Deployment")(d);
  for (const s of caches.statefulSets.cache.list()) queueWorkload("StatefulSet")(s);

  async function reconcile(k: string): Promise<Outcome> {
    const [kind, namespace = "", name = ""] = k.split("/") as [TargetKind, string, string];
    const cache = kind === "Deployment" ? caches.deployments.cache : caches.statefulSets.cache;
    const object = cache.get(name, namespace) as V1Deployment | V1StatefulSet | undefined;
    if (!object) return { done: true }; // Deleted: its ManagedWorkload goes with it (owner reference).
    const workload = optInWorkload(kind, object);
    const managers = caches.managedWorkloads.cache
      .list(namespace)
      .filter(
        (mw) =>
          mw.spec.targetRef.kind === kind &&
          mw.spec.targetRef.name === name &&
          !mw.metadata.deletionTimestamp,
      );
    const actions = decideOptIn({
      workload,
      namespaceLabels: caches.namespaces.cache.get(namespace)?.metadata?.labels ?? {},
      managers,
    });
    for (const action of actions) {
      if (action.kind === "none") continue;
      if (action.kind === "create") await createManagedWorkload(action.object);
      if (action.kind === "delete") await deleteManagedWorkload(namespace, action.name);
      if (action.kind === "resume-orphan") await resumeOrphan(workload, action.from, object);
      deps.log.info({ key: k, action: action.kind, why: action.reason }, "opt-in");
    }
    return { done: true };
  }

  async function createManagedWorkload(mw: ManagedWorkload) {
    try {
      await deps.custom.createNamespacedCustomObject({
        group: managedWorkloadCrd.group,
        version: managedWorkloadCrd.version,
        plural: managedWorkloadCrd.plural,
        namespace: mw.metadata.namespace,
        body: mw,
        fieldManager: deps.fieldManager,
      });
    } catch (err) {
      if (httpCode(err) !== 409) throw err; // Already there: the cache had not caught up.
    }
  }

  async function deleteManagedWorkload(namespace: string, name: string) {
    try {
      await deps.custom.deleteNamespacedCustomObject({
        group: managedWorkloadCrd.group,
        version: managedWorkloadCrd.version,
        plural: managedWorkloadCrd.plural,
        namespace,
        name,
      });
    } catch (err) {
      if (httpCode(err) !== 404) throw err;
    }
  }

  async function resumeOrphan(workload: OptInWorkload, from: number, object: V1Deployment | V1StatefulSet) {
    const target = {
      kind: workload.kind,
      name: workload.name,
      namespace: workload.namespace,
      uid: workload.uid,
      replicas: workload.replicas,
      labels: workload.labels,
      annotations: object.metadata?.annotations ?? {},
      managedFields: [],
    };
    // The same ordered writes as a resume of the ManagedWorkload controller: release Napwake's hold on the
    // workload's ScaledObjects (KEDA would keep it at zero, and its autoscaling paused, for good), scale up,
    // then forget the count.
    const listed = (caches.scaledObjects?.cache.list(target.namespace) ?? []) as ScaledObject[];
    const scaledObjects = scaledObjectsOf(target, listed);
    await makeWrites(
      [
        ...scaledObjectHoldWrites(scaledObjects, false, deps.fieldManager),
        ...(target.replicas === 0 ? [{ kind: "scale" as const, from: 0, to: from }] : []),
        { kind: "forget-paused-from" as const },
      ],
      target,
      deps.writes,
    );
    await deps.events.action({
      regarding: {
        apiVersion: "apps/v1",
        kind: workload.kind,
        name: workload.name,
        namespace: workload.namespace,
        uid: workload.uid,
      },
      type: "Normal",
      reason: eventReasons.resumed,
      action: "Resume",
      note: `resumed to ${replicaCount(from)}: no longer opted in to Napwake`,
    });
  }

  return {
    stop: ({ deadlineMs = 10_000 }: { deadlineMs?: number } = {}) => {
      for (const remove of unsubscribe) remove();
      return queue.shutdown({ deadlineMs }).then(() => undefined);
    },
  };
}

function optInWorkload(kind: TargetKind, object: V1Deployment | V1StatefulSet): OptInWorkload {
  const meta = object.metadata ?? {};
  const target = {
    kind,
    name: meta.name ?? "",
    namespace: meta.namespace ?? "",
    uid: meta.uid ?? "",
    replicas: object.spec?.replicas ?? 1,
    labels: meta.labels ?? {},
    annotations: meta.annotations ?? {},
    managedFields: [],
  };
  return { ...target, pausedFrom: pausedFromOf(target), labels: target.labels };
}
