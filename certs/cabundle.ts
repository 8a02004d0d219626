import type { KubernetesObject, KubernetesObjectApi } from "@kubernetes/client-node";
import { fieldManager } from "../api/keys.ts";
import { serverSideApply } from "../kube/apply.ts";
import { httpCode } from "../kube/errors.ts";

export type WebhookConfigurationKind = "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration";

export interface WebhookConfigurationRef {
  kind: WebhookConfigurationKind;
  name: string;
}

export interface WebhookConfigurationLike {
  webhooks?: { name: string; clientConfig: { service?: unknown; url?: string; caBundle?: string } }[];
}

export function caBundleOf(caPem: string): string {
  return Buffer.from(caPem).toString("base64");
}

/** Names of the Service-backed webhooks in `config` (ours; URL-backed ones are not), and whether any is stale. */
export function caBundleUpdate(
  config: WebhookConfigurationLike,
  caBundle: string,
): { webhooks: string[]; stale: boolean } {
  const ours = (config.webhooks ?? []).filter((w) => w.clientConfig.service !== undefined);
  return { webhooks: ours.map((w) => w.name), stale: ours.some((w) => w.clientConfig.caBundle !== caBundle) };
}

/**
 * The server-side apply object that sets only caBundle, for every Service-backed webhook of the configuration.
 * Every one, not just the stale ones: fields this manager applied before and leaves out would be removed.
 *
 * The field manager `napwake` must own nothing else in these objects: if something applied the whole
 * configuration as `napwake`, this caBundle-only apply would remove the rest. The manifests (kustomize)
 * own the configurations; napwake owns only the caBundle fields.
 */
export function caBundleApply(ref: WebhookConfigurationRef, webhooks: readonly string[], caBundle: string) {
  return {
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: ref.kind,
    metadata: { name: ref.name },
    webhooks: webhooks.map((name) => ({ name, clientConfig: { caBundle } })),
  } as KubernetesObject;
}

export type CaBundleOutcome = "updated" | "unchanged" | "missing";

/**
 * Injects `caPem` into the caBundle of our webhook configurations; reads first, writes only what differs.
 * A missing configuration (manifests not applied yet) is reported, not created. Safe from every replica:
 * they share the CA, so they converge on the same value.
 */
export async function reconcileCaBundles(
  api: KubernetesObjectApi,
  refs: readonly WebhookConfigurationRef[],
  caPem: string,
): Promise<{ ref: WebhookConfigurationRef; outcome: CaBundleOutcome }[]> {
  const caBundle = caBundleOf(caPem);
  const results: { ref: WebhookConfigurationRef; outcome: CaBundleOutcome }[] = [];
  for (const ref of refs) {
    let config: WebhookConfigurationLike;
    try {
      config = (await api.read({
        apiVersion: "admissionregistration.k8s.io/v1",
        kind: ref.kind,
        metadata: { name: ref.name },
      })) as WebhookConfigurationLike;
    } catch (error) {
      if (httpCode(error) === 404) {
        results.push({ ref, outcome: "missing" });
        continue;
      }
      throw error;
    }
    const update = caBundleUpdate(config, caBundle);
    if (!update.stale) {
      results.push({ ref, outcome: "unchanged" });
      continue;
    }
    // force: caBundle is ours outright, even if a manifest once set it (e.g. to an empty value).
    await serverSideApply(api, [caBundleApply(ref, update.webhooks, caBundle)], fieldManager, {
      force: true,
    });
    results.push({ ref, outcome: "updated" });
  }
  return results;
}
