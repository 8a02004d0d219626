import { readFile } from "node:fs/promises";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issueCertificate } from "../../certs/pki.ts";
import { serverSideApply } from "../../kube/apply.ts";
import { externalProcessService, harnessFieldManager } from "../cluster/bootstrap.ts";
import { network } from "../cluster/layout.ts";
import {
  type Clients,
  clusterClients,
  createTestNamespace,
  deleteTestNamespace,
  eventually,
} from "./cluster.ts";

interface AdmissionReview {
  request: {
    uid: string;
    name: string;
    namespace: string;
    object: { metadata: { labels?: Record<string, string> } };
  };
}

/** A validating webhook served by a process in the network namespace, dialled by the API server. */
describe("admission webhooks reach processes in the cluster's network namespace", () => {
  let clients: Clients;
  let namespace: string;
  let server: Server;
  const calls: string[] = [];

  beforeAll(async () => {
    clients = clusterClients();
    namespace = await createTestNamespace(clients, "webhook");
    const ca = {
      certPem: await readFile(clients.info.caCert, "utf8"),
      keyPem: await readFile(clients.info.caKey, "utf8"),
    };
    const serving = issueCertificate(ca, {
      commonName: "test-webhook",
      dnsNames: [`test-webhook.${namespace}.svc`],
      usage: "server",
      notBefore: new Date(),
      validForMs: 3600_000,
    });
    server = createServer({ cert: serving.certPem, key: serving.keyPem }, (req, res) => {
      let body = "";
      req.on("data", (c) => {
        body += c;
      });
      req.on("end", () => {
        const review = JSON.parse(body) as AdmissionReview;
        calls.push(review.request.name);
        const reject = review.request.object.metadata.labels?.reject === "yes";
        res.writeHead(200, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            apiVersion: "admission.k8s.io/v1",
            kind: "AdmissionReview",
            response: {
              uid: review.request.uid,
              allowed: !reject,
              ...(reject ? { status: { code: 403, message: "test webhook refuses label reject=yes" } } : {}),
            },
          }),
        );
      });
    });
    await new Promise<void>((resolve) => server.listen(0, network.firstServerIp, resolve));
    const { port } = server.address() as AddressInfo;
    await serverSideApply(
      clients.objects,
      [
        ...externalProcessService({ namespace, name: "test-webhook", ip: network.firstServerIp, port }),
        {
          apiVersion: "admissionregistration.k8s.io/v1",
          kind: "ValidatingWebhookConfiguration",
          metadata: { name: `test-webhook-${namespace}` },
          webhooks: [
            {
              name: "configmaps.test.napwake.dev",
              clientConfig: {
                service: { namespace, name: "test-webhook", port: 443, path: "/validate" },
                caBundle: Buffer.from(ca.certPem).toString("base64"),
              },
              rules: [
                { apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["configmaps"] },
              ],
              namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": namespace } },
              failurePolicy: "Fail",
              sideEffects: "None",
              admissionReviewVersions: ["v1"],
              timeoutSeconds: 5,
            },
          ],
        },
      ],
      harnessFieldManager,
    );
  });

  afterAll(async () => {
    await clients.objects
      .delete({
        apiVersion: "admissionregistration.k8s.io/v1",
        kind: "ValidatingWebhookConfiguration",
        metadata: { name: `test-webhook-${namespace}` },
      })
      .catch(() => undefined);
    await deleteTestNamespace(clients, namespace);
    await new Promise((resolve) => server?.close(resolve));
  });

  it("calls the webhook on a create and enforces its answer", async () => {
    // The API server picks up a new webhook configuration within a moment; retry the first create.
    await eventually("the webhook is called", async () => {
      const name = `ok-${calls.length}-${Date.now()}`;
      await clients.core.createNamespacedConfigMap({
        namespace,
        body: { metadata: { name }, data: { a: "b" } },
      });
      return calls.includes(name) ? true : undefined;
    });
    await expect(
      clients.core.createNamespacedConfigMap({
        namespace,
        body: { metadata: { name: "refused", labels: { reject: "yes" } } },
      }),
    ).rejects.toThrow(/test webhook refuses label reject=yes/);
    expect(calls).toContain("refused");
  });
});
