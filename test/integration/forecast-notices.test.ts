import { EventsV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { ManagedWorkloadController } from "../../controllers/managedworkload/controller.ts";
import type { EventsClient } from "../../kube/events.ts";
import {
  type Clients,
  clusterClients,
  createTestNamespace,
  deleteTestNamespace,
  eventually,
} from "./cluster.ts";
import {
  createManagedWorkloadWithStatus,
  installManagedWorkloadCrd,
  managedWorkload,
  realWrites,
  shiftedClock,
  startController,
} from "./operator-support.ts";
import { httpDeployment } from "./workloads.ts";

/**
 * The API server's Events, except that the first `ForecastStateDiscarded` Event in `namespace` is refused.
 * Only `namespace` is counted: the controller also reconciles what other test files left behind.
 */
function refusingFirstDiscarded(clients: Clients, namespace: string) {
  const real = clients.kc.makeApiClient(EventsV1Api);
  const attempts: string[] = [];
  const client: EventsClient = {
    createNamespacedEvent: async (request) => {
      if (request.namespace !== namespace) return real.createNamespacedEvent(request);
      const reason = request.body.reason ?? "";
      attempts.push(reason);
      if (reason === "ForecastStateDiscarded" && attempts.filter((r) => r === reason).length === 1) {
        throw new Error("the Events API is unavailable (injected)");
      }
      return real.createNamespacedEvent(request);
    },
  };
  return { client, attempts };
}

describe("forecast notices on the real control plane", () => {
  let clients: Clients;
  let namespace: string;
  let controller: ManagedWorkloadController | undefined;
  const events = { client: undefined as EventsClient | undefined, attempts: [] as string[] };

  beforeAll(async () => {
    clients = clusterClients();
    await installManagedWorkloadCrd(clients);
    namespace = await createTestNamespace(clients, "forecast-notices");
    await clients.apps.createNamespacedDeployment({
      namespace,
      body: httpDeployment({ namespace, name: "web", replicas: 1, cpu: "100m" }),
    });
    await createManagedWorkloadWithStatus(
      clients,
      managedWorkload(namespace, "web.deployment", "web", { idle: { window: "30m" } }),
      { prediction: { phase: "active-daily", confidence: 0.9, state: "{not json" } },
    );
    const refusing = refusingFirstDiscarded(clients, namespace);
    Object.assign(events, refusing);
    controller = await startController(clients, shiftedClock(), realWrites(clients), refusing.client);
  });
  afterAll(async () => {
    await controller?.stop();
    await deleteTestNamespace(clients, namespace);
  });

  it("sends a notice whose Event was refused on a later reconcile", async () => {
    const discarded = await eventually("the ForecastStateDiscarded Event", async () => {
      const list = await clients.kc.makeApiClient(EventsV1Api).listNamespacedEvent({ namespace });
      return list.items.find((e) => e.reason === "ForecastStateDiscarded");
    });
    expect(discarded.note).toMatch(/could not be read .*learning again from now/);
    expect(events.attempts.filter((r) => r === "ForecastStateDiscarded")).toHaveLength(2);
  });
});
