import { isIP } from "node:net";
import { parseArgs } from "node:util";
import { parseDuration } from "../api/managedworkload.ts";
import {
  isRightsizingMode,
  type RightsizingMode,
  type RightsizingResource,
  rightsizingModes,
} from "../api/rightsizingpolicy.ts";
import { calendarOf } from "../forecast/calendar.ts";
import { everyInterface } from "../kube/listen.ts";

/** Everything the operator is told at start, parsed once here and passed down. */
export interface OperatorConfig {
  namespace: string;
  podName: string;
  kubeconfig: string | undefined;
  leaderElect: boolean;
  leaseName: string;
  maxConcurrentReconciles: number;
  checkIntervalMs: number;
  pausedCheckIntervalMs: number;
  /**
   * On SIGTERM, how long to keep serving webhooks after /readyz turns unready, so the API server stops
   * routing admission calls here before the server closes.
   */
  shutdownDelayMs: number;
  prometheusUrl: string | undefined;
  /** The time zone forecast seasons follow where spec.forecast.timeZone is unset. */
  forecastTimeZone: string;
  healthPort: number;
  /** HTTPS /metrics, behind TokenReview and SubjectAccessReview; 0 turns it off. */
  metricsPort: number;
  dryRun: boolean;
  logLevel: string;
  webhooks: WebhookConfig;
  rightsizing: RightsizingConfig;
}

/** Rightsizing recommendations: on when a Prometheus URL is given, unless turned off. */
export interface RightsizingConfig {
  enabled: boolean;
  /** How often new usage is read and recommendations renewed. */
  intervalMs: number;
  /** The cluster default mode per resource (below policies and annotations, above the global `audit`). */
  clusterDefault: Partial<Record<RightsizingResource, RightsizingMode>>;
  /** The label that tells clusters apart when one Prometheus serves several, and this cluster's value. */
  cluster?: { label: string; value: string };
  /** A file of metric and label names and recommender parameters (bin/rightsizing-config.ts). */
  configFile?: string;
}

export type CertSource = "self" | "cert-manager";

/** The admission webhooks every replica serves (`port` 0: none). */
export interface WebhookConfig {
  port: number;
  host: string;
  /** The Service in front of the replicas, in the operator's namespace: the serving certificate's names. */
  service: string;
  /** metadata.name of the Mutating and ValidatingWebhookConfiguration whose caBundle the operator keeps. */
  configuration: string;
  /** self: a CA in a Secret and caBundle injection; cert-manager: tls.crt/tls.key read from `certDir`. */
  certSource: CertSource;
  certDir: string;
}

