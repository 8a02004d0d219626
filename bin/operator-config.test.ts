import { describe, expect, it } from "vitest";
import { ConfigError, parseOperatorConfig } from "./operator-config.ts";

describe("parseOperatorConfig", () => {
  it("has production defaults, with the namespace and pod name from the downward API", () => {
    const c = parseOperatorConfig([], { POD_NAMESPACE: "ops", POD_NAME: "napwake-0" });
    expect(c).toMatchObject({
      namespace: "ops",
      podName: "napwake-0",
      leaderElect: false,
      maxConcurrentReconciles: 8,
      checkIntervalMs: 30_000,
      pausedCheckIntervalMs: 300_000,
      shutdownDelayMs: 5_000,
      leaseName: "napwake-operator",
      logLevel: "info",
      healthPort: 8081,
      dryRun: false,
      webhooks: {
        port: 9443,
        host: "::",
        service: "napwake-webhook",
        configuration: "napwake",
        certSource: "self",
        certDir: "/etc/napwake/tls",
      },
    });
  });

  it.each([
    { args: ["--webhook-port=0", "--metrics-port=0"], want: { port: 0 } },
    {
      args: ["--webhook-host=198.19.0.5", "--webhook-port=10443"],
      want: { host: "198.19.0.5", port: 10443 },
    },
    {
      args: ["--webhook-service=test-webhook", "--webhook-configuration=napwake-t-1234"],
      want: { service: "test-webhook", configuration: "napwake-t-1234" },
    },
    {
      args: ["--cert-source=cert-manager", "--cert-dir=/run/tls"],
      want: { certSource: "cert-manager", certDir: "/run/tls" },
    },
  ])("reads the webhook flags $args", ({ args, want }) => {
    expect(parseOperatorConfig(args, {}).webhooks).toMatchObject(want);
  });

  it.each([
    {
      what: "off without a metrics source",
      args: [],
      want: { enabled: false, intervalMs: 3_600_000, clusterDefault: {} },
    },
    {
      what: "on with a Prometheus URL, at its cluster defaults",
      args: [
        "--prometheus-url=http://prometheus:9090",
        "--rightsizing-interval=15m",
        "--rightsizing-cpu-mode=off",
        "--rightsizing-memory-mode=auto-patch",
        "--prometheus-cluster-label=cluster=prod-eu",
      ],
      want: {
        enabled: true,
        intervalMs: 900_000,
        clusterDefault: { cpu: "off", memory: "auto-patch" },
        cluster: { label: "cluster", value: "prod-eu" },
      },
    },
    {
      what: "off when asked, even with a Prometheus URL",
      args: ["--prometheus-url=http://prometheus:9090", "--no-rightsizing"],
      want: { enabled: false },
    },
  ])("rightsizing is $what", ({ args, want }) => {
    expect(parseOperatorConfig(args, {}).rightsizing).toMatchObject(want);
  });

  it("reads the forecast's default time zone, UTC unless set", () => {
    expect(parseOperatorConfig([], {}).forecastTimeZone).toBe("UTC");
    expect(parseOperatorConfig(["--forecast-time-zone=Europe/Berlin"], {}).forecastTimeZone).toBe(
      "Europe/Berlin",
    );
  });

  it("refuses a forecast time zone the runtime does not know, saying what to set", () => {
    expect(() => parseOperatorConfig(["--forecast-time-zone=CET+1"], {})).toThrow(
      new ConfigError(
        '--forecast-time-zone: unknown time zone "CET+1": use an IANA name such as "Europe/Berlin", ' +
          '"America/New_York" or "UTC"',
      ),
    );
  });

  it("keeps the cluster label and the metrics file with --no-rightsizing: the activity history is read by them", () => {
    const config = parseOperatorConfig(
      [
        "--prometheus-url=http://prometheus:9090",
        "--no-rightsizing",
        "--prometheus-cluster-label=cluster=prod-eu",
        "--rightsizing-config=/etc/napwake/rightsizing.yaml",
      ],
      {},
    );
    expect(config.rightsizing.cluster).toEqual({ label: "cluster", value: "prod-eu" });
    expect(config.rightsizing.configFile).toBe("/etc/napwake/rightsizing.yaml");
  });

  it("takes a Prometheus URL whose scheme is written in capitals, as URLs are read", () => {
    expect(parseOperatorConfig(["--prometheus-url=HTTP://prometheus:9090"], {}).prometheusUrl).toBe(
      "HTTP://prometheus:9090",
    );
  });

  it("takes the host name, lower-cased, for the pod name outside a pod", () => {
    expect(parseOperatorConfig([], { HOSTNAME: "DevBox-7" }).podName).toBe("devbox-7");
  });

  it("lets the last of a repeated flag win, as kustomize overlays append flags", () => {
    expect(parseOperatorConfig(["--check-interval=30s", "--check-interval=5s"], {}).checkIntervalMs).toBe(
      5_000,
    );
  });

  it.each([
    { args: ["--check-interval=5x"], message: /--check-interval: "5x" is not a duration/ },
    {
      args: ["--max-concurrent-reconciles=1"],
      message:
        /--max-concurrent-reconciles must be a whole number from 2 to 256 \(one worker is kept for wakes/,
    },
    { args: ["--prometheus-url=prometheus:9090"], message: /--prometheus-url must be an http\(s\) URL/ },
    {
      args: ["--prometheus-url=http://napwake:secret@prometheus:9090"],
      message: /--prometheus-url .*\(no credentials in it: they cannot be sent that way\)/,
    },
    { args: ["--prometheus-url=http://prometheus:90a90"], message: /\(it does not parse as a URL\)/ },
    { args: ["--prometheus-url=http://prometheus:9090/?tenant=a"], message: /\(no query or fragment/ },
    { args: ["--prometheus-url=http://prometheus:9090#api"], message: /\(no query or fragment/ },
    { args: ["--prometheus-url=http://prometheus:9090 --dry-run"], message: /--prometheus-url must be/ },
    { args: ["--webhook-port=70000"], message: /--webhook-port must be a whole number from 0 to 65535/ },
    { args: ["--webhook-host=localhost"], message: /--webhook-host must be an IP address/ },
    { args: ["--webhook-service=Napwake_Webhook"], message: /--webhook-service must be a Service name/ },
    {
      args: ["--webhook-configuration=-napwake"],
      message: /--webhook-configuration must be a webhook configuration name/,
    },
    {
      args: ["--cert-source=vault"],
      message: /--cert-source must be one of self, cert-manager, got "vault"/,
    },
    { args: ["--cert-dir="], message: /--cert-dir must name the directory/ },
    {
      args: ["--webhook-port=0"],
      message: /--metrics-port serves HTTPS with the certificate the webhooks keep/,
    },
    { args: ["--no-such-flag"], message: /Unknown option '--no-such-flag'.*--help/ },
    {
      args: ["--rightsizing-cpu-mode=patch"],
      message: /--rightsizing-cpu-mode must be one of off, audit, auto-patch, got "patch"/,
    },
    { args: ["--rightsizing-interval=30s"], message: /--rightsizing-interval must be at least 1m/ },
    { args: ["--check-interval=0s"], message: /--check-interval must be at least 1s, got "0s"/ },
    { args: ["--paused-check-interval=500ms"], message: /--paused-check-interval must be at least 1s/ },
    { args: ["--paused-check-interval=600h"], message: /--paused-check-interval must be at most 1h/ },
    { args: ["--check-interval=2h"], message: /--check-interval must be at most 1h/ },
    { args: ["--rightsizing-interval=720h"], message: /--rightsizing-interval must be at most 24h/ },
    {
      args: ["--pod-name="],
      message: /--pod-name \(or POD_NAME or HOSTNAME\) must be a Pod name \(a DNS subdomain\).*got ""/,
    },
    {
      args: ["--namespace=Napwake_System"],
      message: /--namespace \(or POD_NAMESPACE\) must be a Namespace name \(a DNS label\)/,
    },
    { args: ["--kubeconfig="], message: /--kubeconfig must name a kubeconfig file; it is empty/ },
    {
      args: ["--prometheus-url=http://p:9090", "--rightsizing-config="],
      message: /--rightsizing-config must name a rightsizing configuration file; it is empty/,
    },
    {
      args: ["--health-port=9443"],
      message: /--health-port and --webhook-port are both 9443: each server needs a port of its own/,
    },
    {
      args: ["--metrics-port=9443"],
      message: /--metrics-port and --webhook-port are both 9443/,
    },
    {
      args: ["--rightsizing-cpu-mode=audit", "--rightsizing-interval=2h"],
      message: /--rightsizing-interval, --rightsizing-cpu-mode need --prometheus-url/,
    },
    {
      args: ["--prometheus-cluster-label=cluster=prod-eu"],
      message:
        /--prometheus-cluster-label need --prometheus-url: rightsizing and the activity history are read there/,
    },
    {
      args: ["--prometheus-url=http://p:9090", "--no-rightsizing", "--rightsizing-memory-mode=off"],
      message:
        /--rightsizing-memory-mode do nothing with --no-rightsizing: drop them, or drop --no-rightsizing/,
    },
    { args: ["--health-port="], message: /--health-port must be a whole number from 0 to 65535, got ""/ },
    { args: ["--webhook-port=0x24b3"], message: /--webhook-port must be a whole number/ },
    { args: ["--metrics-port=8e3"], message: /--metrics-port must be a whole number/ },
    {
      args: ["--log-level=verbose"],
      message: /--log-level \(or LOG_LEVEL\) must be one of fatal, error, warn, info/,
    },
    { args: ["--lease-name=Bad_Name"], message: /--lease-name must be a Lease name/ },
    { args: ["--shutdown-delay=soon"], message: /--shutdown-delay: "soon" is not a duration/ },
    { args: ["--shutdown-delay=1m"], message: /--shutdown-delay must be at most 10s/ },
    {
      args: ["--prometheus-cluster-label=prod"],
      message: /--prometheus-cluster-label must be LABEL=VALUE, such as cluster=prod-eu/,
    },
  ])("refuses $args with a message that says what to fix", ({ args, message }) => {
    expect(() => parseOperatorConfig(args, {})).toThrow(ConfigError);
    expect(() => parseOperatorConfig(args, {})).toThrow(message);
  });
});
