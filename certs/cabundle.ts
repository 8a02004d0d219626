import {
  type AdmissionregistrationV1Api,
  type ConfigurationOptions,
  PatchStrategy,
  setHeaderOptions,
} from "@kubernetes/client-node";
import { fieldManager } from "../api/keys.ts";
import { httpCode } from "../kube/errors.ts";
import { splitCertificates } from "./retired-cas.ts";

export type WebhookConfigurationKind = "MutatingWebhookConfiguration" | "ValidatingWebhookConfiguration";

export interface WebhookConfigurationRef {
  kind: WebhookConfigurationKind;
  name: string;
}

export interface WebhookConfigurationLike {
  metadata?: { managedFields?: { manager?: string; operation?: string }[] };
  webhooks?: { name: string; clientConfig: { service?: unknown; url?: string; caBundle?: string } }[];
}

export type JsonPatchOperation =
  | { op: "test" | "add"; path: string; value: unknown }
  | { op: "remove"; path: string };

/** Reads and patches of our webhook configurations (the API server's, or a test's). */
export interface WebhookConfigurations {
  /** The configuration, or undefined when it does not exist (manifests not applied yet). */
  read(ref: WebhookConfigurationRef): Promise<WebhookConfigurationLike | undefined>;
  /** A JSON patch, written as Napwake's field manager. */
  patch(ref: WebhookConfigurationRef, operations: readonly JsonPatchOperation[]): Promise<void>;
}

export function kubeWebhookConfigurations(api: AdmissionregistrationV1Api): WebhookConfigurations {
  const jsonPatch: ConfigurationOptions = setHeaderOptions("Content-Type", PatchStrategy.JsonPatch);
  return {
    async read(ref) {
      try {
        return ref.kind === "MutatingWebhookConfiguration"
          ? await api.readMutatingWebhookConfiguration({ name: ref.name })
          : await api.readValidatingWebhookConfiguration({ name: ref.name });
      } catch (error) {
        if (httpCode(error) === 404) return undefined;
        throw error;
      }
    },
    async patch(ref, operations) {
      const request = { name: ref.name, body: operations, fieldManager };
      if (ref.kind === "MutatingWebhookConfiguration") {
        await api.patchMutatingWebhookConfiguration(request, jsonPatch);
      } else {
        await api.patchValidatingWebhookConfiguration(request, jsonPatch);
      }
    },
  };
}

export function caBundleOf(caPem: string): string {
  return Buffer.from(caPem).toString("base64");
}

/** Whether a Service-backed webhook of `config` (ours; URL-backed ones are not) lacks `caBundle`. */
export function caBundleStale(config: WebhookConfigurationLike, caBundle: string): boolean {
  return (config.webhooks ?? []).some(
    (w) => w.clientConfig.service !== undefined && w.clientConfig.caBundle !== caBundle,
  );
}

/**
 * The JSON patch that sets caBundle, and nothing else, on every Service-backed webhook of `config`, each guarded by
 * a test of its name at its place. A patch, not a server-side apply: an applier that owns part of a webhook entry
 * keeps the entry alive, so an install applied server-side (Flux, Argo CD with ServerSideApply) could not drop or
 * rename a webhook later. It also drops the server-side apply record Napwake's field manager kept from releases
 * that applied caBundle, which would hold those entries the same way.
 */
export function caBundlePatch(config: WebhookConfigurationLike, caBundle: string): JsonPatchOperation[] {
  const operations: JsonPatchOperation[] = [];
  (config.webhooks ?? []).forEach((webhook, i) => {
    if (webhook.clientConfig.service === undefined) return;
    operations.push(
      { op: "test", path: `/webhooks/${i}/name`, value: webhook.name },
      { op: "test", path: `/webhooks/${i}/clientConfig/service`, value: webhook.clientConfig.service },
      { op: "add", path: `/webhooks/${i}/clientConfig/caBundle`, value: caBundle },
    );
  });
  // Last first, so each index still points at its entry when it is removed.
  for (const i of applyRecordsOfOurs(config).reverse()) {
    operations.push(
      { op: "test", path: `/metadata/managedFields/${i}/manager`, value: fieldManager },
      { op: "test", path: `/metadata/managedFields/${i}/operation`, value: "Apply" },
      { op: "remove", path: `/metadata/managedFields/${i}` },
    );
  }
  return operations;
}

/** Where in managedFields Napwake's field manager kept a server-side apply record (left by earlier releases). */
function applyRecordsOfOurs(config: WebhookConfigurationLike): number[] {
  return (config.metadata?.managedFields ?? []).flatMap((entry, i) =>
    entry.manager === fieldManager && entry.operation === "Apply" ? [i] : [],
  );
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
  api: WebhookConfigurations,
  refs: readonly WebhookConfigurationRef[],
): Promise<ReadConfiguration[]> {
  const read: ReadConfiguration[] = [];
  for (const ref of refs) read.push({ ref, config: await api.read(ref) });
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
  api: WebhookConfigurations,
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
    // An apply record an earlier release left holds the webhook entries until a patch drops it, CA unchanged too.
    if (!caBundleStale(config, caBundle) && applyRecordsOfOurs(config).length === 0) {
      results.push({ ref, outcome: "unchanged" });
      continue;
    }
    // caBundle is ours outright, even if a manifest once set it (e.g. to an empty value).
    await api.patch(ref, caBundlePatch(config, caBundle));
    results.push({ ref, outcome: "updated" });
  }
  return results;
}

/** Injects `caPem` into the caBundle of our webhook configurations: reads them, then `applyCaBundles`. */
export async function reconcileCaBundles(
  api: WebhookConfigurations,
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
  api: WebhookConfigurations,
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
