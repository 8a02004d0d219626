import { request } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type ServiceClient, startServiceClient } from "../cluster/service-client.ts";
import {
  type Clients,
  clusterClients,
  createTestNamespace,
  deleteTestNamespace,
  eventually,
} from "./cluster.ts";
import { httpDeployment, httpService } from "./workloads.ts";

/** GET / on an address; resolves with the pod that answered, or the connection error code. */
function probe(ip: string, port: number): Promise<string> {
  return new Promise((resolve) => {
    const req = request({ host: ip, port, path: "/", timeout: 2_000 }, (res) => {
      let body = "";
      res.on("data", (c) => {
        body += c;
      });
      res.on("end", () => resolve((JSON.parse(body) as { pod: string }).pod));
    });
    req.on("timeout", () => req.destroy(Object.assign(new Error("timeout"), { code: "ETIMEDOUT" })));
    req.on("error", (err: NodeJS.ErrnoException) => resolve(err.code ?? err.message));
    req.end();
  });
}

describe("workloads on the local control plane", () => {
  let clients: Clients;
  let namespace: string;
  let services: ServiceClient;

  beforeAll(async () => {
    clients = clusterClients();
    namespace = await createTestNamespace(clients, "workloads");
    services = await startServiceClient(clients.kc);
  });
  afterAll(async () => {
    await services?.stop();
    await deleteTestNamespace(clients, namespace);
  });

  const readyPods = async (app: string) => {
    const pods = await clients.core.listNamespacedPod({ namespace, labelSelector: `app=${app}` });
    return pods.items.filter(
      (p) =>
        p.status?.phase === "Running" &&
        p.status.conditions?.some((c) => c.type === "Ready" && c.status === "True"),
    );
  };

  it("runs a Deployment's pods Ready on 198.18.x.y, lists them in the EndpointSlice and answers on the wire; scale to zero and back through the scale subresource", async () => {
    await clients.apps.createNamespacedDeployment({
      namespace,
      body: httpDeployment({ namespace, name: "web", replicas: 2 }),
    });
    await clients.core.createNamespacedService({ namespace, body: httpService({ namespace, name: "web" }) });

    const pods = await eventually("two Ready pods", async () => {
      const ready = await readyPods("web");
      return ready.length === 2 ? ready : undefined;
    });
    const ips = pods.map((p) => p.status?.podIP ?? "");
    for (const ip of ips) expect(ip).toMatch(/^198\.18\.\d+\.\d+$/);

    const sliceIps = await eventually("EndpointSlice lists both pods as ready", async () => {
      const slices = await clients.discovery.listNamespacedEndpointSlice({
        namespace,
        labelSelector: "kubernetes.io/service-name=web",
      });
      const ready = slices.items.flatMap((s) =>
        (s.endpoints ?? []).filter((e) => e.conditions?.ready).flatMap((e) => e.addresses),
      );
      return ready.length === 2 ? ready.sort() : undefined;
    });
    expect(sliceIps).toEqual([...ips].sort());

    const names = pods.map((p) => p.metadata?.name);
    for (const ip of ips) {
      expect(names).toContain(
        await eventually(`pod backend on ${ip}`, async () => {
          const answer = await probe(ip, 8080);
          return names.includes(answer) ? answer : undefined;
        }),
      );
    }
    const viaService = await eventually("the Service answers", async () =>
      services.endpoints(namespace, "web", 80).length === 2 ? services.get(namespace, "web", 80) : undefined,
    );
    expect(viaService.status).toBe(200);
    expect(names).toContain(JSON.parse(viaService.body).pod);

    // Scale to zero through the scale subresource, as Napwake will.
    await clients.apps.replaceNamespacedDeploymentScale({
      namespace,
      name: "web",
      body: { metadata: { name: "web", namespace }, spec: { replicas: 0 } },
    });
    const scale = await clients.apps.readNamespacedDeploymentScale({ namespace, name: "web" });
    // The Scale API omits a zero replica count.
    expect(scale.spec?.replicas ?? 0).toBe(0);
    await eventually("pods gone", async () =>
      (await clients.core.listNamespacedPod({ namespace })).items.length === 0 ? true : undefined,
    );
    for (const ip of ips) {
      expect(
        await eventually(`${ip} refuses`, async () =>
          (await probe(ip, 8080)) === "ECONNREFUSED" ? "refused" : undefined,
        ),
      ).toBe("refused");
    }
    await eventually("no ready endpoints", async () =>
      services.endpoints(namespace, "web", 80).length === 0 ? true : undefined,
    );
    await expect(services.get(namespace, "web", 80)).rejects.toThrow(/no ready endpoints/);

    await clients.apps.replaceNamespacedDeploymentScale({
      namespace,
      name: "web",
      body: { metadata: { name: "web", namespace }, spec: { replicas: 1 } },
    });
    const woken = await eventually("the Service answers again after scaling up", async () =>
      services.endpoints(namespace, "web", 80).length === 1 ? services.get(namespace, "web", 80) : undefined,
    );
    expect(woken.status).toBe(200);
    expect(JSON.parse(woken.body).ip).toMatch(/^198\.18\./);
  });
});
