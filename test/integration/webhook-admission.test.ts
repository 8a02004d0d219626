import { join } from "node:path";
import {
  ApiException,
  AuthenticationV1Api,
  PatchStrategy,
  setHeaderOptions,
  type V1Deployment,
} from "@kubernetes/client-node";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { reconcileCaBundles, type WebhookConfigurationRef } from "../../certs/cabundle.ts";
import { type CertificateManager, createCertificateManager, kubeSecretStore } from "../../certs/manager.ts";
import { serviceDnsNames } from "../../certs/rotation.ts";
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
import { installCrd, repoRoot } from "./crds.ts";

// 198.19.0.10 is test/integration/webhook.test.ts's; certs-manager.test.ts uses .21.
const serverIp = "198.19.0.20";
const serviceName = "napwake-webhook";

function deployment(name: string, opts: { replicas?: number; annotations?: Record<string, string> } = {}) {
  return {
    metadata: { name, ...(opts.annotations ? { annotations: opts.annotations } : {}) },
    spec: {
      replicas: opts.replicas ?? 1,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: "app", image: "app" }] },
      },
    },
  } satisfies V1Deployment;
}

/** The Status the API server refused a request with. */
async function refusal(request: Promise<unknown>): Promise<{ code?: number; message?: string }> {
  try {
    await request;
  } catch (error) {
    if (!(error instanceof ApiException)) throw error;
    const status = JSON.parse(error.body as string) as { code?: number; message?: string };
    return { code: status.code, message: status.message };
  }
  throw new Error("the request was admitted");
}

