/**
 * The admission webhooks as every replica serves them (not only the leader): the serving certificate (our
 * own CA in a Secret, or cert-manager's files), the HTTPS server routing the registry, and, with our own CA,
 * the caBundle reconcile that publishes it in our webhook configurations.
 */
import {
  AdmissionregistrationV1Api,
  AuthenticationV1Api,
  CoreV1Api,
  type KubeConfig,
  type KubernetesObject,
} from "@kubernetes/client-node";
import {
  type CaBundleSource,
  kubeWebhookConfigurations,
  publishCaBundle,
  publishRetryDelayMs,
  type WebhookConfigurationRef,
} from "../certs/cabundle.ts";
import { createCertificateManager, kubeSecretStore } from "../certs/manager.ts";
import { serviceDnsNames } from "../certs/rotation.ts";
import type { ServingCertificates } from "../certs/serving-tls.ts";
import type { Clock } from "../kube/clock.ts";
import { closableInformer, type KeptInformer, keepInformer } from "../kube/informer.ts";
import type { NapwakeMetrics } from "../kube/metrics.ts";
import { fileCertificateSource } from "../webhook/file-certificates.ts";
import { napwakeWebhooks } from "../webhook/registry.ts";
import { createWebhookServer, type Logger } from "../webhook/server.ts";
import type { OwnerLookup } from "../webhook/workloads.ts";
import type { WebhookConfig } from "./operator-config.ts";

/** The Secret holding the CA every replica signs its serving certificate with (--cert-source=self). */
export const caSecretName = "napwake-webhook-ca";
/** The Service in front of the metrics endpoint (manifests/base). */
export const metricsServiceName = "napwake-metrics";
const caBundleResyncMs = 5 * 60_000;
/** A failed caBundle reconcile is tried again this much later, doubling up to the resync. */
const caBundleRetryMs = 5_000;
const certificateRetryMs = 5_000;

export interface RunningWebhooks {
  /** A serving certificate is loaded and the server is not shutting down. */
  isReady(): boolean;
  /** The serving certificate, also valid for the metrics Service, for the metrics server. */
  certificates: ServingCertificates;
  stop(): Promise<void>;
}

export async function startWebhooks(opts: {
  config: WebhookConfig;
  namespace: string;
  kc: KubeConfig;
  lookup: OwnerLookup;
  operatorUsername: string;
  /** The server's own /readyz gate besides its certificate, e.g. "caches synced". */
  ready: () => boolean;
  log: Logger;
  /** Certificates' lifetimes, request durations and the time stamps admission checks are judged by it. */
  clock: Clock;
  metrics?: NapwakeMetrics;
}): Promise<RunningWebhooks> {
  const { config, namespace, kc, log, clock } = opts;
  const now = () => new Date(clock.now());
  const stoppers: (() => void)[] = [];
  let stopped = false;

  const certificates =
    config.certSource === "self"
      ? createCertificateManager({
          secrets: kubeSecretStore(kc.makeApiClient(CoreV1Api)),
          caSecret: { namespace, name: caSecretName },
          // One certificate serves the webhooks and the metrics endpoint.
          dnsNames: [
            ...serviceDnsNames(namespace, config.service),
            ...serviceDnsNames(namespace, metricsServiceName),
          ],
          now,
          logger: log,
        })
      : fileCertificateSource({ dir: config.certDir, logger: log });
  stoppers.push(() => certificates.stop());

  if (config.certSource === "self") {
    const manager = certificates as ReturnType<typeof createCertificateManager>;
    const { reconcile, stop } = caBundleReconciler(kc, config.configuration, manager, log);
    stoppers.push(stop);
    stoppers.push(manager.subscribe(() => void reconcile()));
    // Each resync re-reads the CA Secret and records the replaced CAs in it, publishes the caBundle (the same
    // from every replica), and follows a replaced CA once the caBundles of all our webhooks hold it (see
    // `publishCaBundle`), so every replica serves from the CA in the Secret, never before they trust it.
    const timer = setInterval(() => void reconcile(), caBundleResyncMs);
    stoppers.push(() => clearInterval(timer));
    // A configuration deleted and applied again, or its caBundle reset, is published to at once, not at the
    // resync: until then the API server cannot call the webhooks, and the ManagedWorkload one fails closed.
    stoppers.push(watchConfigurations(kc, config.configuration, () => void reconcile(), log));
  }

  const webhooks = napwakeWebhooks({
    lookup: opts.lookup,
    operatorUsername: opts.operatorUsername,
    now: () => clock.now(),
  });
  const server = createWebhookServer({
    webhooks,
    certificates,
    logger: log,
    ready: opts.ready,
    ...(opts.metrics ? { metrics: opts.metrics.admissionMetrics(webhooks.map((w) => w.name)) } : {}),
  });
  const address = await server.listen(config.host, config.port);
  log.info({ ...address, certSource: config.certSource }, "webhooks: serving");

  // Retried until it works: the server answers nothing (and is not ready) without a certificate.
  void (async () => {
    while (!stopped) {
      try {
        await certificates.start();
        return;
      } catch (error) {
        log.error({ err: error, retryInMs: certificateRetryMs }, "webhooks: no serving certificate yet");
        await new Promise((r) => setTimeout(r, certificateRetryMs));
      }
    }
  })();

  return {
    isReady: () => server.isReady(),
    certificates,
    async stop() {
      stopped = true;
      for (const stop of stoppers) stop();
      await server.close();
    },
  };
}

