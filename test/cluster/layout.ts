import { join } from "node:path";

/**
 * Addresses inside the cluster's network namespace. The whole of 198.18.0.0/15 is routed to loopback
 * there, so every address below is local, yet none is a loopback address (the API server refuses those
 * in EndpointSlices):
 *   198.18.0.0/16    pod IPs, handed out by kwok
 *   198.19.0.0/24    processes that stand in for in-cluster servers (API server, metrics-server, webhooks)
 *   198.19.1.0/24    node IPs (kwok serves every node's fake kubelet on one port)
 *   198.19.128.0/17  Service cluster IPs (nothing listens there: the service client resolves endpoints)
 */
export const network = {
  podCidr: "198.18.0.0/16",
  apiServerIp: "198.19.0.1",
  metricsServerIp: "198.19.0.2",
  /** The sandbox's operator process: its admission webhooks, behind the Service napwake-system/napwake-webhook. */
  operatorIp: "198.19.0.5",
  /** The operator process test/integration/operator-process.test.ts starts. */
  operatorTestIp: "198.19.0.6",
  /**
   * First address handed to test servers (webhooks, operators) that must be reachable through a Service.
   * Tests take addresses from here up: .10 webhook.test.ts, .20 webhook-admission.test.ts, .21 certs-manager.test.ts.
   */
  firstServerIp: "198.19.0.10",
  nodeIpPrefix: "198.19.1.",
  serviceCidr: "198.19.128.0/17",
  kubernetesServiceIp: "198.19.128.1",
} as const;

export const ports = {
  apiServer: 6443,
  etcdClient: 2379,
  etcdPeer: 2380,
  controllerManager: 10257,
  scheduler: 10259,
  kubelet: 10250,
  kwokMetrics: 10247,
  metricsServer: 4443,
  prometheus: 9090,
  /** The operator's admission webhooks (--webhook-port), as in the install manifests. */
  operatorWebhook: 9443,
  /** The sandbox operator's /healthz and /readyz (--health-port). */
  operatorHealth: 8081,
  /** The operator's HTTPS /metrics (--metrics-port), as in the install manifests. */
  operatorMetrics: 8443,
} as const;

export const nodeCount = 3;

export function nodeName(index: number): string {
  return `kwok-node-${index}`;
}

export function nodeIp(index: number): string {
  return `${network.nodeIpPrefix}${index + 1}`;
}

/** Files of one cluster, all under its state directory. */
export function clusterPaths(stateDir: string) {
  const pki = join(stateDir, "pki");
  return {
    stateDir,
    pki,
    logs: join(stateDir, "logs"),
    etcdData: join(stateDir, "etcd"),
    prometheusData: join(stateDir, "prometheus"),
    config: join(stateDir, "config"),
    adminKubeconfig: join(stateDir, "kubeconfig"),
    /** Unix socket the sandbox bridges the API server through, visible from both network namespaces. */
    apiServerSocket: join(stateDir, "apiserver.sock"),
    readyFile: join(stateDir, "ready.json"),
  };
}

export type ClusterPaths = ReturnType<typeof clusterPaths>;
