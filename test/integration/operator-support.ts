import { join } from "node:path";
import { AppsV1Api, CustomObjectsApi, EventsV1Api, KubernetesObjectApi } from "@kubernetes/client-node";
import { fieldManager } from "../../api/keys.ts";
import { type ManagedWorkload, managedWorkloadCrd } from "../../api/managedworkload.ts";
import {
  type ManagedWorkloadController,
  startManagedWorkloadController,
} from "../../controllers/managedworkload/controller.ts";
import { activityMeter } from "../../controllers/managedworkload/measure.ts";
import { type ClusterWrites, clusterWrites } from "../../controllers/managedworkload/writes.ts";
import type { Clock } from "../../kube/clock.ts";
import { EventRecorder } from "../../kube/events.ts";
import type { Clients } from "./cluster.ts";
import { installCrd, repoRoot } from "./crds.ts";

/** The real clock moved forward by `offsetMs`, so a test can let an idle window pass without waiting for it. */
export function shiftedClock(): Clock & { advance(ms: number): void } {
  let offsetMs = 0;
  return {
    now: () => Date.now() + offsetMs,
    setTimeout: (fn, ms) => setTimeout(fn, ms),
    clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
    advance(ms) {
      offsetMs += ms;
    },
  };
}

export const quietLog = { info: () => {}, warn: () => {}, error: () => {} };

export async function installManagedWorkloadCrd(clients: Clients): Promise<void> {
  await installCrd(clients, join(repoRoot, "manifests/crds/managedworkload.yaml"));
}

export function realWrites(clients: Clients): ClusterWrites {
  return clusterWrites({
    apps: clients.kc.makeApiClient(AppsV1Api),
    custom: clients.kc.makeApiClient(CustomObjectsApi),
    objects: KubernetesObjectApi.makeApiClient(clients.kc),
    fieldManager,
  });
}

/** Starts the ManagedWorkload controller in this process, against the test cluster. */
export function startController(
  clients: Clients,
  clock: Clock,
  writes: ClusterWrites = realWrites(clients),
): Promise<ManagedWorkloadController> {
  return startManagedWorkloadController({
    kc: clients.kc,
    clock,
    writes,
    events: new EventRecorder({
      client: clients.kc.makeApiClient(EventsV1Api),
      reportingInstance: "test",
      clock,
    }),
    meter: activityMeter({ custom: clients.custom, prometheusUrl: clients.info.prometheusUrl }),
    settings: { operatorNamespace: "napwake-system", checkIntervalMs: 2_000, pausedCheckIntervalMs: 5_000 },
    fieldManager,
    log: quietLog,
  });
}

export function managedWorkload(
  namespace: string,
  name: string,
  target: string,
  spec: Partial<ManagedWorkload["spec"]> = {},
) {
  return {
    apiVersion: managedWorkloadCrd.apiVersion,
    kind: managedWorkloadCrd.kind,
    metadata: { namespace, name },
    spec: {
      targetRef: { kind: "Deployment", name: target },
      idle: { window: "1m", cpuThreshold: "50m" },
      ...spec,
    },
  };
}

export async function readManagedWorkload(
  clients: Clients,
  namespace: string,
  name: string,
): Promise<ManagedWorkload> {
  return (await clients.custom.getNamespacedCustomObject({
    group: managedWorkloadCrd.group,
    version: managedWorkloadCrd.version,
    plural: managedWorkloadCrd.plural,
    namespace,
    name,
  })) as ManagedWorkload;
}
