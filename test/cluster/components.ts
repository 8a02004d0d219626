import { join } from "node:path";
import type { ClusterPki } from "./cluster-pki.ts";
import { type ClusterPaths, network, ports } from "./layout.ts";

/** What every component's command line is built from. Pure: the same input gives the same arguments. */
export interface ComponentInputs {
  binDir: string;
  paths: ClusterPaths;
  pki: ClusterPki;
  kubeconfigs: {
    admin: string;
    controllerManager: string;
    scheduler: string;
    kwok: string;
    metricsServer: string;
  };
}

export interface ComponentCommand {
  name: string;
  command: string;
  args: string[];
}

export function etcdCommand({ binDir, paths }: ComponentInputs): ComponentCommand {
  const client = `http://127.0.0.1:${ports.etcdClient}`;
  const peer = `http://127.0.0.1:${ports.etcdPeer}`;
  return {
    name: "etcd",
    command: join(binDir, "etcd"),
    args: [
      "--name=napwake-local",
      `--data-dir=${paths.etcdData}`,
      `--listen-client-urls=${client}`,
      `--advertise-client-urls=${client}`,
      `--listen-peer-urls=${peer}`,
      `--initial-advertise-peer-urls=${peer}`,
      `--initial-cluster=napwake-local=${peer}`,
      // A throwaway cluster: durability is not worth the fsync latency on a shared disk.
      "--unsafe-no-fsync=true",
      "--quota-backend-bytes=4294967296",
      "--log-level=warn",
    ],
  };
}

export function apiServerCommand({ binDir, pki }: ComponentInputs): ComponentCommand {
  return {
    name: "kube-apiserver",
    command: join(binDir, "kube-apiserver"),
    args: [
      `--etcd-servers=http://127.0.0.1:${ports.etcdClient}`,
      "--bind-address=0.0.0.0",
      `--secure-port=${ports.apiServer}`,
      // Not loopback: the address goes into the kubernetes Service's EndpointSlice.
      `--advertise-address=${network.apiServerIp}`,
      `--service-cluster-ip-range=${network.serviceCidr}`,
      `--tls-cert-file=${pki.apiServerCert}`,
      `--tls-private-key-file=${pki.apiServerKey}`,
      `--client-ca-file=${pki.caCert}`,
      `--service-account-key-file=${pki.serviceAccountPub}`,
      `--service-account-signing-key-file=${pki.serviceAccountKey}`,
      "--service-account-issuer=https://kubernetes.default.svc",
      "--authorization-mode=RBAC",
      "--allow-privileged=true",
      // Aggregated APIs (metrics.k8s.io) authenticate the API server through the front proxy.
      `--requestheader-client-ca-file=${pki.frontProxyCaCert}`,
      "--requestheader-allowed-names=front-proxy-client",
      "--requestheader-username-headers=X-Remote-User",
      "--requestheader-group-headers=X-Remote-Group",
      "--requestheader-extra-headers-prefix=X-Remote-Extra-",
      `--proxy-client-cert-file=${pki.frontProxyClientCert}`,
      `--proxy-client-key-file=${pki.frontProxyClientKey}`,
      // Webhooks and APIServices are dialled at their Service's endpoints, not its cluster IP:
      // there is no kube-proxy, and endpoints are real local addresses here.
      "--enable-aggregator-routing=true",
      "--profiling=false",
      "--v=1",
    ],
  };
}

/** Client rate limits of the controller-manager and scheduler, raised as kwokctl raises them for scale tests. */
const apiRateLimits = ["--kube-api-qps=500", "--kube-api-burst=1000"];

