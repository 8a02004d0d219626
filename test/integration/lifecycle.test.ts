import { join } from "node:path";
import { AutoscalingV2Api, EventsV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { annotations, kedaPausedReplicas, labels } from "../../api/keys.ts";
import type { ManagedWorkload } from "../../api/managedworkload.ts";
import type { ManagedWorkloadController } from "../../controllers/managedworkload/controller.ts";
import {
  type Clients,
  clusterClients,
  createTestNamespace,
  deleteTestNamespace,
  eventually,
} from "./cluster.ts";
import { installCrd } from "./crds.ts";
import {
  installManagedWorkloadCrd,
  managedWorkload,
  managedWorkloadApi,
  readManagedWorkload,
  requestOnManagedWorkload,
  shiftedClock,
  startController,
} from "./operator-support.ts";
import { httpDeployment } from "./workloads.ts";

const minute = 60_000;
const keda = { group: "keda.sh", version: "v1alpha1", plural: "scaledobjects" };
const names = ["outside-up", "argo", "outside-zero", "ignored", "dry", "keda", "reborn", "hpa", "twice"];

/** The seed page's rules for workloads changed outside Napwake, let go, or in dry-run, on the real control plane. */
describe("the ManagedWorkload lifecycle around outside changes", () => {
  let clients: Clients;
  let ns: string;
  let guarded: string;
  let controller: ManagedWorkloadController;
  const clock = shiftedClock();

  beforeAll(async () => {
    clients = clusterClients();
    await installManagedWorkloadCrd(clients);
    await installCrd(clients, join(clients.info.binDir, "keda-scaledobjects-crd.yaml"));
    ns = await createTestNamespace(clients, "lifecycle");
    guarded = await createTestNamespace(clients, "guarded");
    // Targets first, so metrics-server has their pods' CPU when the cases need it.
    for (const name of names) {
      await clients.apps.createNamespacedDeployment({
        namespace: ns,
        body: httpDeployment({ namespace: ns, name, replicas: 2, cpu: "5m" }),
        // As if Argo CD had created it: its manager owns spec.replicas from the start.
        ...(name === "argo" ? { fieldManager: "argocd-controller" } : {}),
      });
    }
    await clients.apps.createNamespacedDeployment({
      namespace: guarded,
      body: httpDeployment({ namespace: guarded, name: "api", replicas: 2, cpu: "5m" }),
    });
    controller = await startController(clients, clock);
  });
  afterAll(async () => {
    await controller?.stop();
    await deleteTestNamespace(clients, ns);
    await deleteTestNamespace(clients, guarded);
  });

  const deployment = async (namespace: string, name: string) => {
    const d = await clients.apps.readNamespacedDeployment({ namespace, name });
    return { replicas: d.spec?.replicas ?? 0, pausedFrom: d.metadata?.annotations?.[annotations.pausedFrom] };
  };
  const mw = (namespace: string, name: string) =>
    readManagedWorkload(clients, namespace, `${name}.deployment`);
  const manage = async (namespace: string, name: string, spec: Partial<ManagedWorkload["spec"]> = {}) => {
    await clients.custom.createNamespacedCustomObject({
      ...managedWorkloadApi,
      namespace,
      body: managedWorkload(namespace, `${name}.deployment`, name, spec),
    });
    await eventually(`${name} seen`, async () =>
      (await mw(namespace, name)).status?.phase ? true : undefined,
    );
  };
  const pauseIdle = async (namespace: string, name: string) => {
    clock.advance(2 * minute);
    await eventually(
      `${name} paused`,
      async () => ((await deployment(namespace, name)).replicas === 0 ? true : undefined),
      120_000,
    );
  };
  const scaleOutside = (namespace: string, name: string, replicas: number) =>
    clients.apps.patchNamespacedDeploymentScale({
      namespace,
      name,
      body: [{ op: "replace", path: "/spec/replicas", value: replicas }],
    });
  const eventReasons = async (namespace: string, name: string) =>
    (await clients.kc.makeApiClient(EventsV1Api).listNamespacedEvent({ namespace })).items
      .filter((e) => e.regarding?.name === `${name}.deployment`)
      .map((e) => e.reason);
  const condition = async (namespace: string, name: string, type: string) =>
    (await mw(namespace, name)).status?.conditions?.find((c) => c.type === type);
  /** Manages `name`, which a KEDA ScaledObject of the same name scales, once the ScaledObject is reported. */
  const manageWithScaledObject = async (name: string) => {
    await clients.custom.createNamespacedCustomObject({
      ...keda,
      namespace: ns,
      body: {
        apiVersion: "keda.sh/v1alpha1",
        kind: "ScaledObject",
        metadata: { name, namespace: ns },
        spec: {
          scaleTargetRef: { name },
          minReplicaCount: 1,
          maxReplicaCount: 5,
          triggers: [{ type: "cpu", metricType: "Utilization", metadata: { value: "80" } }],
        },
      },
    });
    await manage(ns, name);
    await eventually("the ScaledObject is reported", async () =>
      (await condition(ns, name, "Autoscaled"))?.reason === "ScaledObject" ? true : undefined,
    );
  };

  it("treats a paused workload scaled up outside Napwake as awake", { timeout: 240_000 }, async () => {
    await manage(ns, "outside-up");
    await pauseIdle(ns, "outside-up");
    await scaleOutside(ns, "outside-up", 5);
    await eventually("paused-from forgotten, Awake, activity from the scale-up", async () => {
      const [d, m] = [await deployment(ns, "outside-up"), await mw(ns, "outside-up")];
      return d.replicas === 5 &&
        d.pausedFrom === undefined &&
        m.status?.phase === "Awake" &&
        m.status.lastActivity?.source === "scale-up"
        ? true
        : undefined;
    });
    expect(await eventReasons(ns, "outside-up")).toContain("ScaledOutsideNapwake");
  });

  it("holds off pausing a workload whose pause a sync loop set back", { timeout: 300_000 }, async () => {
    await manage(ns, "argo");
    await pauseIdle(ns, "argo");
    // Napwake's scale to zero took spec.replicas over: that is how a later owner is known to have set it since.
    const fields = (await clients.apps.readNamespacedDeployment({ namespace: ns, name: "argo" })).metadata
      ?.managedFields;
    const ownsReplicas = (manager: string) =>
      fields?.some((f) => f.manager === manager && JSON.stringify(f.fieldsV1 ?? {}).includes('"f:replicas"'));
    expect(ownsReplicas("argocd-controller")).toBe(false);
    // What Argo CD's self-heal does: set spec.replicas back through the main resource, as its own manager.
    await clients.apps.patchNamespacedDeployment({
      namespace: ns,
      name: "argo",
      fieldManager: "argocd-controller",
      body: [{ op: "replace", path: "/spec/replicas", value: 2 }],
    });
    const undone = await eventually("the undone pause is recorded", async () => {
      const m = await mw(ns, "argo");
      return m.status?.pausesUndone?.count === 1 && m.status.phase === "Awake" ? m.status : undefined;
    });
    expect(undone.pausesUndone?.manager).toBe("argocd-controller");
    expect(await eventReasons(ns, "argo")).toContain("PauseUndone");

    clock.advance(10 * minute);
    await eventually("a due pause held off", async () =>
      (await condition(ns, "argo", "Paused"))?.reason === "PauseUndone" ? true : undefined,
    );
    expect(await deployment(ns, "argo")).toEqual({ replicas: 2, pausedFrom: undefined });

    clock.advance(60 * minute);
    await eventually(
      "paused again after the hold-off",
      async () => ((await deployment(ns, "argo")).replicas === 0 ? true : undefined),
      120_000,
    );
    // This pause holds an hour, then Napwake wakes the workload: the sync loop no longer undoes pauses.
    clock.advance(61 * minute);
    await requestOnManagedWorkload(clients, ns, "argo.deployment", "resume", new Date(clock.now()));
    await eventually("woken by Napwake, the record cleared", async () => {
      const [d, m] = [await deployment(ns, "argo"), await mw(ns, "argo")];
      return d.replicas === 2 && m.status?.phase === "Awake" && m.status.pausesUndone === undefined
        ? true
        : undefined;
    });
  });

  it("leaves alone an awake workload scaled to zero outside Napwake", { timeout: 240_000 }, async () => {
    // A long idle window: the shared clock has already moved past this new ManagedWorkload's short one.
    await manage(ns, "outside-zero", { idle: { window: "24h", cpuThreshold: "50m" } });
    await scaleOutside(ns, "outside-zero", 0);
    await eventually("reported as scaled to zero outside Napwake", async () =>
      (await condition(ns, "outside-zero", "Managed"))?.reason === "ScaledToZeroOutside" ? true : undefined,
    );
    clock.advance(10 * minute);
    await new Promise((r) => setTimeout(r, 5_000));
    expect(await deployment(ns, "outside-zero")).toEqual({ replicas: 0, pausedFrom: undefined });
    expect((await mw(ns, "outside-zero")).status?.phase).toBe("Unmanaged");
  });

  it("resumes a paused workload labelled napwake.dev/ignore, then lets it go", {
    timeout: 240_000,
  }, async () => {
    await manage(ns, "ignored");
    await pauseIdle(ns, "ignored");
    await clients.apps.patchNamespacedDeployment({
      namespace: ns,
      name: "ignored",
      body: [{ op: "add", path: `/metadata/labels/${labels.ignore.replace("/", "~1")}`, value: "" }],
    });
    await eventually("back at 2 replicas, let go", async () => {
      const [d, m] = [await deployment(ns, "ignored"), await mw(ns, "ignored")];
      return d.replicas === 2 && d.pausedFrom === undefined && m.status?.phase === "Unmanaged"
        ? true
        : undefined;
    });
    expect((await condition(ns, "ignored", "Managed"))?.reason).toBe("Ignored");
    // The reconciles its own writes queue next find it let go and say nothing more.
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    expect((await eventReasons(ns, "ignored")).filter((reason) => reason === "LetGo")).toHaveLength(1);
  });

  it("resumes a paused workload whose namespace becomes protected, then lets it go", {
    timeout: 240_000,
  }, async () => {
    await manage(guarded, "api");
    await pauseIdle(guarded, "api");
    await clients.core.patchNamespace({
      name: guarded,
      body: [{ op: "add", path: "/metadata/annotations", value: { [annotations.protected]: "true" } }],
    });
    await eventually("back at 2 replicas, protected", async () => {
      const d = await deployment(guarded, "api");
      const managed = await condition(guarded, "api", "Managed");
      return d.replicas === 2 && d.pausedFrom === undefined && managed?.reason === "Protected"
        ? true
        : undefined;
    });
  });

  it("manages a workload again once its namespace is no longer protected", { timeout: 120_000 }, async () => {
    // A workload left alone from the start: nothing about it changes, so only the Namespace's change can tell.
    const shielded = await createTestNamespace(clients, "shielded");
    try {
      await clients.core.patchNamespace({
        name: shielded,
        body: [{ op: "add", path: "/metadata/annotations", value: { [annotations.protected]: "true" } }],
      });
      await clients.apps.createNamespacedDeployment({
        namespace: shielded,
        body: httpDeployment({ namespace: shielded, name: "api", replicas: 1 }),
      });
      // Ready first: its status then stops changing, and no event of its own queues the ManagedWorkload.
      await eventually("api ready", async () =>
        (await clients.apps.readNamespacedDeployment({ namespace: shielded, name: "api" })).status
          ?.readyReplicas === 1
          ? true
          : undefined,
      );
      await manage(shielded, "api");
      await eventually("left alone", async () =>
        (await condition(shielded, "api", "Managed"))?.reason === "Protected" ? true : undefined,
      );
      await clients.core.patchNamespace({
        name: shielded,
        body: [{ op: "remove", path: `/metadata/annotations/${annotations.protected.replace("/", "~1")}` }],
      });
      await eventually("managed again", async () =>
        (await condition(shielded, "api", "Managed"))?.status === "True" ? true : undefined,
      );
    } finally {
      await deleteTestNamespace(clients, shielded);
    }
  });

  it("hands a target to the younger of two ManagedWorkloads once the older one is deleted", {
    timeout: 120_000,
  }, async () => {
    // Two for one target, as when the admission webhook (which refuses the second) was down.
    await manage(ns, "twice");
    await clients.custom.createNamespacedCustomObject({
      ...managedWorkloadApi,
      namespace: ns,
      // Named to sort after the first: created in the same second, the name decides which is older.
      body: managedWorkload(ns, "twice.second", "twice"),
    });
    const second = () => readManagedWorkload(clients, ns, "twice.second");
    await eventually("the second one defers to the first", async () =>
      (await second()).status?.conditions?.find((c) => c.type === "Managed")?.reason === "OwnerConflict"
        ? true
        : undefined,
    );
    // The owner's forecast is the target's; the second one keeps none of its own.
    expect((await readManagedWorkload(clients, ns, "twice.deployment")).status?.prediction).toBeDefined();
    expect((await second()).status?.prediction).toBeUndefined();
    await clients.custom.deleteNamespacedCustomObject({
      ...managedWorkloadApi,
      namespace: ns,
      name: "twice.deployment",
    });
    await eventually("the second one manages it, with a forecast of its own", async () => {
      const status = (await second()).status;
      const managed = status?.conditions?.find((c) => c.type === "Managed")?.status === "True";
      return managed && status?.prediction ? true : undefined;
    });
  });

  it("never pauses a StatefulSet that deletes its volumes when scaled down, and says how to allow it", {
    timeout: 120_000,
  }, async () => {
    const { spec } = httpDeployment({ namespace: ns, name: "vault", replicas: 1, cpu: "5m" });
    await clients.apps.createNamespacedStatefulSet({
      namespace: ns,
      body: {
        metadata: { name: "vault" },
        spec: {
          replicas: 1,
          serviceName: "vault",
          selector: spec?.selector ?? {},
          template: spec?.template ?? {},
          persistentVolumeClaimRetentionPolicy: { whenScaled: "Delete", whenDeleted: "Retain" },
        },
      },
    });
    await clients.custom.createNamespacedCustomObject({
      ...managedWorkloadApi,
      namespace: ns,
      body: managedWorkload(ns, "vault.statefulset", "vault", {
        targetRef: { kind: "StatefulSet", name: "vault" },
      }),
    });
    const managed = () =>
      readManagedWorkload(clients, ns, "vault.statefulset").then((m) =>
        m.status?.conditions?.find((c) => c.type === "Managed"),
      );
    await eventually("left alone", async () =>
      (await managed())?.reason === "DeletesVolumesWhenScaled" ? true : undefined,
    );
    clock.advance(2 * minute);
    await new Promise((resolve) => setTimeout(resolve, 3_000));
    const set = await clients.apps.readNamespacedStatefulSet({ namespace: ns, name: "vault" });
    expect(set.spec?.replicas).toBe(1);
    expect((await managed())?.message).toContain("set whenScaled: Retain");
  });

  it("in dry-run decides to pause but never scales, and adds up the replica-hours held back", {
    timeout: 240_000,
  }, async () => {
    await manage(ns, "dry", { dryRun: true });
    clock.advance(2 * minute);
    await eventually(
      "dry-run would pause",
      async () => ((await mw(ns, "dry")).status?.dryRun?.wouldPauseSince ? true : undefined),
      120_000,
    );
    clock.advance(60 * minute);
    const m = await eventually("an hour of two replicas held back", async () => {
      const held = (await mw(ns, "dry")).status?.dryRun?.heldReplicaHours ?? 0;
      return held >= 1.9 ? held : undefined;
    });
    expect(m).toBeGreaterThanOrEqual(1.9);
    expect(await deployment(ns, "dry")).toEqual({ replicas: 2, pausedFrom: undefined });
    expect(await eventReasons(ns, "dry")).toContain("DryRunPause");
  });

  it("holds a KEDA ScaledObject at zero while paused and releases it on resume", {
    timeout: 240_000,
  }, async () => {
    await manageWithScaledObject("keda");
    await pauseIdle(ns, "keda");
    const held = (await clients.custom.getNamespacedCustomObject({
      ...keda,
      namespace: ns,
      name: "keda",
    })) as {
      metadata: { annotations?: Record<string, string> };
    };
    expect(held.metadata.annotations?.[kedaPausedReplicas]).toBe("0");
    await requestOnManagedWorkload(clients, ns, "keda.deployment", "resume", new Date(clock.now()));
    await eventually("resumed and the ScaledObject released", async () => {
      const so = (await clients.custom.getNamespacedCustomObject({
        ...keda,
        namespace: ns,
        name: "keda",
      })) as {
        metadata: { annotations?: Record<string, string> };
      };
      const d = await deployment(ns, "keda");
      return d.replicas === 2 && so.metadata.annotations?.[kedaPausedReplicas] === undefined
        ? true
        : undefined;
    });
  });

  it("releases its hold on a ScaledObject whose workload was deleted while paused and created again", {
    timeout: 240_000,
  }, async () => {
    const readHold = async () =>
      (
        (await clients.custom.getNamespacedCustomObject({ ...keda, namespace: ns, name: "reborn" })) as {
          metadata: { annotations?: Record<string, string> };
        }
      ).metadata.annotations?.[kedaPausedReplicas];
    await manageWithScaledObject("reborn");
    await pauseIdle(ns, "reborn");
    expect(await readHold()).toBe("0");
    // Deleted while paused, then created again from Git: no paused-from stands behind the hold any more.
    await clients.apps.deleteNamespacedDeployment({ namespace: ns, name: "reborn" });
    await eventually("the target is missed", async () =>
      (await condition(ns, "reborn", "Managed"))?.reason === "TargetNotFound" ? true : undefined,
    );
    await clients.apps.createNamespacedDeployment({
      namespace: ns,
      body: httpDeployment({ namespace: ns, name: "reborn", replicas: 2, cpu: "5m" }),
    });
    await eventually("the hold released", async () => ((await readHold()) === undefined ? true : undefined));
    expect(await eventReasons(ns, "reborn")).toContain("ScaledObjectReleased");
    expect((await deployment(ns, "reborn")).replicas).toBe(2);
  });

  it("reports the HPA that scales the target", async () => {
    await clients.kc.makeApiClient(AutoscalingV2Api).createNamespacedHorizontalPodAutoscaler({
      namespace: ns,
      body: {
        metadata: { name: "hpa" },
        spec: {
          scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: "hpa" },
          minReplicas: 1,
          maxReplicas: 4,
          metrics: [
            {
              type: "Resource",
              resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 80 } },
            },
          ],
        },
      },
    });
    await manage(ns, "hpa");
    const autoscaled = await eventually("the HPA is reported", async () => {
      const c = await condition(ns, "hpa", "Autoscaled");
      return c?.reason === "HorizontalPodAutoscaler" ? c : undefined;
    });
    expect(autoscaled.message).toContain("HorizontalPodAutoscaler hpa");
    expect((await mw(ns, "hpa")).status?.autoscaler).toEqual({
      kind: "HorizontalPodAutoscaler",
      name: "hpa",
    });
  });
});