/**
 * Calls `onChange` whenever one of our two webhook configurations changes: a watch of each by name (so RBAC can
 * limit it to them). Kept running, restarted after failures; returns its stop.
 */
function watchConfigurations(kc: KubeConfig, configuration: string, onChange: () => void, log: Logger) {
  const api = kc.makeApiClient(AdmissionregistrationV1Api);
  const fieldSelector = `metadata.name=${configuration}`;
  const lists = {
    mutatingwebhookconfigurations: () => api.listMutatingWebhookConfiguration({ fieldSelector }),
    validatingwebhookconfigurations: () => api.listValidatingWebhookConfiguration({ fieldSelector }),
  };
  let stopped = false;
  const kept: KeptInformer<KubernetesObject>[] = [];
  for (const [plural, list] of Object.entries(lists)) {
    const path = `/apis/admissionregistration.k8s.io/v1/${plural}?fieldSelector=${encodeURIComponent(fieldSelector)}`;
    void keepInformer(closableInformer<KubernetesObject>(kc, path, list as never), {
      onChange,
      onError: (err) =>
        log.warn({ plural, err: String(err) }, "webhooks: cannot watch our configuration; retrying"),
    }).then((informer) => {
      if (stopped) void informer.stop();
      else kept.push(informer);
    });
  }
  return () => {
    stopped = true;
    for (const informer of kept) void informer.stop();
  };
}

/**
 * Publishes the caBundle in our configurations (see `publishCaBundle`); one run at a time, a call during a run
 * runs once more after it. A failed run (an error, or the CA Secret unread) is logged and tried again after a
 * backoff (5 s doubling up to the resync), or at the next change or resync if sooner: a replica that learned
 * of a replaced CA serves from it only once a publish succeeds.
 */
function caBundleReconciler(
  kc: KubeConfig,
  configuration: string,
  source: CaBundleSource,
  log: Logger,
): { reconcile: () => Promise<void>; stop: () => void } {
  const api = kubeWebhookConfigurations(kc.makeApiClient(AdmissionregistrationV1Api));
  const refs: WebhookConfigurationRef[] = [
    { kind: "MutatingWebhookConfiguration", name: configuration },
    { kind: "ValidatingWebhookConfiguration", name: configuration },
  ];
  let running: Promise<void> | undefined;
  let again = false;
  let failures = 0;
  let retry: NodeJS.Timeout | undefined;
  let stopped = false;
  /** One publish; true when it published (or found nothing to publish to). */
  const once = async (): Promise<boolean> => {
    try {
      const results = await publishCaBundle(api, refs, source);
      for (const { ref, outcome } of results) {
        if (outcome !== "unchanged") log.info({ ...ref, outcome }, "webhooks: caBundle reconciled");
      }
      return results.every((r) => r.outcome !== "skipped");
    } catch (error) {
      log.warn({ err: error }, "webhooks: caBundle reconcile failed");
      return false;
    }
  };
  async function reconcile(): Promise<void> {
    if (stopped) return;
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      let ok: boolean;
      do {
        again = false;
        ok = await once();
      } while (again && !stopped);
      clearTimeout(retry);
      retry = undefined;
      failures = ok ? 0 : failures + 1;
      const delayMs = publishRetryDelayMs(failures, caBundleRetryMs, caBundleResyncMs);
      if (delayMs !== undefined && !stopped) {
        log.info({ retryInMs: delayMs, failures }, "webhooks: caBundle reconcile to be retried");
        retry = setTimeout(() => void reconcile(), delayMs);
      }
    })();
    try {
      await running;
    } finally {
      running = undefined;
    }
  }
  return {
    reconcile,
    stop() {
      stopped = true;
      clearTimeout(retry);
    },
  };
}

/**
 * The username this process writes as, which the mutating webhook recognises as the operator's. Asked of
 * the API server (a SelfSubjectReview), so it is right outside a cluster too; the in-cluster name otherwise.
 */
export async function ownUsername(kc: KubeConfig, namespace: string, log: Logger): Promise<string> {
  const fallback = `system:serviceaccount:${namespace}:napwake-operator`;
  try {
    const review = await kc.makeApiClient(AuthenticationV1Api).createSelfSubjectReview({
      body: { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" },
    });
    return review.status?.userInfo?.username || fallback;
  } catch (error) {
    log.warn(
      { err: error, username: fallback },
      "webhooks: could not ask who we are; assuming the in-cluster name",
    );
    return fallback;
  }
}