export function controllerManagerCommand({ binDir, pki, kubeconfigs }: ComponentInputs): ComponentCommand {
  return {
    name: "kube-controller-manager",
    command: join(binDir, "kube-controller-manager"),
    args: [
      `--kubeconfig=${kubeconfigs.controllerManager}`,
      `--authentication-kubeconfig=${kubeconfigs.controllerManager}`,
      `--authorization-kubeconfig=${kubeconfigs.controllerManager}`,
      "--bind-address=127.0.0.1",
      `--secure-port=${ports.controllerManager}`,
      "--leader-elect=false",
      "--use-service-account-credentials=true",
      `--service-account-private-key-file=${pki.serviceAccountKey}`,
      `--root-ca-file=${pki.caCert}`,
      `--cluster-signing-cert-file=${pki.caCert}`,
      `--cluster-signing-key-file=${pki.caKey}`,
      `--service-cluster-ip-range=${network.serviceCidr}`,
      // Pods get IPs from kwok, not from node podCIDRs.
      "--allocate-node-cidrs=false",
      // The HPA reads metrics.k8s.io; sync it often so tests need not wait long.
      "--horizontal-pod-autoscaler-sync-period=5s",
      // Thousands of workloads (bench/operator-scale.ts) need their ReplicaSets and pods made in minutes, not
      // at the default 20 requests per second.
      ...apiRateLimits,
      "--profiling=false",
      "--v=1",
    ],
  };
}

export function schedulerCommand({ binDir, kubeconfigs }: ComponentInputs): ComponentCommand {
  return {
    name: "kube-scheduler",
    command: join(binDir, "kube-scheduler"),
    args: [
      `--kubeconfig=${kubeconfigs.scheduler}`,
      `--authentication-kubeconfig=${kubeconfigs.scheduler}`,
      `--authorization-kubeconfig=${kubeconfigs.scheduler}`,
      "--bind-address=127.0.0.1",
      `--secure-port=${ports.scheduler}`,
      "--leader-elect=false",
      ...apiRateLimits,
      "--profiling=false",
      "--v=1",
    ],
  };
}

/** kwok plays every node's kubelet: node and pod lifecycle from its stages, resource metrics on one port. */
export function kwokCommand({ binDir, kubeconfigs }: ComponentInputs): ComponentCommand {
  return {
    name: "kwok",
    command: join(binDir, "kwok"),
    args: [
      `--kubeconfig=${kubeconfigs.kwok}`,
      `--config=${join(binDir, "kwok-config.yaml")}`,
      `--manage-nodes-with-annotation-selector=${kwokNodeAnnotation}=fake`,
      `--cidr=${network.podCidr}`,
      `--node-port=${ports.kubelet}`,
      `--server-address=0.0.0.0:${ports.kubelet}`,
      "--node-lease-duration-seconds=40",
      "-v=WARN",
    ],
  };
}

export const kwokNodeAnnotation = "kwok.x-k8s.io/node";

export function metricsServerCommand({ binDir, kubeconfigs, paths }: ComponentInputs): ComponentCommand {
  return {
    name: "metrics-server",
    command: join(binDir, "metrics-server"),
    args: [
      `--kubeconfig=${kubeconfigs.metricsServer}`,
      `--authentication-kubeconfig=${kubeconfigs.metricsServer}`,
      `--authorization-kubeconfig=${kubeconfigs.metricsServer}`,
      `--bind-address=${network.metricsServerIp}`,
      `--secure-port=${ports.metricsServer}`,
      // Its self-signed serving certificate goes here rather than into the working directory.
      `--cert-dir=${join(paths.stateDir, "metrics-server")}`,
      "--kubelet-preferred-address-types=InternalIP",
      "--kubelet-use-node-status-port",
      // The fake kubelet serves a self-signed certificate.
      "--kubelet-insecure-tls",
      "--metric-resolution=15s",
      "--v=1",
    ],
  };
}

export function prometheusCommand(configFile: string, dataDir: string): ComponentCommand {
  return {
    name: "prometheus",
    command: "prometheus",
    args: [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${dataDir}`,
      `--web.listen-address=127.0.0.1:${ports.prometheus}`,
      "--web.enable-remote-write-receiver",
      "--web.enable-lifecycle",
      // Loaded history reaches 14 days back.
      "--storage.tsdb.retention.time=30d",
      "--log.level=warn",
    ],
  };
}
