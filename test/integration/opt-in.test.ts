import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { annotations, kedaPausedReplicas, labels } from "../../api/keys.ts";
import type { ManagedWorkload } from "../../api/managedworkload.ts";
import type { ManagedWorkloadController } from "../../controllers/managedworkload/controller.ts";
import { serverSideApply } from "../../kube/apply.ts";
import {
  type Clients,
  clusterClients,
  createTestNamespace,
  deleteTestNamespace,
  eventually,
} from "./cluster.ts";
import { cronScaledObject, installKedaCrd, readScaledObject } from "./keda.ts";
import {
  installManagedWorkloadCrd,
  managedWorkloadApi,
  shiftedClock,
  startController,
} from "./operator-support.ts";
import { httpDeployment } from "./workloads.ts";

const minute = 60_000;

describe("opting in with the napwake.dev/managed label", () => {
  let clients: Clients;
  let namespace: string;
  let other: string;
  let controller: ManagedWorkloadController;
  const clock = shiftedClock();

  beforeAll(async () => {
    clients = clusterClients();
    await installManagedWorkloadCrd(clients);
    namespace = await createTestNamespace(clients, "optin");
    other = await createTestNamespace(clients, "optin-ns");
    // KEDA's CRD, so that a resume of a workload nothing manages can be seen to release its ScaledObject.
    await installKedaCrd(clients);
    controller = await startController(clients, clock);
  });
  afterAll(async () => {
    await controller?.stop();
    await deleteTestNamespace(clients, namespace);
    await deleteTestNamespace(clients, other);
  });

  const mws = async (ns: string) =>
    (
      (await clients.custom.listNamespacedCustomObject({
        ...managedWorkloadApi,
        namespace: ns,
      })) as { items: ManagedWorkload[] }
    ).items
      .map((m) => m.metadata.name)
      .sort();
  /** Waits until the ManagedWorkload `name` shows its workload awake: its idle window starts then. */
  const seenAwake = (ns: string, name: string) =>
    eventually(`the ManagedWorkload ${name}, seen awake`, async () => {
      const list = (await clients.custom.listNamespacedCustomObject({
        ...managedWorkloadApi,
        namespace: ns,
      })) as {
        items: ManagedWorkload[];
      };
      return list.items.some((m) => m.metadata.name === name && m.status?.phase === "Awake")
        ? true
        : undefined;
    });
  const label = (value: string | null) => [
    {
      op: value === null ? "remove" : "add",
      path: `/metadata/labels/${labels.managed.replace("/", "~1")}`,
      ...(value === null ? {} : { value }),
    },
  ];

  it("creates ManagedWorkloads for a labelled Deployment and StatefulSet, and removes them when unlabelled", async () => {
    await clients.apps.createNamespacedDeployment({
      namespace,
      body: {
        ...httpDeployment({ namespace, name: "web", replicas: 2 }),
        metadata: { namespace, name: "web", labels: { [labels.managed]: "true" } },
      },
    });
    const web = httpDeployment({ namespace, name: "db", replicas: 1 });
    await clients.apps.createNamespacedStatefulSet({
      namespace,
      body: {
        apiVersion: "apps/v1",
        kind: "StatefulSet",
        metadata: { namespace, name: "db", labels: { [labels.managed]: "true" } },
        spec: {
          serviceName: "db",
          replicas: 1,
          selector: web.spec?.selector ?? { matchLabels: {} },
          template: web.spec?.template ?? {},
        },
      },
    });
    await eventually("both ManagedWorkloads exist", async () => {
      const names = await mws(namespace);
      return names.includes("web.deployment") && names.includes("db.statefulset") ? true : undefined;
    });

    await clients.apps.patchNamespacedStatefulSet({ namespace, name: "db", body: label(null) });
    await eventually("the StatefulSet's ManagedWorkload is gone", async () =>
      (await mws(namespace)).includes("db.statefulset") ? undefined : true,
    );
  });

  /**
   * Waits until the garbage collector follows ManagedWorkloads, which it finds by discovery every 30 s after their
   * CRD is installed: one owned by a ConfigMap is collected with it. Until then an orphaning delete would leave
   * the ownerReference on a ManagedWorkload, and the collector delete it later as garbage.
   */
  const garbageCollectorSeesManagedWorkloads = async () => {
    const owner = await clients.core.createNamespacedConfigMap({
      namespace,
      body: { metadata: { generateName: "gc-probe-" } },
    });
    const name = owner.metadata?.name ?? "";
    await clients.custom.createNamespacedCustomObject({
      ...managedWorkloadApi,
      namespace,
      body: {
        apiVersion: "napwake.dev/v1alpha1",
        kind: "ManagedWorkload",
        metadata: {
          name,
          ownerReferences: [{ apiVersion: "v1", kind: "ConfigMap", name, uid: owner.metadata?.uid ?? "" }],
        },
        spec: { targetRef: { kind: "Deployment", name } },
      },
    });
    await clients.core.deleteNamespacedConfigMap({ namespace, name });
    await eventually(
      "the garbage collector to collect a ManagedWorkload with its owner",
      async () => ((await mws(namespace)).includes(name) ? undefined : true),
      120_000,
    );
  };

  it("owns its ManagedWorkload again once a workload deleted with --cascade=orphan is made again, and lets it go on opt-out", async () => {
    const body = {
      ...httpDeployment({ namespace, name: "remade", replicas: 1 }),
      metadata: { namespace, name: "remade", labels: { [labels.managed]: "true" } },
    };
    const read = () =>
      clients.custom
        .getNamespacedCustomObject({ ...managedWorkloadApi, namespace, name: "remade.deployment" })
        .then(
          (o) => o as ManagedWorkload,
          () => undefined,
        );
    await garbageCollectorSeesManagedWorkloads();
    const first = await clients.apps.createNamespacedDeployment({ namespace, body });
    await eventually("the ManagedWorkload, owned by the Deployment", async () =>
      (await read())?.metadata.ownerReferences?.some((r) => r.uid === first.metadata?.uid) ? true : undefined,
    );
    // As to change a selector: the Deployment goes, what it owns stays, and the garbage collector takes the
    // ownerReferences to it off them.
    await clients.apps.deleteNamespacedDeployment({ namespace, name: "remade", propagationPolicy: "Orphan" });
    await eventually("the Deployment gone, its ManagedWorkload left owned by nothing", async () => {
      const gone = await clients.apps.readNamespacedDeployment({ namespace, name: "remade" }).then(
        () => false,
        () => true,
      );
      const left = await read();
      return gone && left && (left.metadata.ownerReferences ?? []).length === 0 ? true : undefined;
    });
    const second = await clients.apps.createNamespacedDeployment({ namespace, body });
    await eventually("the ManagedWorkload, owned by the Deployment made again", async () =>
      (await read())?.metadata.ownerReferences?.some((r) => r.uid === second.metadata?.uid)
        ? true
        : undefined,
    );
    await clients.apps.patchNamespacedDeployment({ namespace, name: "remade", body: label(null) });
    await eventually("the ManagedWorkload gone once the Deployment opts out", async () =>
      (await read()) ? undefined : true,
    );
  });

  it("manages every workload of a labelled Namespace, and resumes a paused one before letting it go", {
    timeout: 300_000,
  }, async () => {
    await clients.apps.createNamespacedDeployment({
      namespace: other,
      body: httpDeployment({ namespace: other, name: "api", replicas: 3, cpu: "5m" }),
    });
    await clients.core.patchNamespace({
      name: other,
      body: [{ op: "add", path: `/metadata/labels/${labels.managed.replace("/", "~1")}`, value: "true" }],
    });
    // Seen awake first: a workload's idle window starts when Napwake first sees it awake.
    await seenAwake(other, "api.deployment");
    // Opt-in ManagedWorkloads take the CRD default idle window of 30 minutes.
    clock.advance(40 * minute);
    await eventually(
      "the idle Deployment is paused",
      async () => {
        const d = await clients.apps.readNamespacedDeployment({ namespace: other, name: "api" });
        return d.spec?.replicas === 0 && d.metadata?.annotations?.[annotations.pausedFrom] === "3"
          ? true
          : undefined;
      },
      120_000,
    );

    await clients.core.patchNamespace({
      name: other,
      body: [{ op: "remove", path: `/metadata/labels/${labels.managed.replace("/", "~1")}` }],
    });
    const back = await eventually(
      "back at 3 replicas with paused-from gone, and no ManagedWorkload",
      async () => {
        const d = await clients.apps.readNamespacedDeployment({ namespace: other, name: "api" });
        const gone = !(await mws(other)).includes("api.deployment");
        return d.spec?.replicas === 3 &&
          d.metadata?.annotations?.[annotations.pausedFrom] === undefined &&
          gone
          ? d
          : undefined;
      },
    );
    expect(back.spec?.replicas).toBe(3);
  });

  it("releases Napwake's hold on a ScaledObject when it resumes a workload that is no longer opted in", {
    timeout: 300_000,
  }, async () => {
    const scaledObject = cronScaledObject({
      name: "queue",
      namespace,
      target: "queue",
      maxReplicas: 4,
      desiredReplicas: 2,
    });
    await serverSideApply(clients.objects, [scaledObject], "keda-user");
    await clients.apps.createNamespacedDeployment({
      namespace,
      body: {
        ...httpDeployment({ namespace, name: "queue", replicas: 2, cpu: "5m" }),
        metadata: { namespace, name: "queue", labels: { [labels.managed]: "true" } },
      },
    });
    const readQueue = () => readScaledObject(clients, namespace, "queue");
    await seenAwake(namespace, "queue.deployment");
    clock.advance(40 * minute);
    await eventually(
      "paused, its ScaledObject held at zero by Napwake",
      async () => {
        const d = await clients.apps.readNamespacedDeployment({ namespace, name: "queue" });
        const held = (await readQueue()).metadata?.annotations?.[kedaPausedReplicas] === "0";
        return d.spec?.replicas === 0 && held ? true : undefined;
      },
      120_000,
    );
    await clients.apps.patchNamespacedDeployment({ namespace, name: "queue", body: label(null) });
    const released = await eventually("back at 2 replicas and the ScaledObject released", async () => {
      const d = await clients.apps.readNamespacedDeployment({ namespace, name: "queue" });
      const so = await readQueue();
      const back = d.spec?.replicas === 2 && d.metadata?.annotations?.[annotations.pausedFrom] === undefined;
      return back && so.metadata?.annotations?.[kedaPausedReplicas] === undefined ? so : undefined;
    });
    expect(released.spec?.maxReplicaCount).toBe(4);
  });
});
