/**
 * Napwake's one binary. `napwake operator [flags]` runs the controllers (leader-elected when asked), the
 * admission webhooks (every replica) and a health endpoint. Configuration is parsed once here and passed down.
 */
import { readFile } from "node:fs/promises";
import { createServer } from "node:http";
import { setTimeout as sleep } from "node:timers/promises";
import {
  AppsV1Api,
  AuthenticationV1Api,
  AuthorizationV1Api,
  CoordinationV1Api,
  CoreV1Api,
  CustomObjectsApi,
  EventsV1Api,
  KubeConfig,
  KubernetesObjectApi,
} from "@kubernetes/client-node";
import { pino } from "pino";
import { fieldManager } from "../api/keys.ts";
import { type Caches, startCaches } from "../controllers/caches.ts";
import { startManagedWorkloadController } from "../controllers/managedworkload/controller.ts";
import { ForecastBook } from "../controllers/managedworkload/forecasting.ts";
import { activityHistoryReader } from "../controllers/managedworkload/history-reader.ts";
import { activityMeter } from "../controllers/managedworkload/measure.ts";
import { clusterWrites } from "../controllers/managedworkload/writes.ts";
import { startOptInController } from "../controllers/optin/controller.ts";
import { startRightsizingController } from "../controllers/rightsizing/controller.ts";
import { rightsizingMetrics } from "../controllers/rightsizing/metrics.ts";
import { rightsizingWrites } from "../controllers/rightsizing/writes.ts";
import { systemClock } from "../kube/clock.ts";
import { EventRecorder } from "../kube/events.ts";
import { LeaderElector } from "../kube/leader-election.ts";
import { listen, reportLaterErrors } from "../kube/listen.ts";
import { countForecastPhases, countPhases, createMetrics } from "../kube/metrics.ts";
import { subjectAccessReviewAuthorizer, tokenReviewAuthenticator } from "../kube/metrics-auth.ts";
import { createMetricsServer, type MetricsServer } from "../kube/metrics-server.ts";
import { inPlaceResizeAvailable } from "../kube/resize-support.ts";
import { defaultConfig } from "../rightsizing/index.ts";
import { prometheusClient } from "../rightsizing/prometheus-client.ts";
import { defaultUsageSourceConfig } from "../rightsizing/usage-source.ts";
import type { KubeObject } from "../webhook/admission.ts";
import { cachedOwnerLookup } from "../webhook/owners.ts";
import { ConfigError, type OperatorConfig, parseOperatorConfig } from "./operator-config.ts";
import { parseRightsizingConfig } from "./rightsizing-config.ts";
import { ownUsername, type RunningWebhooks, startWebhooks } from "./webhooks.ts";
import { type Stoppable, whileLeading } from "./while-leading.ts";

const usage = `usage: napwake operator [flags]

  --namespace NS                  namespace Napwake runs in (env POD_NAMESPACE; default napwake-system)
  --pod-name NAME                 this replica (env POD_NAME, else HOSTNAME lower-cased)
  --kubeconfig FILE               outside a cluster: the kubeconfig to use
  --leader-elect                  only the holder of the Lease reconciles
  --lease-name NAME               default napwake-operator
  --max-concurrent-reconciles N   default 8, at least 2 (one is kept for wakes)
  --check-interval DURATION       how often an awake workload's activity is measured (default 30s, 1s..1h)
  --paused-check-interval DUR     how often a paused workload is looked at (default 5m, 1s..1h)
  --prometheus-url URL            Prometheus-compatible API for activity queries, the activity history new
                                  forecasts start from, and rightsizing
  --forecast-time-zone ZONE       the IANA time zone whose clock forecast seasons follow where a
                                  ManagedWorkload's spec.forecast.timeZone is unset (default UTC)
  --health-port PORT              /healthz and /readyz on every interface (default 8081; 0 turns it off); the
                                  health, metrics and webhook ports must differ
  --metrics-port PORT             HTTPS /metrics for tokens allowed to get it (default 8443; 0 turns it off);
                                  it serves the webhooks' certificate, so it needs --webhook-port too
  --dry-run                       decide and record, never scale
  --log-level LEVEL               trace, debug, info, warn, error, fatal or silent (env LOG_LEVEL; default info)
  --webhook-port PORT             admission webhooks, served by every replica (default 9443; 0 turns them off,
                                  with --metrics-port=0)
  --webhook-host IP               address the webhooks and /metrics listen on (default ::, every interface:
                                  IPv6 and IPv4, or IPv4 alone where the node has no IPv6)
  --webhook-service NAME          the Service in front of the webhooks, in --namespace (default napwake-webhook)
  --webhook-configuration NAME    our Mutating/ValidatingWebhookConfiguration (default napwake)
  --cert-source self|cert-manager self: a CA in the Secret napwake-webhook-ca and caBundle injection (default);
                                  cert-manager: tls.crt/tls.key from --cert-dir, reloaded when they change
  --cert-dir DIR                  default /etc/napwake/tls
  --no-rightsizing                no rightsizing recommendations (they run whenever --prometheus-url is set;
                                  the next three flags need them)
  --rightsizing-interval DUR      how often new usage is read and recommendations renewed (default 1h, 1m..24h)
  --rightsizing-cpu-mode MODE     cluster default for CPU: off, audit or auto-patch (policies and annotations win)
  --rightsizing-memory-mode MODE  cluster default for memory
  --prometheus-cluster-label L=V  only series with this label value (one Prometheus for several clusters), for
                                  rightsizing and the activity history alike
  --rightsizing-config FILE       metric and label names (also for the activity history), lookback, step and
                                  recommender parameters (YAML)
  --shutdown-delay DURATION       on SIGTERM, keep serving webhooks this long after /readyz turns unready, so
                                  the API server stops sending admission calls here first (default 5s, at most 10s)
`;

