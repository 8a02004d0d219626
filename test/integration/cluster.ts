import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import {
  AdmissionregistrationV1Api,
  AppsV1Api,
  CoreV1Api,
  CustomObjectsApi,
  DiscoveryV1Api,
  KubeConfig,
  KubernetesObjectApi,
} from "@kubernetes/client-node";
import { inject } from "vitest";
import { kubeWebhookConfigurations } from "../../certs/cabundle.ts";
import { waitFor } from "../cluster/process.ts";

/** Clients for the shared test cluster (see test/cluster/global-setup.ts). */
export function clusterClients() {
  const info = inject("cluster");
  const kc = new KubeConfig();
  kc.loadFromFile(info.kubeconfig);
  return {
    info,
    kc,
    core: kc.makeApiClient(CoreV1Api),
    apps: kc.makeApiClient(AppsV1Api),
    discovery: kc.makeApiClient(DiscoveryV1Api),
    custom: kc.makeApiClient(CustomObjectsApi),
    objects: KubernetesObjectApi.makeApiClient(kc),
    /** Napwake's own reads and patches of webhook configurations (the caBundle). */
    webhookConfigurations: kubeWebhookConfigurations(kc.makeApiClient(AdmissionregistrationV1Api)),
  };
}

export type Clients = ReturnType<typeof clusterClients>;

/** A fresh namespace per test, so tests never see each other's objects. */
export async function createTestNamespace(clients: Clients, prefix = "t"): Promise<string> {
  const name = `${prefix}-${randomBytes(4).toString("hex")}`;
  await clients.core.createNamespace({ body: { metadata: { name } } });
  // The ServiceAccount admission plugin rejects pods until the namespace's default ServiceAccount exists.
  await waitFor(
    async () =>
      (await clients.core.listNamespacedServiceAccount({ namespace: name })).items.length ? true : undefined,
    { what: `default ServiceAccount in ${name}`, timeoutMs: 30_000 },
  );
  return name;
}

export async function deleteTestNamespace(clients: Clients, name: string): Promise<void> {
  await clients.core.deleteNamespace({ name }).catch(() => undefined);
}

export function eventually<T>(
  what: string,
  check: () => Promise<T | undefined>,
  timeoutMs = 60_000,
): Promise<T> {
  return waitFor(check, { what, timeoutMs, intervalMs: 250 });
}

/** A port free on 127.0.0.1 now, for a process the test starts. */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}
