import type { KubernetesObject, KubernetesObjectApi } from "@kubernetes/client-node";
import { fieldManager } from "../api/keys.ts";
import { serverSideApply } from "../kube/apply.ts";
import { httpCode } from "../kube/errors.ts";
import { splitCertificates } from "./retired-cas.ts";

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

/**
 * `missing`: the configuration does not exist (manifests not applied yet). `skipped`: nothing was published,
 * as the certificate manager could not read the CA Secret (its bundle may lack a CA another replica switched to).
 */
export type CaBundleOutcome = "updated" | "unchanged" | "missing" | "skipped";

/** A webhook configuration as read: undefined when it does not exist (manifests not applied yet). */
export interface ReadConfiguration {
  ref: WebhookConfigurationRef;
  config: WebhookConfigurationLike | undefined;
}

export async function readWebhookConfigurations(
  api: KubernetesObjectApi,
  refs: readonly WebhookConfigurationRef[],
): Promise<ReadConfiguration[]> {
  const read: ReadConfiguration[] = [];
  for (const ref of refs) {
    try {
      const config = (await api.read({
        apiVersion: "admissionregistration.k8s.io/v1",
        kind: ref.kind,
        metadata: { name: ref.name },
      })) as WebhookConfigurationLike;
      read.push({ ref, config });
    } catch (error) {
      if (httpCode(error) !== 404) throw error;
      read.push({ ref, config: undefined });
    }
  }
  return read;
}

/** The caBundle of each of our (Service-backed) webhooks in `configs`, each once ("" for none). */
function caBundlesOf(configs: readonly (WebhookConfigurationLike | undefined)[]): string[] {
  const bundles = configs.flatMap((config) =>
    (config?.webhooks ?? []).flatMap((w) =>
      w.clientConfig.service !== undefined ? [w.clientConfig.caBundle ?? ""] : [],
    ),
  );
  return [...new Set(bundles)];
}

const pemsOf = (caBundle: string) => splitCertificates(Buffer.from(caBundle, "base64").toString("utf8"));

/** The PEM certificates the caBundle of any of our (Service-backed) webhooks trusts now, each once. */
export function publishedCas(configs: readonly (WebhookConfigurationLike | undefined)[]): string[] {
  return [...new Set(caBundlesOf(configs).flatMap(pemsOf))];
}

/**
 * The PEM certificates the caBundle of every one of our (Service-backed) webhooks trusts now: only a CA
 * among them may be served from, as the API server checks a webhook's serving certificate against that
 * webhook's caBundle. A caBundle applied to one configuration and not yet (or not at all) to the other
 * trusts a new CA only there, so it is not among them. Compared as written (every replica writes them in
 * one form); none when there is no such webhook.
 */
export function trustedByEveryWebhook(configs: readonly (WebhookConfigurationLike | undefined)[]): string[] {
  const [first, ...others] = caBundlesOf(configs).map(pemsOf);
  return [...new Set(first)].filter((pem) => others.every((pems) => pems.includes(pem)));
}

/**
 * Injects `caPem` into the caBundle of the configurations read; writes only what differs. A missing
 * configuration is reported, not created.
 */
export async function applyCaBundles(
  api: KubernetesObjectApi,
  read: readonly ReadConfiguration[],
  caPem: string,
): Promise<{ ref: WebhookConfigurationRef; outcome: CaBundleOutcome }[]> {
  const caBundle = caBundleOf(caPem);
  const results: { ref: WebhookConfigurationRef; outcome: CaBundleOutcome }[] = [];
  for (const { ref, config } of read) {
    if (!config) {
      results.push({ ref, outcome: "missing" });
      continue;
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

/** Injects `caPem` into the caBundle of our webhook configurations: reads them, then `applyCaBundles`. */
export async function reconcileCaBundles(
  api: KubernetesObjectApi,
  refs: readonly WebhookConfigurationRef[],
  caPem: string,
): Promise<{ ref: WebhookConfigurationRef; outcome: CaBundleOutcome }[]> {
  return applyCaBundles(api, await readWebhookConfigurations(api, refs), caPem);
}

/** What the caBundle reconcile needs of the certificate manager (certs/manager.ts). */
export interface CaBundleSource {
  /**
   * Re-reads the shared CA and records the `published` CAs (those any of our webhooks trusts) as replaced;
   * switches to a replaced CA if `trusted` (the CAs every one of our webhooks trusts) holds it. True when
   * `caBundlePem` is current.
   */
  refresh(published?: readonly string[], trusted?: readonly string[]): Promise<boolean>;
  caBundlePem(): string | undefined;
  /** The caBundle `pem` is published: a replaced CA it holds may be served from now. */
  bundlePublished(pem: string): void;
}

/**
 * One caBundle reconcile of a replica. Reads our configurations; lets the manager re-read the shared CA and
 * record, as replaced, every CA the configurations trust that is no longer the current one (a replica started
 * after a switch learns of the previous CA only there), and switch at once to a replaced CA the caBundle of
 * every one of our webhooks holds already (another replica published it); then publishes the manager's
 * bundle where it differs, and only once that succeeded in both configurations tells the manager, which then
 * switches to a replaced CA the bundle holds: so a replica never serves from a CA the API server does not
 * trust yet. If the publish fails, it keeps serving from the CA it has, and the next reconcile tries again.
 * Safe from every replica: the bundle is computed from the shared CA Secret, so they converge on one value;
 * a replica that could not read the Secret publishes nothing (`skipped`) rather than what it read before.
 * The manager re-reads the CA even when the configurations cannot be read; the read error is thrown after.
 */
export async function publishCaBundle(
  api: KubernetesObjectApi,
  refs: readonly WebhookConfigurationRef[],
  source: CaBundleSource,
): Promise<{ ref: WebhookConfigurationRef; outcome: CaBundleOutcome }[]> {
  let read: ReadConfiguration[] | undefined;
  let current = false;
  try {
    read = await readWebhookConfigurations(api, refs);
  } finally {
    const configs = (read ?? []).map((r) => r.config);
    current = await source.refresh(publishedCas(configs), trustedByEveryWebhook(configs));
  }
  const pem = source.caBundlePem();
  if (!current || pem === undefined) return refs.map((ref) => ({ ref, outcome: "skipped" as const }));
  const results = await applyCaBundles(api, read, pem);
  source.bundlePublished(pem);
  return results;
}

/**
 * How long after its `failures`-th failure in a row the caBundle reconcile tries again, before its resync:
 * `baseMs`, doubled at each further failure, at most `maxMs` (the resync). Undefined after none.
 */
export function publishRetryDelayMs(failures: number, baseMs: number, maxMs: number): number | undefined {
  if (failures < 1) return undefined;
  return Math.min(maxMs, baseMs * 2 ** Math.min(failures - 1, 30));
}
