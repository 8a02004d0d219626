import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { annotations, fieldManager } from "../../api/keys.ts";
import type { ManagedWorkloadController } from "../../controllers/managedworkload/controller.ts";
import type { TargetState } from "../../controllers/managedworkload/observation.ts";
import { StaleTargetError } from "../../controllers/managedworkload/writes.ts";
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
  realWrites,
  requestOnManagedWorkload,
  shiftedClock,
  startController,
} from "./operator-support.ts";
import { httpDeployment } from "./workloads.ts";

const minute = 60_000;

describe("pause and wake on the real control plane", () => {
  let clients: Clients;
  let namespace: string;
  let controller: ManagedWorkloadController | undefined;
  const clock = shiftedClock();

  beforeAll(async () => {
    clients = clusterClients();
    await installManagedWorkloadCrd(clients);
    namespace = await createTestNamespace(clients, "pause");
    controller = await startController(clients, clock);
  });
  afterAll(async () => {
    await controller?.stop();
    await deleteTestNamespace(clients, namespace);
  });

  const replicas = async () =>
    (await clients.apps.readNamespacedDeployment({ namespace, name: "web" })).spec?.replicas;
  const pausedFrom = async () =>
    (await clients.apps.readNamespacedDeployment({ namespace, name: "web" })).metadata?.annotations?.[
      annotations.pausedFrom
    ];

  it("pauses an idle workload to zero, remembering its count, and resumes it to exactly that count", async () => {
    await clients.apps.createNamespacedDeployment({
      namespace,
      body: httpDeployment({ namespace, name: "web", replicas: 3, cpu: "5m" }),
    });
    await clients.custom.createNamespacedCustomObject({
      ...managedWorkloadApi,
      namespace,
      body: managedWorkload(namespace, "web.deployment", "web"),
    });
    const awake = await eventually("the workload is seen awake", async () => {
      const mw = await readManagedWorkload(clients, namespace, "web.deployment");
      return mw.status?.phase === "Awake" ? mw : undefined;
    });
    expect(awake.status?.observedGeneration).toBe(1);

    // Let the idle window pass; pod CPU (5m) is under the threshold (50m) once metrics-server has it.
    clock.advance(2 * minute);
    await eventually(
      "paused to zero with paused-from=3",
      async () => ((await replicas()) === 0 && (await pausedFrom()) === "3" ? true : undefined),
      120_000,
    );
    const paused = await eventually("status says Paused", async () => {
      const mw = await readManagedWorkload(clients, namespace, "web.deployment");
      return mw.status?.phase === "Paused" ? mw : undefined;
    });
    expect(paused.status?.pausedFrom).toBe(3);
    expect(paused.status?.conditions?.find((c) => c.type === "Paused")?.status).toBe("True");
    const events = await clients.kc
      .makeApiClient((await import("@kubernetes/client-node")).EventsV1Api)
      .listNamespacedEvent({ namespace });
    expect(
      events.items.filter((e) => e.reason === "Paused" && e.regarding?.name === "web.deployment"),
    ).toHaveLength(1);

    // kubectl napwake resume: an annotation the next reconcile acts on.
    await requestOnManagedWorkload(clients, namespace, "web.deployment", "resume", new Date(clock.now()));
    await eventually("resumed to exactly 3 with paused-from gone", async () =>
      (await replicas()) === 3 && (await pausedFrom()) === undefined ? true : undefined,
    );
    const resumed = await eventually("status says Awake", async () => {
      const mw = await readManagedWorkload(clients, namespace, "web.deployment");
      return mw.status?.phase === "Awake" ? mw : undefined;
    });
    expect(resumed.status?.pausedFrom).toBeUndefined();
    expect(resumed.status?.lastActivity?.source).toBe("manual");
  });

  it("lets go of a paused workload, resumed to its count, while its ManagedWorkload is held by a finalizer", async () => {
    await clients.apps.createNamespacedDeployment({
      namespace,
      body: httpDeployment({ namespace, name: "held", replicas: 2, cpu: "5m" }),
    });
    const body = managedWorkload(namespace, "held.deployment", "held");
    await clients.custom.createNamespacedCustomObject({
      ...managedWorkloadApi,
      namespace,
      body: { ...body, metadata: { ...body.metadata, finalizers: ["example.com/hold"] } },
    });
    await eventually("the workload is seen awake", async () =>
      (await readManagedWorkload(clients, namespace, "held.deployment")).status?.phase === "Awake"
        ? true
        : undefined,
    );
    clock.advance(2 * minute);
    await eventually(
      "the workload is paused",
      async () =>
        (await readManagedWorkload(clients, namespace, "held.deployment")).status?.phase === "Paused"
          ? true
          : undefined,
      120_000,
    );
    // Another tool's finalizer keeps the ManagedWorkload, being deleted, in the cache: it must let go, as the
    // webhook no longer names it the owner, and not keep pausing what the opt-in controller resumes.
    await clients.custom.deleteNamespacedCustomObject({
      ...managedWorkloadApi,
      namespace,
      name: "held.deployment",
    });
    await eventually("resumed to exactly 2 with paused-from gone", async () => {
      const held = await clients.apps.readNamespacedDeployment({ namespace, name: "held" });
      return held.spec?.replicas === 2 && held.metadata?.annotations?.[annotations.pausedFrom] === undefined
        ? true
        : undefined;
    });
    const managed = await eventually("the ManagedWorkload says it let go", async () => {
      const mw = await readManagedWorkload(clients, namespace, "held.deployment");
      const condition = mw.status?.conditions?.find((c) => c.type === "Managed");
      return condition?.reason === "Deleting" ? condition : undefined;
    });
    expect(managed.status).toBe("False");
    await clients.custom.patchNamespacedCustomObject({
      ...managedWorkloadApi,
      namespace,
      name: "held.deployment",
      body: [{ op: "remove", path: "/metadata/finalizers" }],
    });
  });

  it("never forgets a paused workload's count on a stale view that still shows it awake", async () => {
    // No controller may touch the workload here: the opt-in controller would rightly resume a paused
    // workload that nothing manages.
    await controller?.stop();
    controller = undefined;
    await clients.apps.createNamespacedDeployment({
      namespace,
      body: {
        ...httpDeployment({ namespace, name: "stale", replicas: 0 }),
        metadata: { namespace, name: "stale", annotations: { [annotations.pausedFrom]: "3" } },
      },
    });
    // What a cache that has not seen the scale to zero yet would show: 3 replicas and paused-from=3.
    const staleView: TargetState = {
      kind: "Deployment",
      name: "stale",
      namespace,
      uid: "",
      replicas: 3,
      labels: {},
      annotations: { [annotations.pausedFrom]: "3" },
      managedFields: [],
    };
    await expect(realWrites(clients).forgetPausedFrom(staleView)).rejects.toBeInstanceOf(StaleTargetError);
    const live = await clients.apps.readNamespacedDeployment({ namespace, name: "stale" });
    expect(live.metadata?.annotations?.[annotations.pausedFrom]).toBe("3");
    expect(live.spec?.replicas).toBe(0);
    // The confirmation made before a ScaledObject's hold or release: refused on the stale view, passed on the
    // live one, and it writes nothing. The deployment controller may write the status meanwhile, so the
    // resourceVersion cannot tell; a write by Napwake would show in generation, annotations or managedFields.
    await expect(realWrites(clients).confirmTarget(staleView)).rejects.toBeInstanceOf(StaleTargetError);
    await realWrites(clients).confirmTarget({ ...staleView, replicas: 0 });
    // A view with no paused-from (a pause this cache has not seen yet): the release of a stray hold it would
    // allow is refused while the live workload carries the count.
    await expect(
      realWrites(clients).confirmTarget({ ...staleView, replicas: 0, annotations: {} }),
    ).rejects.toBeInstanceOf(StaleTargetError);
    const after = await clients.apps.readNamespacedDeployment({ namespace, name: "stale" });
    expect(after.metadata?.generation).toBe(live.metadata?.generation);
    expect(after.metadata?.annotations).toEqual(live.metadata?.annotations);
    expect(after.metadata?.managedFields?.map((entry) => entry.manager)).not.toContain(fieldManager);
  });

  it("never pauses a workload whose recorded count was forgotten between the recording and the scale", async () => {
    await controller?.stop();
    controller = undefined;
    await clients.apps.createNamespacedDeployment({
      namespace,
      body: httpDeployment({ namespace, name: "racing", replicas: 3 }),
    });
    const view: TargetState = {
      kind: "Deployment",
      name: "racing",
      namespace,
      uid: "",
      replicas: 3,
      labels: {},
      annotations: {},
      managedFields: [],
    };
    const writes = realWrites(clients);
    await writes.recordPausedFrom(view, 3);
    const recorded = { ...view, annotations: { [annotations.pausedFrom]: "3" } };
    // Opt-out, seeing a count and 3 replicas with nothing managing the workload, forgets the count.
    await writes.forgetPausedFrom(recorded);
    await expect(writes.scale(recorded, 3, 0)).rejects.toBeInstanceOf(StaleTargetError);
    const live = await clients.apps.readNamespacedDeployment({ namespace, name: "racing" });
    expect(live.spec?.replicas).toBe(3);
    // With the count still there, the same scale goes through.
    await writes.recordPausedFrom(view, 3);
    await writes.scale(recorded, 3, 0);
    const paused = await clients.apps.readNamespacedDeployment({ namespace, name: "racing" });
    expect(paused.spec?.replicas).toBe(0);
    expect(paused.metadata?.annotations?.[annotations.pausedFrom]).toBe("3");
  });
});