const certSources: readonly CertSource[] = ["self", "cert-manager"];
const logLevels: readonly string[] = ["fatal", "error", "warn", "info", "debug", "trace", "silent"];
const dnsLabel = /^[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?$/;
const dnsSubdomain = /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;

export class ConfigError extends Error {
  override name = "ConfigError";
}

/**
 * Longest --shutdown-delay: with the controllers' drain (at most the 10 s renew deadline, and 5 s for aborted
 * reconciles to settle), releasing the Lease (5 s) and closing the metrics server (5 s), shutdown must stay
 * inside the manifest's terminationGracePeriodSeconds (45).
 */
const maxShutdownDelay = {
  ms: 10_000,
  text: "10s (shutdown must finish within the pod's 45 s grace period)",
};

/** The environment variables flags default from, named where a bad value is refused. */
const envDefaults: Record<string, string> = {
  namespace: "POD_NAMESPACE",
  "pod-name": "POD_NAME or HOSTNAME",
};

/** Flags that only rightsizing reads. */
const rightsizingFlags = ["rightsizing-interval", "rightsizing-cpu-mode", "rightsizing-memory-mode"] as const;
/**
 * Flags that describe the metrics in Prometheus (which series, named how): rightsizing reads them, and so do the
 * activity history reads new forecasts start from, rightsizing on or off.
 */
const prometheusMetricsFlags = ["prometheus-cluster-label", "rightsizing-config"] as const;

/** Parses flags (the last of a repeated flag wins) over environment defaults. Throws a ConfigError that says what to fix. */
export function parseOperatorConfig(argv: readonly string[], env: NodeJS.ProcessEnv): OperatorConfig {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      args: [...argv],
      strict: true,
      options: {
        namespace: { type: "string", default: env.POD_NAMESPACE ?? "napwake-system" },
        // Host names are case-insensitive; a pod name is lower case.
        "pod-name": {
          type: "string",
          default: env.POD_NAME ?? env.HOSTNAME?.toLowerCase() ?? "napwake-operator",
        },
        kubeconfig: { type: "string" },
        "leader-elect": { type: "boolean", default: false },
        "lease-name": { type: "string", default: "napwake-operator" },
        "max-concurrent-reconciles": { type: "string", default: "8" },
        "check-interval": { type: "string", default: "30s" },
        "paused-check-interval": { type: "string", default: "5m" },
        "prometheus-url": { type: "string" },
        "forecast-time-zone": { type: "string", default: "UTC" },
        "health-port": { type: "string", default: "8081" },
        "metrics-port": { type: "string", default: "8443" },
        "dry-run": { type: "boolean", default: false },
        "log-level": { type: "string", default: env.LOG_LEVEL ?? "info" },
        "webhook-port": { type: "string", default: "9443" },
        "webhook-host": { type: "string", default: everyInterface },
        "webhook-service": { type: "string", default: "napwake-webhook" },
        "webhook-configuration": { type: "string", default: "napwake" },
        "cert-source": { type: "string", default: "self" },
        "cert-dir": { type: "string", default: "/etc/napwake/tls" },
        "no-rightsizing": { type: "boolean", default: false },
        "rightsizing-interval": { type: "string" },
        "rightsizing-cpu-mode": { type: "string" },
        "rightsizing-memory-mode": { type: "string" },
        "prometheus-cluster-label": { type: "string" },
        "rightsizing-config": { type: "string" },
        "shutdown-delay": { type: "string", default: "5s" },
      },
    }));
  } catch (err) {
    throw new ConfigError(`${(err as Error).message}; run with --help for the flags`);
  }
  const str = (name: string) => values[name] as string | undefined;
  /** A file flag: absent, or a path. Empty (`--kubeconfig=$UNSET`) would quietly mean "the default". */
  const path = (name: string, what: string) => {
    const value = str(name);
    if (value === "") throw new ConfigError(`--${name} must name ${what}; it is empty (an unset variable?)`);
    return value;
  };
  const int = (name: string, min: number, max: number, why = "") => {
    const raw = str(name) ?? "";
    // Decimal digits only: Number() would also take "", "0x24b3" or "1e3".
    const n = /^\d{1,9}$/.test(raw) ? Number(raw) : Number.NaN;
    if (!Number.isInteger(n) || n < min || n > max) {
      throw new ConfigError(`--${name} must be a whole number from ${min} to ${max}${why}, got "${raw}"`);
    }
    return n;
  };
  /** A duration flag, within bounds given as milliseconds and as the text a message shows. */
  /** `fallback`: a default given here rather than to parseArgs, so that a flag given explicitly can be told apart. */
  const duration = (
    name: string,
    bounds: { min?: { ms: number; text: string }; max?: { ms: number; text: string } } = {},
    fallback = "",
  ) => {
    let ms: number;
    try {
      ms = parseDuration(str(name) ?? fallback);
    } catch (err) {
      throw new ConfigError(`--${name}: ${(err as Error).message}`);
    }
    if (bounds.min && ms < bounds.min.ms) {
      throw new ConfigError(`--${name} must be at least ${bounds.min.text}, got "${str(name)}"`);
    }
    if (bounds.max && ms > bounds.max.ms) {
      throw new ConfigError(`--${name} must be at most ${bounds.max.text}, got "${str(name)}"`);
    }
    return ms;
  };
  const oneSecond = { ms: 1_000, text: "1s" };
  const oneHour = { ms: 3_600_000, text: "1h" };
  const logLevel = str("log-level") ?? "info";
  if (!logLevels.includes(logLevel)) {
    throw new ConfigError(
      `--log-level (or LOG_LEVEL) must be one of ${logLevels.join(", ")}, got "${logLevel}"`,
    );
  }
  const url = str("prometheus-url");
  if (url !== undefined) checkPrometheusUrl(url);
  const forecastTimeZone = str("forecast-time-zone") ?? "UTC";
  const calendar = calendarOf(forecastTimeZone);
  if (!calendar.ok) throw new ConfigError(`--forecast-time-zone: ${calendar.error}`);
  const name = (flag: string, pattern: RegExp, what: string, fallback = "") => {
    const value = str(flag) ?? fallback;
    if (!pattern.test(value)) {
      const from = envDefaults[flag];
      const source = from ? `--${flag} (or ${from})` : `--${flag}`;
      throw new ConfigError(`${source} must be ${what}, got "${value}"`);
    }
    return value;
  };
  const certSource = str("cert-source") as CertSource;
  if (!certSources.includes(certSource)) {
    throw new ConfigError(`--cert-source must be one of ${certSources.join(", ")}, got "${certSource}"`);
  }
  const host = str("webhook-host") ?? "";
  if (isIP(host) === 0) {
    throw new ConfigError(
      `--webhook-host must be an IP address to listen on, such as :: (every interface) or 0.0.0.0, got "${host}"`,
    );
  }
  const certDir = str("cert-dir") ?? "";
  if (certDir === "") throw new ConfigError("--cert-dir must name the directory holding tls.crt and tls.key");
  const healthPort = int("health-port", 0, 65535);
  const metricsPort = int("metrics-port", 0, 65535);
  const webhookPort = int("webhook-port", 0, 65535);
  const ports = [
    ["health-port", healthPort],
    ["metrics-port", metricsPort],
    ["webhook-port", webhookPort],
  ] as const;
  for (const [i, [flag, port]] of ports.entries()) {
    const clash = ports.slice(i + 1).find(([, other]) => port > 0 && other === port);
    if (clash) {
      throw new ConfigError(
        `--${flag} and --${clash[0]} are both ${port}: each server needs a port of its own`,
      );
    }
  }
  if (metricsPort > 0 && webhookPort === 0) {
    throw new ConfigError(
      "--metrics-port serves HTTPS with the certificate the webhooks keep: with --webhook-port=0 set --metrics-port=0 too",
    );
  }
  const mode = (resource: RightsizingResource) => {
    const value = str(`rightsizing-${resource}-mode`);
    if (value === undefined) return {};
    if (!isRightsizingMode(value)) {
      throw new ConfigError(
        `--rightsizing-${resource}-mode must be one of ${rightsizingModes.join(", ")}, got "${value}"`,
      );
    }
    return { [resource]: value };
  };
  const clusterLabel = str("prometheus-cluster-label");
  let cluster: RightsizingConfig["cluster"];
  if (clusterLabel !== undefined) {
    const match = /^([a-zA-Z_][a-zA-Z0-9_]*)=(.+)$/.exec(clusterLabel);
    if (!match?.[1] || !match[2]) {
      throw new ConfigError(
        `--prometheus-cluster-label must be LABEL=VALUE, such as cluster=prod-eu, got "${clusterLabel}"`,
      );
    }
    cluster = { label: match[1], value: match[2] };
  }
  const rightsizingIntervalMs = duration(
    "rightsizing-interval",
    { min: { ms: 60_000, text: "1m" }, max: { ms: 86_400_000, text: "24h" } },
    "1h",
  );
  const configFile = path("rightsizing-config", "a rightsizing configuration file");
  const clusterDefault = { ...mode("cpu"), ...mode("memory") };
  const rightsizingEnabled = url !== undefined && values["no-rightsizing"] !== true;
  // Flags for Prometheus without one, or for rightsizing with it off, would be taken and do nothing.
  const given = (flags: readonly string[]) =>
    flags.filter((flag) => str(flag) !== undefined).map((f) => `--${f}`);
  const withoutPrometheus = given([...rightsizingFlags, ...prometheusMetricsFlags]);
  if (url === undefined && withoutPrometheus.length > 0) {
    throw new ConfigError(
      `${withoutPrometheus.join(", ")} need --prometheus-url: rightsizing and the activity history are read there`,
    );
  }
  const withoutRightsizing = given(rightsizingFlags);
  if (!rightsizingEnabled && withoutRightsizing.length > 0) {
    throw new ConfigError(
      `${withoutRightsizing.join(", ")} do nothing with --no-rightsizing: drop them, or drop --no-rightsizing`,
    );
  }

  return {
    namespace: name(
      "namespace",
      dnsLabel,
      "a Namespace name (a DNS label) such as napwake-system",
      "napwake-system",
    ),
    // The leader-election identity: an empty one would read a released Lease as its own.
    podName: name(
      "pod-name",
      dnsSubdomain,
      "a Pod name (a DNS subdomain), as the Downward API gives it",
      "napwake-operator",
    ),
    kubeconfig: path("kubeconfig", "a kubeconfig file"),
    leaderElect: values["leader-elect"] === true,
    leaseName: name("lease-name", dnsSubdomain, "a Lease name (a DNS subdomain) such as napwake-operator"),
    maxConcurrentReconciles: int(
      "max-concurrent-reconciles",
      2,
      256,
      " (one worker is kept for wakes, so that a held request never waits behind a check)",
    ),
    checkIntervalMs: duration("check-interval", { min: oneSecond, max: oneHour }),
    pausedCheckIntervalMs: duration("paused-check-interval", { min: oneSecond, max: oneHour }),
    shutdownDelayMs: duration("shutdown-delay", { max: maxShutdownDelay }),
    prometheusUrl: url?.replace(/\/+$/, ""),
    forecastTimeZone,
    healthPort,
    metricsPort,
    dryRun: values["dry-run"] === true,
    logLevel,
    webhooks: {
      port: webhookPort,
      host,
      service: name("webhook-service", dnsLabel, "a Service name (a DNS label) such as napwake-webhook"),
      configuration: name(
        "webhook-configuration",
        dnsSubdomain,
        "a webhook configuration name (a DNS subdomain) such as napwake",
      ),
      certSource,
      certDir,
    },
    rightsizing: {
      enabled: rightsizingEnabled,
      intervalMs: rightsizingIntervalMs,
      clusterDefault,
      ...(cluster ? { cluster } : {}),
      ...(configFile === undefined ? {} : { configFile }),
    },
  };
}

/**
 * A Prometheus base URL every query can be made against: `${url}/api/v1/query`. Credentials, a query or a
 * fragment would be refused by fetch or turn the path into the UI's, and the operator would start, then fail
 * every activity query, history read and rightsizing run.
 */
function checkPrometheusUrl(url: string): void {
  const fix = (why: string) =>
    new ConfigError(
      `--prometheus-url must be an http(s) URL such as http://prometheus.monitoring:9090 (${why}), got "${url}"`,
    );
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw fix("it does not parse as a URL");
  }
  // Schemes are read in any case (HTTP://...), as URL reads them.
  if (!/^https?:$/.test(parsed.protocol) || !/^https?:\/\/[^/\s]+/i.test(url))
    throw fix("http or https, with a host");
  if (/\s/.test(url)) throw fix("no spaces");
  if (parsed.username || parsed.password) throw fix("no credentials in it: they cannot be sent that way");
  if (/[?#]/.test(url)) {
    throw fix("no query or fragment: the API paths are added after it");
  }
}
