import { AutoscalingV2Api, type V2HorizontalPodAutoscaler } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { fieldManager, kedaPausedReplicas } from "../../api/keys.ts";
import {
  autoscalersFor,
  decideScaledObjectHold,
  type ScaledObject,
  scaledObjectApiVersion,
  scaledObjectReleaseWrites,
} from "../../controllers/managedworkload/autoscalers.ts";
import { serverSideApply } from "../../kube/apply.ts";
import { type Clients, clusterClients, createTestNamespace, deleteTestNamespace } from "./cluster.ts";
import { cronScaledObject, installKedaCrd, kedaApi, readScaledObject } from "./keda.ts";
import { httpDeployment } from "./workloads.ts";

describe("autoscalers on the local control plane", () => {
  let clients: Clients;
  let autoscaling: AutoscalingV2Api;
  let namespace: string;

  beforeAll(async () => {
    clients = clusterClients();
    autoscaling = clients.kc.makeApiClient(AutoscalingV2Api);
    await installKedaCrd(clients);
    namespace = await createTestNamespace(clients, "autoscalers");
  });
  afterAll(async () => {
    await deleteTestNamespace(clients, namespace);
  });

  const listScaledObjects = async () =>
    (
      (await clients.custom.listNamespacedCustomObject({ ...kedaApi, namespace })) as {
        items: ScaledObject[];
      }
    ).items;
  const readHeld = (name: string) => readScaledObject(clients, namespace, name);

  it("finds the HPA and the KEDA ScaledObject that scale a Deployment, and holds the ScaledObject at zero and releases it", async () => {
    await clients.apps.createNamespacedDeployment({
      namespace,
      body: httpDeployment({ namespace, name: "web", replicas: 2 }),
    });
    await clients.apps.createNamespacedDeployment({
      namespace,
      body: httpDeployment({ namespace, name: "other", replicas: 1 }),
    });
    const hpa = (name: string, target: string): V2HorizontalPodAutoscaler => ({
      metadata: { name },
      spec: {
        scaleTargetRef: { apiVersion: "apps/v1", kind: "Deployment", name: target },
        minReplicas: 1,
        maxReplicas: 4,
        metrics: [
          {
            type: "Resource",
            resource: { name: "cpu", target: { type: "Utilization", averageUtilization: 80 } },
          },
        ],
      },
    });
    await autoscaling.createNamespacedHorizontalPodAutoscaler({ namespace, body: hpa("web-cpu", "web") });
    await autoscaling.createNamespacedHorizontalPodAutoscaler({ namespace, body: hpa("other-cpu", "other") });
    await clients.custom.createNamespacedCustomObject({
      ...kedaApi,
      namespace,
      body: cronScaledObject({ name: "web-queue", target: "web", maxReplicas: 10, desiredReplicas: 3 }),
    });

    const hpas = (await autoscaling.listNamespacedHorizontalPodAutoscaler({ namespace })).items;
    expect(autoscalersFor({ kind: "Deployment", name: "web" }, hpas, await listScaledObjects())).toEqual([
      { kind: "ScaledObject", name: "web-queue", minReplicas: 0, maxReplicas: 10 },
      { kind: "HorizontalPodAutoscaler", name: "web-cpu", minReplicas: 1, maxReplicas: 4 },
    ]);

    const hold = decideScaledObjectHold(await readHeld("web-queue"), true, fieldManager);
    expect(hold.action).toBe("apply");
    if (hold.action !== "apply") return;
    await serverSideApply(clients.objects, [hold.object], fieldManager);
    const held = await readHeld("web-queue");
    expect(held.metadata?.annotations?.[kedaPausedReplicas]).toBe("0");
    // KEDA's schema and the rest of the ScaledObject are untouched.
    expect(held.spec?.maxReplicaCount).toBe(10);
    expect(decideScaledObjectHold(held, true, fieldManager).action).toBe("none");

    const release = decideScaledObjectHold(held, false, fieldManager);
    expect(release.action).toBe("apply");
    if (release.action !== "apply") return;
    await serverSideApply(clients.objects, [release.object], fieldManager);
    const released = await readHeld("web-queue");
    expect(released.metadata?.annotations?.[kedaPausedReplicas]).toBeUndefined();
    expect(released.spec?.scaleTargetRef?.name).toBe("web");
  });

  it("leaves a paused-replicas annotation someone else set", async () => {
    await clients.custom.createNamespacedCustomObject({
      ...kedaApi,
      namespace,
      body: {
        apiVersion: scaledObjectApiVersion,
        kind: "ScaledObject",
        metadata: { name: "held-by-hand", annotations: { [kedaPausedReplicas]: "2" } },
        spec: {
          scaleTargetRef: { name: "other" },
          triggers: [{ type: "cpu", metricType: "Utilization", metadata: { value: "50" } }],
        },
      },
    });
    const so = await readHeld("held-by-hand");
    expect(decideScaledObjectHold(so, true, fieldManager)).toMatchObject({
      action: "none",
      reason: expect.stringMatching(/held at 2 replicas by someone else/),
    });
    expect(decideScaledObjectHold(so, false, fieldManager).action).toBe("none");
    // The release every pause makes as it ends, whatever its cache shows: nothing of someone else's changes.
    const [release] = scaledObjectReleaseWrites([so]);
    if (!release) throw new Error("no release");
    await serverSideApply(clients.objects, [release.object], fieldManager);
    const after = await readHeld("held-by-hand");
    expect(after.metadata?.annotations?.[kedaPausedReplicas]).toBe("2");
    expect(after.spec).toEqual(so.spec);
    const ours = after.metadata?.managedFields?.filter((entry) => entry.manager === fieldManager) ?? [];
    expect(ours.flatMap((entry) => Object.keys((entry.fieldsV1 as object | undefined) ?? {}))).toEqual([]);
  });
});
