/**
 * One informer cache per resource the controllers read, shared by all of them: each resource is listed and
 * watched once per operator, however many controllers read it.
 */
import {
  AppsV1Api,
  AutoscalingV2Api,
  CoreV1Api,
  CustomObjectsApi,
  type KubeConfig,
  type KubernetesObject,
  type V1Deployment,
  type V1Namespace,
  type V1StatefulSet,
  type V2HorizontalPodAutoscaler,
} from "@kubernetes/client-node";
import { apiVersion, group, version } from "../api/keys.ts";
import {
  type ManagedWorkload,
  managedWorkloadCrd,
  unreadableManagedWorkload,
} from "../api/managedworkload.ts";
import { type Rightsizing, rightsizingCrd } from "../api/rightsizing.ts";
import { type RightsizingPolicy, rightsizingPolicyPlural } from "../api/rightsizingpolicy.ts";
import { httpCode } from "../kube/errors.ts";
import { closableInformer, type KeptInformer, keepInformer } from "../kube/informer.ts";
import { scaledObjectApiVersion } from "./managedworkload/autoscalers.ts";
import { optionalCache } from "./optional-cache.ts";
import { type CacheEvents, type WatchedCache, watchedCache } from "./watched-cache.ts";

export type { WatchedCache };

export interface Caches {
  managedWorkloads: WatchedCache<ManagedWorkload & KubernetesObject>;
  deployments: WatchedCache<V1Deployment>;
  statefulSets: WatchedCache<V1StatefulSet>;
  namespaces: WatchedCache<V1Namespace>;
  hpas: WatchedCache<V2HorizontalPodAutoscaler>;
  /** Undefined while KEDA is not installed; read it each time (it appears when KEDA is installed). */
  readonly scaledObjects: WatchedCache<KubernetesObject> | undefined;
  /** Undefined unless started with `rightsizing: true`. */
  rightsizingPolicies: WatchedCache<RightsizingPolicy & KubernetesObject> | undefined;
  rightsizings: WatchedCache<Rightsizing & KubernetesObject> | undefined;
  stop(): Promise<void>;
}

export async function startCaches(
  kc: KubeConfig,
  opts: {
    rightsizing?: boolean;
    optionalRetryMs?: number;
    log?: { warn(fields: object, message: string): void };
  } = {},
): Promise<Caches> {
  const log = opts.log;
  const apps = kc.makeApiClient(AppsV1Api);
  const core = kc.makeApiClient(CoreV1Api);
  const custom = kc.makeApiClient(CustomObjectsApi);
  const autoscaling = kc.makeApiClient(AutoscalingV2Api);
  const kept: KeptInformer<KubernetesObject>[] = [];

  async function watch<T extends KubernetesObject>(
    path: string,
    list: () => Promise<unknown>,
    opts: { optional?: boolean; unreadable?: (obj: T) => string | null } = {},
  ): Promise<WatchedCache<T>> {
    const informer = await keepInformer(closableInformer<T>(kc, path, list as never), {
      onChange: () => undefined,
      // A resource that may not be served yet fails its first list, so optionalCache tries it again later; once
      // started, a CRD deleted and created again is picked up by this informer's own restarts.
      failFirstList: opts.optional === true,
      // Until a list works the operator is not ready: say why (a CRD not installed, RBAC, the API server).
      onError: (err) => log?.warn({ path, err: String(err) }, "cannot list or watch; retrying"),
    });
    kept.push(informer as unknown as KeptInformer<KubernetesObject>);
    return watchedCache(informer.cache, informer.cache as unknown as CacheEvents, {
      ...(opts.unreadable ? { unreadable: opts.unreadable } : {}),
      ...(log ? { log } : {}),
    });
  }

  const crdList = (group: string, version: string, plural: string) => () =>
    custom.listClusterCustomObject({ group, version, plural });
  const mwPath = `/apis/${managedWorkloadCrd.group}/${managedWorkloadCrd.version}/${managedWorkloadCrd.plural}`;
  const caches = {
    managedWorkloads: await watch<ManagedWorkload & KubernetesObject>(
      mwPath,
      crdList(managedWorkloadCrd.group, managedWorkloadCrd.version, managedWorkloadCrd.plural),
      { unreadable: unreadableManagedWorkload },
    ),
    deployments: await watch<V1Deployment>("/apis/apps/v1/deployments", () =>
      apps.listDeploymentForAllNamespaces(),
    ),
    statefulSets: await watch<V1StatefulSet>("/apis/apps/v1/statefulsets", () =>
      apps.listStatefulSetForAllNamespaces(),
    ),
    namespaces: await watch<V1Namespace>("/api/v1/namespaces", () => core.listNamespace()),
    hpas: await watch<V2HorizontalPodAutoscaler>("/apis/autoscaling/v2/horizontalpodautoscalers", () =>
      autoscaling.listHorizontalPodAutoscalerForAllNamespaces(),
    ),
    rightsizingPolicies: opts.rightsizing
      ? await watch<RightsizingPolicy & KubernetesObject>(
          `/apis/${apiVersion}/${rightsizingPolicyPlural}`,
          crdList(group, version, rightsizingPolicyPlural),
        )
      : undefined,
    rightsizings: opts.rightsizing
      ? await watch<Rightsizing & KubernetesObject>(
          `/apis/${apiVersion}/${rightsizingCrd.plural}`,
          crdList(group, version, rightsizingCrd.plural),
        )
      : undefined,
  };
  // KEDA may be installed after Napwake: its ScaledObjects are watched as soon as their CRD is served.
  const keda = await optionalCache(
    async () => {
      await crdList("keda.sh", "v1alpha1", "scaledobjects")();
      return watch<KubernetesObject>(
        `/apis/${scaledObjectApiVersion}/scaledobjects`,
        crdList("keda.sh", "v1alpha1", "scaledobjects"),
        { optional: true },
      );
    },
    opts.optionalRetryMs ?? 30_000,
    {
      onMissing: (err) => {
        if (!notInstalled(err)) log?.warn({ err: String(err) }, "cannot list KEDA ScaledObjects; retrying");
      },
      // Any other failure leaves the operator unready until the look answers: carrying on without the
      // ScaledObjects would resume KEDA-scaled workloads without releasing their holds, and KEDA would keep them
      // at zero.
      isAbsent: notInstalled,
    },
  );
  return {
    ...caches,
    get scaledObjects() {
      return keda.current;
    },
    async stop() {
      keda.stop();
      await Promise.all(kept.map((k) => k.stop()));
    },
  };
}

/**
 * Whether a failed look for an optional resource says it is not installed (404): the usual case, quiet at every
 * retry. Anything else (RBAC, the API server) says nothing about it, and is reported.
 */
export function notInstalled(err: unknown): boolean {
  return httpCode(err) === 404;
}
