import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ApiException, type KubernetesObject, type V1Deployment } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serverSideApply } from "../../kube/apply.ts";
import { harnessFieldManager } from "../cluster/bootstrap.ts";
import { network, ports } from "../cluster/layout.ts";
import {
  injectedCaBundle,
  installCrds,
  startOperatorProcess,
  waitForOperatorReady,
  webhookInstall,
} from "../cluster/napwake-install.ts";
import type { RunningProcess } from "../cluster/process.ts";
import {
  type Clients,
  clusterClients,
  createTestNamespace,
  deleteTestNamespace,
  eventually,
  freePort,
} from "./cluster.ts";
import { managedWorkload, managedWorkloadApi } from "./operator-support.ts";

const serviceName = "napwake-webhook";

function deployment(name: string, annotations?: Record<string, string>): V1Deployment {
  return {
    metadata: { name, labels: { app: name }, ...(annotations ? { annotations } : {}) },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: "app", image: "app" }] },
      },
    },
  };
}

/** The API server's message when `write` is refused, or undefined when it was admitted. */
async function refusedWith(write: Promise<unknown>): Promise<string | undefined> {
  try {
    await write;
    return undefined;
  } catch (error) {
    if (!(error instanceof ApiException)) throw error;
    return (JSON.parse(error.body as string) as { message?: string }).message;
  }
}

/**
 * The real operator binary as a child process, its webhooks registered (as the manifests would) for one
 * scoped namespace, so other test files never call it.
 */
describe("the operator process serves its admission webhooks", () => {
  let clients: Clients;
  let namespace: string;
  let scoped: string;
  let configuration: string;
  let healthPort: number;
  let operator: RunningProcess;
  /** The webhook configurations and Service as the manifests would install them, for the scoped namespace. */
  const install = () =>
    webhookInstall({
      namespace,
      service: serviceName,
      configuration,
      ip: network.operatorTestIp,
      port: ports.operatorWebhook,
      excludeNamespaces: [namespace],
      onlyNamespaces: [scoped],
    });

  beforeAll(async () => {
    clients = clusterClients();
    namespace = await createTestNamespace(clients, "operator-process");
    scoped = await createTestNamespace(clients, "operator-scoped");
    configuration = `napwake-${namespace}`;
    await installCrds(clients.kc);
    await serverSideApply(clients.objects, install(), harnessFieldManager);
    healthPort = await freePort();
    operator = startOperatorProcess({
      kubeconfig: clients.info.kubeconfig,
      logDir: await mkdtemp(join(tmpdir(), "napwake-operator-process-")),
      flags: [
        `--namespace=${namespace}`,
        "--pod-name=napwake-operator-process-test",
        `--prometheus-url=${clients.info.prometheusUrl}`,
        `--health-port=${healthPort}`,
        `--webhook-host=${network.operatorTestIp}`,
        `--webhook-port=${ports.operatorWebhook}`,
        `--webhook-service=${serviceName}`,
        `--webhook-configuration=${configuration}`,
        "--cert-source=self",
      ],
    });
  });

  afterAll(async () => {
    await operator?.stop();
    for (const kind of ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"]) {
      await clients.objects
        .delete({ apiVersion: "admissionregistration.k8s.io/v1", kind, metadata: { name: configuration } })
        .catch(() => undefined);
    }
    await deleteTestNamespace(clients, scoped);
    await deleteTestNamespace(clients, namespace);
  });

  it("becomes ready once its caches have synced and a serving certificate is loaded", async () => {
    await waitForOperatorReady(operator, healthPort);
  });

  it("injects the CA from the Secret it shares with other replicas into both configurations", async () => {
    const caBundle = await eventually("the caBundle to be injected", () =>
      injectedCaBundle(clients.kc, configuration),
    );
    const secret = await clients.core.readNamespacedSecret({ namespace, name: "napwake-webhook-ca" });
    expect(caBundle).toBe(secret.data?.["tls.crt"]);
  });

  it("injects the CA again into a configuration deleted and applied again, without waiting for its resync", async () => {
    await eventually("the caBundle to be injected", () => injectedCaBundle(clients.kc, configuration));
    const validating = install().filter((o) => o.kind === "ValidatingWebhookConfiguration");
    await clients.objects.delete(validating[0] as KubernetesObject);
    await serverSideApply(clients.objects, validating, harnessFieldManager);
    // The resync is 5 minutes away: the watch of the configuration brings it in well before this gives up.
    const caBundle = await eventually("the caBundle to be injected again", () =>
      injectedCaBundle(clients.kc, configuration),
    );
    const secret = await clients.core.readNamespacedSecret({ namespace, name: "napwake-webhook-ca" });
    expect(caBundle).toBe(secret.data?.["tls.crt"]);
  });

  it("refuses a malformed napwake annotation in the scoped namespace with the webhook's message", async () => {
    // The API server picks up the new caBundle within a moment: retry until the webhook answers.
    let attempt = 0;
    const message = await eventually("the validating webhook to refuse", () =>
      refusedWith(
        clients.apps.createNamespacedDeployment({
          namespace: scoped,
          body: deployment(`bad-${attempt++}`, { "napwake.dev/paused-from": "abc" }),
        }),
      ),
    );
    expect(message).toMatch(
      new RegExp(
        `^admission webhook "workloads.validate.napwake.dev" denied the request: Napwake refuses Deployment ${scoped}/bad-\\d+: ` +
          'annotation napwake.dev/paused-from="abc" is invalid: it must be a positive integer',
      ),
    );
  });

  it("stamps managed-by on a Deployment a ManagedWorkload targets", async () => {
    await clients.custom.createNamespacedCustomObject({
      ...managedWorkloadApi,
      namespace: scoped,
      body: managedWorkload(scoped, "web.deployment", "web"),
    });
    await clients.apps.createNamespacedDeployment({ namespace: scoped, body: deployment("web") });
    // Each write is admitted afresh: touch the Deployment until the operator's cache has the ManagedWorkload.
    let touch = 0;
    const owner = await eventually("managed-by to be stamped", async () => {
      const updated = await clients.apps.patchNamespacedDeployment({
        namespace: scoped,
        name: "web",
        body: [{ op: "add", path: "/metadata/labels/touch", value: String(touch++) }],
      });
      return updated.metadata?.annotations?.["napwake.dev/managed-by"];
    });
    expect(owner).toBe("web.deployment");
  });

  // Last: it kills the operator.
  it("lets Deployments be created and scaled while the operator is dead (failurePolicy Ignore)", async () => {
    process.kill(operator.pid, "SIGKILL");
    expect(await operator.exited).toBe("SIGKILL");
    const created = await clients.apps.createNamespacedDeployment({
      namespace: scoped,
      body: deployment("while-down"),
    });
    expect(created.metadata?.name).toBe("while-down");
    const scaled = await clients.apps.replaceNamespacedDeploymentScale({
      namespace: scoped,
      name: "while-down",
      body: { metadata: { name: "while-down", namespace: scoped }, spec: { replicas: 3 } },
    });
    expect(scaled.spec?.replicas).toBe(3);
    // Even one carrying napwake metadata: the validating webhook is skipped, not failed closed.
    const annotated = await clients.apps.createNamespacedDeployment({
      namespace: scoped,
      body: deployment("annotated-while-down", { "napwake.dev/paused-from": "2" }),
    });
    expect(annotated.metadata?.annotations?.["napwake.dev/paused-from"]).toBe("2");
  });
});
