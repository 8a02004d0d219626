import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseQuantity } from "../../kube/quantity.ts";
import {
  type Clients,
  clusterClients,
  createTestNamespace,
  deleteTestNamespace,
  eventually,
} from "./cluster.ts";
import { httpDeployment } from "./workloads.ts";

interface PodMetrics {
  metadata: { name: string };
  containers: { name: string; usage: { cpu: string; memory: string } }[];
}

describe("metrics.k8s.io from metrics-server and kwok", () => {
  let clients: Clients;
  let namespace: string;

  beforeAll(async () => {
    clients = clusterClients();
    namespace = await createTestNamespace(clients, "metrics");
  });
  afterAll(() => deleteTestNamespace(clients, namespace));

  const podCpu = async (pod: string): Promise<number | undefined> => {
    const list = (await clients.custom.listNamespacedCustomObject({
      group: "metrics.k8s.io",
      version: "v1beta1",
      namespace,
      plural: "pods",
    })) as { items: PodMetrics[] };
    const usage = list.items.find((m) => m.metadata.name === pod)?.containers[0]?.usage.cpu;
    return usage === undefined ? undefined : parseQuantity(usage);
  };

  it("returns pod CPU that follows the kwok usage annotation", async () => {
    await clients.apps.createNamespacedDeployment({
      namespace,
      body: httpDeployment({ namespace, name: "busy", replicas: 1, cpu: "250m" }),
    });
    const pod = await eventually("a running pod", async () => {
      const pods = await clients.core.listNamespacedPod({ namespace });
      return pods.items.find((p) => p.status?.phase === "Running")?.metadata?.name;
    });
    const first = await eventually(
      "pod metrics near 250m",
      async () => {
        const cpu = await podCpu(pod);
        return cpu !== undefined && Math.abs(cpu - 0.25) < 0.03 ? cpu : undefined;
      },
      120_000,
    );
    expect(first).toBeCloseTo(0.25, 1);

    await clients.core.patchNamespacedPod({
      namespace,
      name: pod,
      body: [{ op: "replace", path: "/metadata/annotations/kwok.x-k8s.io~1usage-cpu", value: "750m" }],
    });
    const second = await eventually(
      "pod metrics follow the annotation to 750m",
      async () => {
        const cpu = await podCpu(pod);
        return cpu !== undefined && Math.abs(cpu - 0.75) < 0.05 ? cpu : undefined;
      },
      120_000,
    );
    expect(second).toBeGreaterThan(0.7);
  });
});
