import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ManagedWorkloadController } from "../../controllers/managedworkload/controller.ts";
import {
  type Clients,
  clusterClients,
  createTestNamespace,
  deleteTestNamespace,
  eventually,
} from "./cluster.ts";
import {
  installManagedWorkloadCrd,
  managedWorkload,
  managedWorkloadApi,
  readManagedWorkload,
  shiftedClock,
  startController,
} from "./operator-support.ts";
import { httpDeployment } from "./workloads.ts";

const minute = 60_000;

/** PromQL activity queries, answered by the harness's Prometheus, keep a workload awake or let it pause. */
describe("PromQL activity queries", () => {
  let clients: Clients;
  let namespace: string;
  let controller: ManagedWorkloadController;
  const clock = shiftedClock();

  beforeAll(async () => {
    clients = clusterClients();
    await installManagedWorkloadCrd(clients);
    namespace = await createTestNamespace(clients, "promql");
    await clients.apps.createNamespacedDeployment({
      namespace,
      body: httpDeployment({ namespace, name: "queue", replicas: 2, cpu: "5m" }),
    });
    controller = await startController(clients, clock);
  });
  afterAll(async () => {
    await controller?.stop();
    await deleteTestNamespace(clients, namespace);
  });

  const replicas = async () =>
    (await clients.apps.readNamespacedDeployment({ namespace, name: "queue" })).spec?.replicas;
  const setQuery = (query: string) =>
    clients.custom.patchNamespacedCustomObject({
      ...managedWorkloadApi,
      namespace,
      name: "queue.deployment",
      body: [{ op: "replace", path: "/spec/idle/activityQueries/0/query", value: query }],
    });

  it("keeps a workload awake while its query says active, and pauses it once the query says idle", {
    timeout: 240_000,
  }, async () => {
    // A queue with 5 messages waiting: active above 1.
    await clients.custom.createNamespacedCustomObject({
      ...managedWorkloadApi,
      namespace,
      body: managedWorkload(namespace, "queue.deployment", "queue", {
        idle: {
          window: "1m",
          cpuThreshold: "50m",
          activityQueries: [{ name: "backlog", query: "vector(5)", threshold: 1 }],
        },
      }),
    });
    await eventually("seen awake", async () =>
      (await readManagedWorkload(clients, namespace, "queue.deployment")).status?.phase === "Awake"
        ? true
        : undefined,
    );
    clock.advance(5 * minute);
    const active = await eventually(
      "activity from the query",
      async () => {
        const mw = await readManagedWorkload(clients, namespace, "queue.deployment");
        return mw.status?.lastActivity?.source === "prometheus" ? mw : undefined;
      },
      120_000,
    );
    expect(active.status?.phase).toBe("Awake");
    expect(await replicas()).toBe(2);

    // The backlog drains: idle from now on; the idle window passes and the workload is paused.
    await setQuery("vector(0)");
    await new Promise((r) => setTimeout(r, 3_000));
    clock.advance(5 * minute);
    await eventually(
      "paused once the query says idle",
      async () => ((await replicas()) === 0 ? true : undefined),
      120_000,
    );
  });
});
