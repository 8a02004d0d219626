/**
 * The opt-in controller for Deployments and StatefulSets: keys are `Kind/namespace/name`; a change to the
 * workload, its Namespace or a ManagedWorkload targeting it queues the workload; each reconcile re-reads the
 * caches and acts on decideOptIn().
 */
import {
  type CustomObjectsApi,
  type KubernetesObject,
  PatchStrategy,
  setHeaderOptions,
  type V1Deployment,
  type V1StatefulSet,
} from "@kubernetes/client-node";
import { eventReasons, optInMarker } from "../../api/keys.ts";
import { type ManagedWorkload, managedWorkloadCrd, type TargetKind } from "../../api/managedworkload.ts";
import { pausedFromOf } from "../../api/meta.ts";
import { workloadObjectName } from "../../api/names.ts";
import { replicaCount } from "../../api/text.ts";
import type { Clock } from "../../kube/clock.ts";
import { httpCode } from "../../kube/errors.ts";
import type { EventRecorder } from "../../kube/events.ts";
import { type Outcome, type QueueMetrics, WorkQueue } from "../../kube/workqueue.ts";
import type { Caches } from "../caches.ts";
import {
  type ScaledObject,
  scaledObjectReleaseWrites,
  scaledObjectsOf,
} from "../managedworkload/autoscalers.ts";
import type { ClusterWrites } from "../managedworkload/writes.ts";
import { makeWrites } from "../managedworkload/writes.ts";
import { decideOptIn, type OptInWorkload, ownerReferenceTo } from "./decide.ts";

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
    keepOneForWakes: false, // only changes and checks: no wake to keep a worker for
    reconcile,
    clock: deps.clock,
    maxConcurrentReconciles: 2,
    log: deps.log,
    ...(deps.metrics ? { metrics: deps.metrics } : {}),
  });
  const key = (kind: TargetKind, ns: string, name: string) => `${kind}/${ns}/${name}`;
  const queueWorkload = (kind: TargetKind) => (o: KubernetesObject) =>
    queue.add(key(kind, o.metadata?.namespace ?? "", o.metadata?.name ?? ""), "change");
  /** The workloads whose opt-in name a ManagedWorkload holds, refused while it held it for another. */
  const queueNamesakes = ({ name, namespace }: { name: string; namespace: string }) => {
    const namesOf = (kind: TargetKind) =>
      (kind === "Deployment" ? caches.deployments.cache : caches.statefulSets.cache)
        .list(namespace)
        .map((o) => o.metadata?.name ?? "");
    for (const namesake of namesakesOf(name, namesOf))
      queue.add(key(namesake.kind, namespace, namesake.name), "change");
  };
  const unsubscribe = [
    caches.deployments.onChange(queueWorkload("Deployment")),
    caches.statefulSets.onChange(queueWorkload("StatefulSet")),
    caches.managedWorkloads.onChange((mw) => {
      queue.add(key(mw.spec.targetRef.kind, mw.metadata.namespace, mw.spec.targetRef.name), "change");
      queueNamesakes(mw.metadata);
    }),
    // One that could not be read held its name too; deleted, the workload refused for it may opt in.
    caches.managedWorkloads.onLeftOutGone(queueNamesakes),
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
      if (action.kind === "create" && !(await createManagedWorkload(action.object, workload))) continue;
      if (action.kind === "adopt") await adoptManagedWorkload(action.object, workload);
      if (action.kind === "delete") await deleteManagedWorkload(namespace, action.name);
      if (action.kind === "resume-orphan") await resumeOrphan(workload, action.from, object);
      deps.log.info({ key: k, action: action.kind, why: action.reason }, "opt-in");
    }
    return { done: true };
  }

  /** False when another ManagedWorkload holds the name (said in a warning and an Event on the workload). */
  async function createManagedWorkload(mw: ManagedWorkload, workload: OptInWorkload): Promise<boolean> {
    try {
      await deps.custom.createNamespacedCustomObject({
        group: managedWorkloadCrd.group,
        version: managedWorkloadCrd.version,
        plural: managedWorkloadCrd.plural,
        namespace: mw.metadata.namespace,
        body: mw,
        fieldManager: deps.fieldManager,
      });
      return true;
    } catch (err) {
      if (httpCode(err) !== 409) throw err;
      // Already there (the cache had not caught up), unless one of that name manages another workload.
      const holder = caches.managedWorkloads.cache.get(mw.metadata.name, mw.metadata.namespace) as
        | ManagedWorkload
        | undefined;
      const wanted = mw.spec.targetRef;
      const other = holder?.spec.targetRef;
      const unreadable = caches.managedWorkloads.leftOut(mw.metadata.name, mw.metadata.namespace);
      if (!unreadable && (!other || (other.kind === wanted.kind && other.name === wanted.name))) return true;
      const held = other
        ? `already manages ${other.kind} ${other.name}`
        : `cannot be read (${unreadable}), so it manages nothing`;
      const note =
        `not opted in: ManagedWorkload ${mw.metadata.name} ${held}; ` +
        `rename or delete it, or write a ManagedWorkload of another name for ${wanted.kind} ${wanted.name}`;
      deps.log.warn({ workload: `${workload.namespace}/${workload.name}`, why: note }, "opt-in refused");
      await deps.events.skip({
        regarding: regardingWorkload(workload),
        type: "Warning",
        reason: eventReasons.refused,
        action: "OptIn",
        note,
      });
      return false;
    }
  }

  /**
   * Marks `mw` as opt-in's and has the workload as it is now own it, conditional on the version read: a change
   * since is a conflict, retried from a fresh read. Other owners it was given stay.
   */
  async function adoptManagedWorkload(mw: ManagedWorkload, workload: OptInWorkload) {
    const otherOwners = (mw.metadata.ownerReferences ?? []).filter(
      (ref) => !(ref.kind === workload.kind && ref.name === workload.name),
    );
    try {
      await deps.custom.patchNamespacedCustomObject(
        {
          group: managedWorkloadCrd.group,
          version: managedWorkloadCrd.version,
          plural: managedWorkloadCrd.plural,
          namespace: mw.metadata.namespace,
          name: mw.metadata.name,
          body: {
            metadata: {
              resourceVersion: mw.metadata.resourceVersion,
              labels: { [optInMarker.key]: optInMarker.value },
              ownerReferences: [...otherOwners, ownerReferenceTo(workload)],
            },
          },
          fieldManager: deps.fieldManager,
        },
        setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
      );
    } catch (err) {
      if (httpCode(err) !== 404) throw err;
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
    const resumes = target.replicas === 0;
    // At the count it was paused from, the workload is Napwake's own resume that did not get to forget it.
    const resumedBefore = target.replicas === from;
    await makeWrites(
      [
        ...scaledObjectReleaseWrites(scaledObjectsOf(target, listed)),
        ...(resumes ? [{ kind: "scale" as const, from: 0, to: from }] : []),
        { kind: "forget-paused-from" as const },
      ],
      target,
      deps.writes,
    );
    await deps.events.action({
      regarding: regardingWorkload(workload),
      type: "Normal",
      ...(resumes || resumedBefore
        ? {
            reason: eventReasons.resumed,
            action: "Resume",
            note: `resumed to ${replicaCount(from)}: no longer opted in to Napwake`,
          }
        : {
            reason: eventReasons.scaledOutside,
            action: "ForgetPausedFrom",
            note:
              `already at ${replicaCount(target.replicas)}, scaled outside Napwake while paused from ${from}; ` +
              "the paused count is forgotten: no longer opted in to Napwake",
          }),
    });
  }

  return {
    stop: ({ deadlineMs = 10_000 }: { deadlineMs?: number } = {}) => {
      for (const remove of unsubscribe) remove();
      return queue.shutdown({ deadlineMs }).then(() => undefined);
    },
  };
}

