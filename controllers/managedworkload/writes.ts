import {
  type AppsV1Api,
  type CustomObjectsApi,
  type KubernetesObject,
  type KubernetesObjectApi,
  PatchStrategy,
  setHeaderOptions,
  type V1Deployment,
  type V1Scale,
  type V1StatefulSet,
} from "@kubernetes/client-node";
import { withOwnConditions } from "../../api/conditions.ts";
import { annotations, managedWorkloadConditionTypes } from "../../api/keys.ts";
import {
  type ManagedWorkload,
  type ManagedWorkloadStatus,
  managedWorkloadCrd,
} from "../../api/managedworkload.ts";
import { replicaCount } from "../../api/text.ts";
import { applyStatusIfUnchanged, serverSideApply } from "../../kube/apply.ts";
import { httpCode } from "../../kube/errors.ts";
import type { TargetState, Write } from "./observation.ts";

/** Every write the ManagedWorkload reconciler makes; tests wrap it to inject faults between writes. */
export interface ClusterWrites {
  recordPausedFrom(target: TargetState, replicas: number): Promise<void>;
  forgetPausedFrom(target: TargetState): Promise<void>;
  /**
   * Throws StaleTargetError unless the workload still has the replicas and paused-from of `target`: made
   * before a write to another object (a ScaledObject's hold) that is only right for that view of it.
   */
  confirmTarget(target: TargetState): Promise<void>;
  scale(target: TargetState, from: number, to: number): Promise<void>;
  apply(object: KubernetesObject): Promise<void>;
  /**
   * Applies `status` only if the ManagedWorkload is still at `mw.metadata.resourceVersion` (a conflict
   * otherwise), so a status decided from a stale cache never overwrites a newer one. Returns the new version.
   */
  writeStatus(mw: ManagedWorkload, status: ManagedWorkloadStatus): Promise<string>;
}

const scaleConflictRetries = 5;

/** The target changed under us: the write was not made; the next reconcile re-reads and decides again. */
export class StaleTargetError extends Error {}