async function readConfigFile(file: string): Promise<string> {
  try {
    return await readFile(file, "utf8");
  } catch (err) {
    throw new ConfigError(`--rightsizing-config: cannot read ${file}: ${(err as Error).message}`);
  }
}

async function runOperator(config: OperatorConfig): Promise<void> {
  const file = config.rightsizing.configFile;
  const rightsizingFile = file
    ? parseRightsizingConfig(await readConfigFile(file), file)
    : { usage: defaultUsageSourceConfig, recommender: defaultConfig };
  // One description of the cluster's metrics (names, labels, cluster label) serves rightsizing and activity history.
  const promql = {
    ...rightsizingFile.usage.promql,
    ...(config.rightsizing.cluster ? { cluster: config.rightsizing.cluster } : {}),
  };
  const log = pino({ level: config.logLevel, base: { pod: config.podName } });
  // Handled from the start: as a container's PID 1, a signal without a handler is dropped, and a replica still
  // starting (caches retrying a list RBAC or a missing CRD refuses) would wait out its grace period. Nothing
  // runs yet that must finish, so it exits at once; once started, the full shutdown runs.
  let onSignal = (signal: string): void => {
    log.info({ signal }, "stopped while starting");
    process.exit(0);
  };
  process.once("SIGTERM", () => onSignal("SIGTERM"));
  process.once("SIGINT", () => onSignal("SIGINT"));
  const kc = new KubeConfig();
  if (config.kubeconfig) kc.loadFromFile(config.kubeconfig);
  else kc.loadFromDefault();

  // Set once every cache has synced: the webhooks' owner lookup throws (fails open) until then.
  let synced: Caches | undefined;
  let webhooks: RunningWebhooks | undefined;
  let stopping = false;
  const ready = () => !stopping && synced !== undefined && (webhooks?.isReady() ?? true);
  const health = createServer((req, res) => {
    const ok = req.url === "/healthz" || (req.url === "/readyz" && ready());
    res.writeHead(ok ? 200 : 503, { "content-type": "text/plain" }).end(ok ? "ok\n" : "not ready\n");
  });
  if (config.healthPort > 0) {
    await listen(health, config.healthPort).catch((err: Error) => {
      throw new Error(`--health-port=${config.healthPort}: cannot listen: ${err.message}`);
    });
    reportLaterErrors(health, (err) => log.error({ err }, "health server: cannot accept connections"));
  }

  // Served before the caches sync, so a replica stuck on a list that keeps failing still shows its process and
  // webhook metrics; the workload counts appear once the caches have synced.
  const metrics = createMetrics({
    workloadsByPhase: () => synced && countPhases(synced.managedWorkloads.cache.list()),
    workloadsByForecastPhase: () => synced && countForecastPhases(synced.managedWorkloads.cache.list()),
  });
  if (config.webhooks.port > 0) {
    webhooks = await startWebhooks({
      config: config.webhooks,
      namespace: config.namespace,
      kc,
      lookup: cachedOwnerLookup(
        (namespace) => synced?.managedWorkloads.cache.list(namespace) as KubeObject[] | undefined,
      ),
      operatorUsername: await ownUsername(kc, config.namespace, log),
      ready: () => synced !== undefined,
      log,
      clock: systemClock,
      metrics,
    });
  }
  let metricsServer: MetricsServer | undefined;
  if (webhooks && config.metricsPort > 0) {
    metricsServer = createMetricsServer({
      metrics,
      certificates: webhooks.certificates,
      authenticator: tokenReviewAuthenticator(kc.makeApiClient(AuthenticationV1Api)),
      authorizer: subjectAccessReviewAuthorizer(kc.makeApiClient(AuthorizationV1Api)),
      logger: log,
    });
    await metricsServer.listen(config.webhooks.host, config.metricsPort);
  }
  const caches = await startCaches(kc, { rightsizing: config.rightsizing.enabled, log });
  synced = caches;
  const writes = clusterWrites({
    apps: kc.makeApiClient(AppsV1Api),
    custom: kc.makeApiClient(CustomObjectsApi),
    objects: KubernetesObjectApi.makeApiClient(kc),
    fieldManager,
  });
  const events = new EventRecorder({
    client: kc.makeApiClient(EventsV1Api),
    reportingInstance: config.podName,
    log,
  });

  // Made once: prom-client refuses a metric registered twice, and a replica may lead more than once.
  const rightsizingMeter = config.rightsizing.enabled ? rightsizingMetrics(metrics.registry) : undefined;
  const lead = async (signal: AbortSignal) => {
    log.info({}, "leading: starting controllers");
    try {
      await whileLeading(signal, startControllers);
    } catch (err) {
      // A replica that cannot run the controllers must not stay up looking healthy: exit, so the failure shows
      // as a restart and another replica leads meanwhile.
      log.error({ err }, "the controllers failed to start or to stop; exiting");
      void shutdown("controllers failed", 1);
    } finally {
      log.info({}, "stopped leading: controllers stopped");
    }
  };
  const startControllers = async (started: (s: Stoppable) => void) => {
    const optIn = startOptInController({
      caches,
      custom: kc.makeApiClient(CustomObjectsApi),
      writes,
      events,
      clock: systemClock,
      fieldManager,
      metrics: metrics.queueMetrics("optin"),
      log,
    });
    started(optIn);
    const managed = await startManagedWorkloadController({
      caches,
      clock: systemClock,
      writes,
      events,
      meter: activityMeter({
        custom: kc.makeApiClient(CustomObjectsApi),
        ...(config.prometheusUrl ? { prometheusUrl: config.prometheusUrl } : {}),
        podMetricsMaxAgeMs: Math.min(10_000, config.checkIntervalMs / 2),
      }),
      settings: {
        operatorNamespace: config.namespace,
        checkIntervalMs: config.checkIntervalMs,
        pausedCheckIntervalMs: config.pausedCheckIntervalMs,
        dryRun: config.dryRun,
      },
      fieldManager,
      maxConcurrentReconciles: config.maxConcurrentReconciles,
      metrics: metrics.queueMetrics("managedworkload"),
      lifecycle: metrics,
      // New engines start from the activity history when there is a Prometheus to read it from.
      forecasts: new ForecastBook(
        { timeZone: config.forecastTimeZone },
        { history: Boolean(config.prometheusUrl) },
      ),
      ...(config.prometheusUrl
        ? {
            history: activityHistoryReader({
              prometheus: prometheusClient({ url: config.prometheusUrl }),
              promql,
            }),
          }
        : {}),
      log,
    });
    started(managed);
    const rightsizing = config.rightsizing.enabled
      ? startRightsizingController({
          caches,
          prometheus: prometheusClient({ url: config.prometheusUrl ?? "" }),
          writes: rightsizingWrites({
            custom: kc.makeApiClient(CustomObjectsApi),
            objects: KubernetesObjectApi.makeApiClient(kc),
            fieldManager,
          }),
          events,
          clock: systemClock,
          settings: {
            operatorNamespace: config.namespace,
            intervalMs: config.rightsizing.intervalMs,
            clusterDefault: config.rightsizing.clusterDefault,
            inPlaceResize: await inPlaceResizeAvailable(kc.makeApiClient(CoreV1Api), log),
            recommender: rightsizingFile.recommender,
            usage: {
              ...rightsizingFile.usage,
              promql,
            },
          },
          queueMetrics: metrics.queueMetrics("rightsizing"),
          ...(rightsizingMeter ? { metrics: rightsizingMeter } : {}),
          log,
        })
      : undefined;
    if (rightsizing) started(rightsizing);
  };

  const stopController = new AbortController();
  let elector: LeaderElector | undefined;
  let leading: Promise<void> = Promise.resolve();
  if (config.leaderElect) {
    elector = new LeaderElector({
      client: kc.makeApiClient(CoordinationV1Api),
      namespace: config.namespace,
      name: config.leaseName,
      identity: config.podName,
      onStartedLeading: lead,
      log,
    });
    elector.start();
  } else {
    leading = lead(stopController.signal);
  }

  let shuttingDown: Promise<void> | undefined;
  async function shutdown(signal: string, exitCode = 0): Promise<void> {
    shuttingDown ??= (async () => {
      log.info({ signal }, "shutting down");
      stopping = true;
      // The controllers first (they finish work in flight), while the webhooks still answer.
      stopController.abort();
      await elector?.stop();
      await leading;
      // /readyz is failing now; give the API server time to stop routing admission calls here.
      if (webhooks && config.shutdownDelayMs > 0) await sleep(config.shutdownDelayMs);
      await metricsServer?.close();
      await webhooks?.stop();
      await caches.stop();
      health.close();
      process.exit(exitCode);
    })();
    return shuttingDown;
  }
  onSignal = (signal) => {
    void shutdown(signal);
  };
}

const [command, ...rest] = process.argv.slice(2);
if (command === "operator" && !rest.includes("--help")) {
  try {
    await runOperator(parseOperatorConfig(rest, process.env));
  } catch (err) {
    process.stderr.write(`napwake operator: ${(err as Error).message}\n`);
    process.exit(err instanceof ConfigError ? 2 : 1);
  }
} else {
  process.stderr.write(usage);
  process.exit(command === undefined || rest.includes("--help") || command === "--help" ? 0 : 2);
}