/**
 * The workloads a ManagedWorkload of this name would be made for by opt-in (`web.deployment`: Deployment web).
 * A name cut and hashed (a workload name too long for `<name>.<kind>`) cannot be read back: the workloads of the
 * kind that `namesOf` lists are matched against it too. A name nothing could be made for gives none.
 */
export function namesakesOf(
  name: string,
  namesOf: (kind: TargetKind) => readonly string[],
): { kind: TargetKind; name: string }[] {
  return (["Deployment", "StatefulSet"] as const).flatMap((kind) => {
    const suffix = `.${kind.toLowerCase()}`;
    if (!name.endsWith(suffix)) return [];
    const direct = name.slice(0, -suffix.length);
    // Ending in a hash, it may also be a long name cut: only the workloads listed can tell.
    const candidates = /-[0-9a-f]{10}$/.test(direct) ? new Set([direct, ...namesOf(kind)]) : [direct];
    return [...candidates]
      .filter((workload) => workloadObjectName(kind, workload) === name)
      .map((workload) => ({ kind, name: workload }));
  });
}

function regardingWorkload(workload: OptInWorkload) {
  const { kind, name, namespace, uid } = workload;
  return { apiVersion: "apps/v1", kind, name, namespace, uid };
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
  return {
    ...target,
    pausedFrom: pausedFromOf(target),
    labels: target.labels,
    ...(meta.deletionTimestamp ? { deleting: true } : {}),
  };
}