export function clusterWrites(clients: {
  apps: AppsV1Api;
  custom: CustomObjectsApi;
  objects: KubernetesObjectApi;
  fieldManager: string;
}): ClusterWrites {
  const { apps, custom, objects, fieldManager } = clients;
  const pausedFromPath = `/metadata/annotations/${annotations.pausedFrom.replace("/", "~1")}`;
  /** Whether `object` no longer exists; a read that fails otherwise says nothing, so it is not gone. */
  async function gone(object: KubernetesObject): Promise<boolean> {
    try {
      await objects.read({
        apiVersion: object.apiVersion ?? "",
        kind: object.kind ?? "",
        metadata: { name: object.metadata?.name ?? "", namespace: object.metadata?.namespace ?? "" },
      });
      return false;
    } catch (err) {
      return httpCode(err) === 404;
    }
  }
  /** A JSON patch that applies only while the workload has the replicas and paused-from of `target`. */
  async function patchIfAsSeen(target: TargetState, operations: object[], what: string): Promise<void> {
    const value = target.annotations[annotations.pausedFrom];
    const body = [
      { op: "test", path: "/spec/replicas", value: target.replicas },
      ...(value === undefined ? [] : [{ op: "test", path: pausedFromPath, value }]),
      ...operations,
    ];
    const options = setHeaderOptions("Content-Type", PatchStrategy.JsonPatch);
    const ref = { name: target.name, namespace: target.namespace, body, fieldManager };
    try {
      if (target.kind === "Deployment") await apps.patchNamespacedDeployment(ref, options);
      else await apps.patchNamespacedStatefulSet(ref, options);
    } catch (err) {
      if (httpCode(err) === 422) throw new StaleTargetError(`${target.kind} ${target.name} changed: ${what}`);
      throw err;
    }
  }
  function readWorkload(target: TargetState): Promise<V1Deployment | V1StatefulSet> {
    const ref = { name: target.name, namespace: target.namespace };
    return target.kind === "Deployment"
      ? apps.readNamespacedDeployment(ref)
      : apps.readNamespacedStatefulSet(ref);
  }
  return {
    async recordPausedFrom(target, replicas) {
      // Server-side apply of the one annotation: Napwake owns exactly this field of the workload.
      await serverSideApply(
        objects,
        [
          {
            apiVersion: "apps/v1",
            kind: target.kind,
            metadata: {
              name: target.name,
              namespace: target.namespace,
              annotations: { [annotations.pausedFrom]: String(replicas) },
            },
          },
        ],
        fieldManager,
        { force: true },
      );
    },
    async forgetPausedFrom(target) {
      // Removes the count only if it is still the one we decided on (whoever set it) and the workload still
      // has the replicas we saw. A cache that has not yet seen our own scale to zero would otherwise make a
      // paused workload look awake, and forgetting its count then loses it.
      await patchIfAsSeen(target, [{ op: "remove", path: pausedFromPath }], "paused-from or replicas");
    },
    async confirmTarget(target) {
      // Read, not a JSON patch test: a test cannot say that paused-from is absent, which is what a release
      // with no pause behind it depends on.
      assertAsSeen(await readWorkload(target), target, target.replicas);
    },
    async scale(target, from, to) {
      const ref = { name: target.name, namespace: target.namespace };
      // Read the workload, not its Scale: the replace below is conditional on the workload's resourceVersion,
      // so it fails if the count to restore changed since (opt-out forgetting a count recorded for this pause
      // would otherwise leave the workload at zero with nothing to restore). A conflict usually means a
      // controller updated the workload's status: read again and retry while the count is still the one
      // decided on (client-go's RetryOnConflict).
      for (let attempt = 1; ; attempt++) {
        const current = await readWorkload(target);
        if ((current.spec?.replicas ?? 1) === to) return;
        assertAsSeen(current, target, from);
        const body: V1Scale = {
          apiVersion: "autoscaling/v1",
          kind: "Scale",
          metadata: { ...ref, resourceVersion: current.metadata?.resourceVersion },
          spec: { replicas: to },
        };
        try {
          if (target.kind === "Deployment")
            await apps.replaceNamespacedDeploymentScale({ ...ref, body, fieldManager });
          else await apps.replaceNamespacedStatefulSetScale({ ...ref, body, fieldManager });
          return;
        } catch (err) {
          if (httpCode(err) !== 409) throw err;
          if (attempt >= scaleConflictRetries) {
            throw new StaleTargetError(`${target.kind} ${target.name} kept changing while scaling`);
          }
        }
      }
    },
    async apply(object) {
      try {
        await serverSideApply(objects, [object], fieldManager);
      } catch (err) {
        // Deleted since the cache listed it, the apply was a create, which the schema refuses (a ScaledObject
        // needs its spec): an object that is gone needs neither hold nor release.
        if (await gone(object)) return;
        throw err;
      }
    },
    writeStatus: (mw, status) =>
      applyStatusIfUnchanged(
        custom,
        managedWorkloadCrd,
        mw,
        withOwnConditions(status, managedWorkloadConditionTypes),
        fieldManager,
      ),
  };
}

/** Throws StaleTargetError unless `current` has `replicas` and the paused-from of `seen` (absent included). */
function assertAsSeen(current: V1Deployment | V1StatefulSet, seen: TargetState, replicas: number): void {
  const what = `${seen.kind} ${seen.name}`;
  const actual = current.spec?.replicas ?? 1;
  if (actual !== replicas) {
    throw new StaleTargetError(`${what} has ${replicaCount(actual)}, expected ${replicas}`);
  }
  const count = current.metadata?.annotations?.[annotations.pausedFrom];
  const seenCount = seen.annotations[annotations.pausedFrom];
  if (count !== seenCount) {
    throw new StaleTargetError(
      `${what} has ${annotations.pausedFrom} ${count ?? "unset"}, expected ${seenCount ?? "unset"}`,
    );
  }
}

/** Makes the writes of a decision, in order. */
export async function makeWrites(
  writes: readonly Write[],
  target: TargetState,
  cluster: ClusterWrites,
  /** Told of each write once it landed: a later one may fail, and the reconcile that finishes makes no scale. */
  landed: (write: Write) => void = () => undefined,
): Promise<void> {
  // Each write is guarded by what the target looks like after the writes before it.
  let current = target;
  for (const write of writes) {
    switch (write.kind) {
      case "record-paused-from":
        await cluster.recordPausedFrom(current, write.replicas);
        current = {
          ...current,
          annotations: { ...current.annotations, [annotations.pausedFrom]: String(write.replicas) },
        };
        break;
      case "forget-paused-from":
        await cluster.forgetPausedFrom(current);
        break;
      case "scale":
        await cluster.scale(current, write.from, write.to);
        current = { ...current, replicas: write.to };
        break;
      case "apply":
        // A ScaledObject's hold or release is right only for the workload as decided on: a cache behind
        // our own resume or pause would otherwise re-hold a woken workload or release a paused one.
        await cluster.confirmTarget(current);
        await cluster.apply(write.object);
        break;
    }
    landed(write);
  }
}
