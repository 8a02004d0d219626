import { appendFileSync } from "node:fs";
import { join } from "node:path";
import { AppsV1Api, CustomObjectsApi, EventsV1Api, KubernetesObjectApi } from "@kubernetes/client-node";
import { annotations, fieldManager } from "../../api/keys.ts";
import { type ManagedWorkload, managedWorkloadCrd } from "../../api/managedworkload.ts";
import { startCaches } from "../../controllers/caches.ts";
import {
  type ManagedWorkloadController,
  startManagedWorkloadController,
} from "../../controllers/managedworkload/controller.ts";
import { ForecastBook } from "../../controllers/managedworkload/forecasting.ts";
import type { ActivityHistoryReader } from "../../controllers/managedworkload/history-reader.ts";
import { activityMeter } from "../../controllers/managedworkload/measure.ts";
import { type ClusterWrites, clusterWrites } from "../../controllers/managedworkload/writes.ts";
import { startOptInController } from "../../controllers/optin/controller.ts";
import type { Clock } from "../../kube/clock.ts";
import { EventRecorder, type EventsClient } from "../../kube/events.ts";
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

/** Silent, unless NAPWAKE_TEST_LOG names a file to append the controllers' log lines to (for debugging). */
export const quietLog = (() => {
  const file = process.env.NAPWAKE_TEST_LOG;
  const write = (level: string) => (obj: object, msg: string) => {
    if (file)
      appendFileSync(file, `${JSON.stringify({ level, msg, ...obj, at: new Date().toISOString() })}\n`);
  };
  return { info: write("info"), warn: write("warn"), error: write("error") };
})();

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

/** Starts the operator's controllers (ManagedWorkload and opt-in) in this process, with caches of their own. */
export async function startController(
  clients: Clients,
  clock: Clock,
  writes: ClusterWrites = realWrites(clients),
  /** Where the ManagedWorkload controller's Events go: the API server unless a test wraps it. */
  eventsClient: EventsClient = clients.kc.makeApiClient(EventsV1Api),
  /** Where new forecast engines read activity history; none unless a test asks. */
  history?: ActivityHistoryReader,
): Promise<ManagedWorkloadController> {
  const caches = await startCaches(clients.kc, { optionalRetryMs: 2_000 });
  const events = new EventRecorder({
    client: clients.kc.makeApiClient(EventsV1Api),
    reportingInstance: "test",
    clock,
  });
  const optIn = startOptInController({
    caches,
    custom: clients.custom,
    writes,
    events,
    clock,
    fieldManager,
    log: quietLog,
  });
  const controller = await startManagedWorkloadController({
    caches,
    clock,
    writes,
    events: new EventRecorder({ client: eventsClient, reportingInstance: "test", clock }),
    meter: activityMeter({
      custom: clients.custom,
      prometheusUrl: clients.info.prometheusUrl,
      podMetricsMaxAgeMs: 1_000,
    }),
    settings: { operatorNamespace: "napwake-system", checkIntervalMs: 2_000, pausedCheckIntervalMs: 5_000 },
    fieldManager,
    forecasts: new ForecastBook({}, { history: history !== undefined }),
    ...(history ? { history } : {}),
    log: quietLog,
  });
  return {
    ...controller,
    async stop() {
      await Promise.all([controller.stop(), optIn.stop()]);
      await caches.stop();
    },
  };
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

/** Where ManagedWorkloads are served, for the custom objects client. */
export const managedWorkloadApi = {
  group: managedWorkloadCrd.group,
  version: managedWorkloadCrd.version,
  plural: managedWorkloadCrd.plural,
};

export async function readManagedWorkload(
  clients: Clients,
  namespace: string,
  name: string,
): Promise<ManagedWorkload> {
  return (await clients.custom.getNamespacedCustomObject({
    ...managedWorkloadApi,
    namespace,
    name,
  })) as ManagedWorkload;
}

/** What `kubectl napwake pause|resume` does: stamps the request, at `at`, on the ManagedWorkload. */
export function requestOnManagedWorkload(
  clients: Clients,
  namespace: string,
  name: string,
  request: "pause" | "resume",
  at: Date,
) {
  const key = request === "pause" ? annotations.pauseRequested : annotations.resumeRequested;
  return clients.custom.patchNamespacedCustomObject({
    ...managedWorkloadApi,
    namespace,
    name,
    body: [{ op: "add", path: "/metadata/annotations", value: { [key]: at.toISOString() } }],
  });
}

/** Creates a ManagedWorkload and gives it `status`, as an operator that ran before would have left it. */
export async function createManagedWorkloadWithStatus(
  clients: Clients,
  body: ReturnType<typeof managedWorkload>,
  status: ManagedWorkload["status"],
): Promise<void> {
  const { namespace, name } = body.metadata;
  const created = (await clients.custom.createNamespacedCustomObject({
    ...managedWorkloadApi,
    namespace,
    body,
  })) as ManagedWorkload;
  await clients.custom.replaceNamespacedCustomObjectStatus({
    ...managedWorkloadApi,
    namespace,
    name,
    body: { ...created, status },
  });
}

/** The status of a workload awake (and so idle, without activity known) since `sinceMs`. */
export function awakeSince(sinceMs: number): NonNullable<ManagedWorkload["status"]> {
  return {
    phase: "Awake",
    conditions: [
      {
        type: "Paused",
        status: "False",
        reason: "Active",
        message: "the workload is awake",
        lastTransitionTime: new Date(sinceMs).toISOString(),
      },
    ],
  };
}
