import type { X509Certificate } from "node:crypto";
import { connect } from "node:tls";
import type { V1Deployment } from "@kubernetes/client-node";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reconcileCaBundles, type WebhookConfigurationRef } from "../../certs/cabundle.ts";
import { type CertificateManager, createCertificateManager, kubeSecretStore } from "../../certs/manager.ts";
import { caFromSecret, serviceDnsNames } from "../../certs/rotation.ts";
import { serverSideApply } from "../../kube/apply.ts";
import { napwakeWebhooks } from "../../webhook/registry.ts";
import { createWebhookServer, type WebhookServer } from "../../webhook/server.ts";
import { harnessFieldManager } from "../cluster/bootstrap.ts";
import { webhookInstall } from "../cluster/napwake-install.ts";
import {
  type Clients,
  clusterClients,
  createTestNamespace,
  deleteTestNamespace,
  eventually,
} from "./cluster.ts";

// 198.19.0.10 is test/integration/webhook.test.ts's, .20 webhook-admission.test.ts's.
const serverIp = "198.19.0.21";
const serviceName = "napwake-webhook";
const logger = pino({ level: "silent" });

function manager(clients: Clients, namespace: string, servingValidForMs?: number): CertificateManager {
  return createCertificateManager({
    secrets: kubeSecretStore(clients.core),
    caSecret: { namespace, name: "napwake-webhook-ca" },
    dnsNames: serviceDnsNames(namespace, serviceName),
    servingValidForMs,
    now: () => new Date(),
    logger,
  });
}

/** The certificate the server presents to a new connection, as the API server would dial it (with SNI). */
function servedCertificate(port: number, namespace: string, caPem: string): Promise<X509Certificate> {
  return new Promise((resolve, reject) => {
    const socket = connect({
      host: serverIp,
      port,
      servername: `${serviceName}.${namespace}.svc`,
      ca: caPem,
    });
    socket.on("secureConnect", () => {
      const cert = socket.getPeerX509Certificate();
      socket.end();
      if (cert) resolve(cert);
      else reject(new Error("no peer certificate"));
    });
    socket.on("error", reject);
  });
}

describe("certificate manager on the real API server", () => {
  let clients: Clients;
  let namespace: string;
  let server: WebhookServer | undefined;
  const managers: CertificateManager[] = [];
  const refs: WebhookConfigurationRef[] = [];

  beforeAll(async () => {
    clients = clusterClients();
    namespace = await createTestNamespace(clients, "certs");
  });

  afterAll(async () => {
    for (const ref of refs) {
      await clients.objects
        .delete({
          apiVersion: "admissionregistration.k8s.io/v1",
          kind: ref.kind,
          metadata: { name: ref.name },
        })
        .catch(() => undefined);
    }
    for (const m of managers) m.stop();
    await server?.close();
    await deleteTestNamespace(clients, namespace);
  });

  it("shares one CA between replicas that race to create it", async () => {
    const replicas = [manager(clients, namespace), manager(clients, namespace), manager(clients, namespace)];
    managers.push(...replicas);
    await Promise.all(replicas.map((m) => m.start()));
    const cas = new Set(replicas.map((m) => m.caPem()));
    expect(cas.size).toBe(1);
    const secret = await clients.core.readNamespacedSecret({ namespace, name: "napwake-webhook-ca" });
    expect(secret.type).toBe("kubernetes.io/tls");
    const stored = caFromSecret(secret, new Date());
    expect("ca" in stored && stored.ca.certPem).toBe(replicas[0]?.caPem());
  });

  it("serves a rotated certificate without a restart, and the API server accepts it", async () => {
    // 9 s certificates, renewed every 6 s.
    const certificates = manager(clients, namespace, 9_000);
    managers.push(certificates);
    await certificates.start();
    const caPem = certificates.caPem() ?? "";
    const webhooks = napwakeWebhooks({
      lookup: { ownerOf: (_ns, _kind, name) => (name.startsWith("owned-") ? "the-owner" : undefined) },
      operatorUsername: "system:serviceaccount:napwake-system:napwake-operator",
    });
    // Short keep-alive: the API server must open new connections, which get the current certificate.
    server = createWebhookServer({
      webhooks,
      certificates,
      logger,
      now: () => new Date(),
      keepAliveTimeoutMs: 500,
    });
    const { port } = await server.listen(serverIp, 0);
    refs.push(
      { kind: "MutatingWebhookConfiguration", name: `napwake-${namespace}` },
      { kind: "ValidatingWebhookConfiguration", name: `napwake-${namespace}` },
    );
    await serverSideApply(
      clients.objects,
      webhookInstall({
        namespace,
        service: serviceName,
        configuration: `napwake-${namespace}`,
        ip: serverIp,
        port,
        excludeNamespaces: [],
        onlyNamespaces: [namespace],
      }),
      harnessFieldManager,
    );
    await reconcileCaBundles(clients.objects, refs, caPem);

    const first = await servedCertificate(port, namespace, caPem);
    await eventually("the manager rotates the serving certificate", async () => {
      const served = await servedCertificate(port, namespace, caPem);
      return served.serialNumber !== first.serialNumber ? served : undefined;
    });
    // Once the first certificate has expired, only a rotated one can get a stamp through.
    await eventually("the first certificate expires", async () =>
      Date.now() > first.validToDate.getTime() + 1_000 ? true : undefined,
    );
    let attempt = 0;
    const stamped = await eventually("a Deployment is stamped through a rotated certificate", async () => {
      const body: V1Deployment = {
        metadata: { name: `owned-${attempt++}` },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: "a" } },
          template: { metadata: { labels: { app: "a" } }, spec: { containers: [{ name: "a", image: "a" }] } },
        },
      };
      const created = await clients.apps.createNamespacedDeployment({ namespace, body });
      return created.metadata?.annotations?.["napwake.dev/managed-by"] ? created : undefined;
    });
    expect(stamped.metadata?.annotations?.["napwake.dev/managed-by"]).toBe("the-owner");
    expect((await servedCertificate(port, namespace, caPem)).serialNumber).not.toBe(first.serialNumber);
  });
});
