import { AdmissionregistrationV1Api, type KubernetesObject } from "@kubernetes/client-node";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { fieldManager } from "../../api/keys.ts";
import { caBundleOf, reconcileCaBundles } from "../../certs/cabundle.ts";
import { serverSideApply } from "../../kube/apply.ts";
import { type Clients, clusterClients } from "./cluster.ts";

/**
 * The caBundle Napwake injects must not hold the webhooks it is injected into: an install applied server-side
 * (Flux, Argo CD with ServerSideApply, `kubectl apply --server-side`) drops or renames a webhook in a later release.
 */
const install = "gitops-install";
const pem = (name: string) => `-----BEGIN CERTIFICATE-----\n${name}\n-----END CERTIFICATE-----\n`;

function configuration(name: string, webhooks: readonly string[]): KubernetesObject {
  return {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "ValidatingWebhookConfiguration",
    metadata: { name },
    webhooks: webhooks.map((hook) => ({
      name: `${hook}.gitops.napwake.dev`,
      admissionReviewVersions: ["v1"],
      sideEffects: "None",
      failurePolicy: "Ignore",
      clientConfig: { service: { namespace: "default", name: "napwake-webhook", path: `/${hook}` } },
      rules: [{ apiGroups: [""], apiVersions: ["v1"], operations: ["CREATE"], resources: ["configmaps"] }],
      // Never called: no namespace carries this label.
      namespaceSelector: { matchLabels: { "gitops.napwake.dev/never": "true" } },
    })),
  } as KubernetesObject;
}

describe("the caBundle injection and an install applied server-side", () => {
  let clients: Clients;
  const names: string[] = [];
  const fresh = () => {
    const name = `napwake-gitops-${Date.now().toString(36)}-${names.length}`;
    names.push(name);
    return name;
  };
  const webhooksOf = async (name: string) => {
    const api = clients.kc.makeApiClient(AdmissionregistrationV1Api);
    const live = await api.readValidatingWebhookConfiguration({ name });
    return (live.webhooks ?? []).map((w) => ({ name: w.name, caBundle: w.clientConfig.caBundle }));
  };

  beforeAll(() => {
    clients = clusterClients();
  });

  afterEach(async () => {
    for (const name of names.splice(0)) {
      await clients.objects.delete(configuration(name, [])).catch(() => undefined);
    }
  });

  it("lets a later release of the install drop a webhook Napwake injected a caBundle into", async () => {
    const name = fresh();
    await serverSideApply(clients.objects, [configuration(name, ["a", "b"])], install);
    const refs = [{ kind: "ValidatingWebhookConfiguration" as const, name }];
    expect(
      (await reconcileCaBundles(clients.webhookConfigurations, refs, pem("NEW"))).map((r) => r.outcome),
    ).toEqual(["updated"]);
    await serverSideApply(clients.objects, [configuration(name, ["a"])], install);
    expect(await webhooksOf(name)).toEqual([
      { name: "a.gitops.napwake.dev", caBundle: caBundleOf(pem("NEW")) },
    ]);
  });

  it.each([
    { when: "the CA is the same (the usual upgrade)", older: "NEW" },
    { when: "the CA changed since", older: "OLD" },
  ])(
    "lets it drop one too after an older release applied the caBundle server-side, $when",
    async ({ older: olderCa }) => {
      const name = fresh();
      await serverSideApply(clients.objects, [configuration(name, ["a", "b"])], install);
      // How releases before this one injected it: a server-side apply of the caBundle alone, as Napwake.
      const older = {
        apiVersion: "admissionregistration.k8s.io/v1",
        kind: "ValidatingWebhookConfiguration",
        metadata: { name },
        webhooks: ["a", "b"].map((hook) => ({
          name: `${hook}.gitops.napwake.dev`,
          clientConfig: { caBundle: caBundleOf(pem(olderCa)) },
        })),
      } as KubernetesObject;
      await serverSideApply(clients.objects, [older], fieldManager, { force: true });
      const refs = [{ kind: "ValidatingWebhookConfiguration" as const, name }];
      await reconcileCaBundles(clients.webhookConfigurations, refs, pem("NEW"));
      await serverSideApply(clients.objects, [configuration(name, ["a"])], install);
      expect(await webhooksOf(name)).toEqual([
        { name: "a.gitops.napwake.dev", caBundle: caBundleOf(pem("NEW")) },
      ]);
    },
  );
});