/** The Napwake admission webhooks, served from this process, registered for one test namespace. */
describe("napwake admission webhooks on the real API server", () => {
  let clients: Clients;
  let namespace: string;
  let certificates: CertificateManager;
  let server: WebhookServer;
  let refs: WebhookConfigurationRef[];
  const logger = pino({ level: "silent" });

  beforeAll(async () => {
    clients = clusterClients();
    namespace = await createTestNamespace(clients, "webhook-admission");
    await installCrd(clients, join(repoRoot, "manifests/crds/managedworkload.yaml"));
    // The test's own identity plays the operator, so its scale-to-zero gets paused-from stamped.
    const authentication = clients.kc.makeApiClient(AuthenticationV1Api);
    const review = await authentication.createSelfSubjectReview({
      body: { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" },
    });
    const operatorUsername = review.status?.userInfo?.username ?? "";
    expect(operatorUsername).not.toBe("");

    certificates = createCertificateManager({
      secrets: kubeSecretStore(clients.core),
      caSecret: { namespace, name: "napwake-webhook-ca" },
      dnsNames: serviceDnsNames(namespace, serviceName),
      now: () => new Date(),
      logger,
    });
    await certificates.start();
    const webhooks = napwakeWebhooks({
      lookup: { ownerOf: (_ns, _kind, name) => (name.startsWith("owned-") ? "the-owner" : undefined) },
      operatorUsername,
      now: Date.now,
    });
    server = createWebhookServer({ webhooks, certificates, logger });
    const { port } = await server.listen(serverIp, 0);

    // As the manifests would install them: without a caBundle, which the reconcile injects.
    refs = [
      { kind: "MutatingWebhookConfiguration", name: `napwake-${namespace}` },
      { kind: "ValidatingWebhookConfiguration", name: `napwake-${namespace}` },
    ];
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
  });

  afterAll(async () => {
    for (const ref of refs ?? []) {
      await clients.objects
        .delete({
          apiVersion: "admissionregistration.k8s.io/v1",
          kind: ref.kind,
          metadata: { name: ref.name },
        })
        .catch(() => undefined);
    }
    certificates?.stop();
    await server?.close();
    await deleteTestNamespace(clients, namespace);
  });

  it("injects the caBundle into both configurations, and writes nothing when it is already there", async () => {
    const caPem = certificates.caPem() ?? "";
    const outcomes = async () =>
      (await reconcileCaBundles(clients.webhookConfigurations, refs, caPem)).map((r) => r.outcome);
    expect(await outcomes()).toEqual(["updated", "updated"]);
    const validating = await clients.objects.read({
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingWebhookConfiguration",
      metadata: { name: `napwake-${namespace}` },
    });
    const webhooks = (validating as { webhooks: { clientConfig: { caBundle?: string }; rules: unknown[] }[] })
      .webhooks;
    expect(webhooks.map((w) => w.clientConfig.caBundle)).toEqual([
      Buffer.from(caPem).toString("base64"),
      Buffer.from(caPem).toString("base64"),
      Buffer.from(caPem).toString("base64"),
    ]);
    // The caBundle-only patch left the rest of the configuration alone.
    expect(webhooks.every((w) => w.rules.length === 1)).toBe(true);
    expect(await outcomes()).toEqual(["unchanged", "unchanged"]);
  });

  it("stamps managed-by on a Deployment a ManagedWorkload targets", async () => {
    // The API server picks up a new webhook configuration within a moment: retry the first create.
    let attempt = 0;
    const created = await eventually("the mutating webhook stamps managed-by", async () => {
      const body = await clients.apps.createNamespacedDeployment({
        namespace,
        body: deployment(`owned-${attempt++}`),
      });
      return body.metadata?.annotations?.["napwake.dev/managed-by"] ? body : undefined;
    });
    expect(created.metadata?.annotations?.["napwake.dev/managed-by"]).toBe("the-owner");
  });

  it("removes a stale managed-by from a Deployment no ManagedWorkload targets", async () => {
    const created = await clients.apps.createNamespacedDeployment({
      namespace,
      body: deployment("plain", { annotations: { "napwake.dev/managed-by": "ghost", team: "a" } }),
    });
    expect(created.metadata?.annotations).toEqual({ team: "a" });
  });

  it("refuses a malformed napwake annotation or label with a message naming it and the fix", async () => {
    expect(
      await refusal(
        clients.apps.createNamespacedDeployment({
          namespace,
          body: deployment("bad", { annotations: { "napwake.dev/paused-from": "zero" } }),
        }),
      ),
    ).toEqual({
      code: 422,
      message:
        `admission webhook "workloads.validate.napwake.dev" denied the request: Napwake refuses Deployment ${namespace}/bad: ` +
        'annotation napwake.dev/paused-from="zero" is invalid: it must be a positive integer up to 2147483647 (the ' +
        'replica count to restore on resume). Fix: set it to a value like "3", or remove it.',
    });
    const labelled = deployment("bad-label");
    expect(
      await refusal(
        clients.apps.createNamespacedDeployment({
          namespace,
          body: { ...labelled, metadata: { name: "bad-label", labels: { "napwake.dev/managed": "yes" } } },
        }),
      ),
    ).toMatchObject({
      code: 422,
      message: expect.stringContaining('it must be "true" (opt in) or "false" (opt out)'),
    });
  });

  it("refuses a ManagedWorkload whose forecast follows a time zone the operator does not know, with the fix", async () => {
    const body = {
      apiVersion: "napwake.dev/v1alpha1",
      kind: "ManagedWorkload",
      metadata: { name: "zoned" },
      spec: { targetRef: { kind: "Deployment", name: "zoned" }, forecast: { timeZone: "Europe/Atlantis" } },
    };
    const create = () =>
      clients.custom.createNamespacedCustomObject({
        group: "napwake.dev",
        version: "v1alpha1",
        plural: "managedworkloads",
        namespace,
        body,
      });
    expect(await refusal(create())).toEqual({
      code: 422,
      message:
        `admission webhook "managedworkloads.validate.napwake.dev" denied the request: Napwake refuses ` +
        `ManagedWorkload ${namespace}/zoned: spec.forecast.timeZone: unknown time zone "Europe/Atlantis": use an ` +
        'IANA name such as "Europe/Berlin", "America/New_York" or "UTC"',
    });
    body.spec.forecast.timeZone = "Europe/Berlin";
    await create();
  });

  it("refuses a Namespace label that would opt every workload in it out by a typo, with the fix", async () => {
    const patch = (labels: Record<string, string>) =>
      clients.core.patchNamespace(
        { name: namespace, body: { metadata: { labels } } },
        setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
      );
    expect(await refusal(patch({ "napwake.dev/managed": "True" }))).toMatchObject({
      code: 422,
      message: expect.stringContaining(
        `admission webhook "namespaces.validate.napwake.dev" denied the request: Napwake refuses Namespace ${namespace}: `,
      ),
    });
    // Allowed values pass.
    await patch({ "napwake.dev/managed": "false" });
  });

  it("stamps paused-from in the same write when the operator scales a Deployment to zero", async () => {
    await clients.apps.createNamespacedDeployment({ namespace, body: deployment("sleepy", { replicas: 3 }) });
    const paused = await clients.apps.patchNamespacedDeployment({
      namespace,
      name: "sleepy",
      body: [{ op: "replace", path: "/spec/replicas", value: 0 }],
    });
    expect(paused.spec?.replicas).toBe(0);
    expect(paused.metadata?.annotations?.["napwake.dev/paused-from"]).toBe("3");
  });

  // Last: it stops the server.
  it("lets Deployments be created and scaled while the webhook is down (failurePolicy Ignore)", async () => {
    await server.close();
    const created = await clients.apps.createNamespacedDeployment({
      namespace,
      body: deployment("owned-while-down"),
    });
    expect(created.metadata?.annotations?.["napwake.dev/managed-by"]).toBeUndefined();
    const scaled = await clients.apps.replaceNamespacedDeploymentScale({
      namespace,
      name: "owned-while-down",
      body: { metadata: { name: "owned-while-down", namespace }, spec: { replicas: 4 } },
    });
    expect(scaled.spec?.replicas).toBe(4);
    const patched = await clients.apps.patchNamespacedDeployment({
      namespace,
      name: "owned-while-down",
      body: [{ op: "replace", path: "/spec/replicas", value: 2 }],
    });
    expect(patched.spec?.replicas).toBe(2);
  });
});
