import { mkdir, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { ApiregistrationV1Api, CoreV1Api, KubeConfig, KubernetesObjectApi } from "@kubernetes/client-node";
import { serverSideApply } from "../../kube/apply.ts";
import { harnessFieldManager, kwokNodes, metricsServerRegistration } from "./bootstrap.ts";
import { type ClientName, type ClusterPki, kubeconfigYaml, writeClusterPki } from "./cluster-pki.ts";
import {
  apiServerCommand,
  type ComponentCommand,
  type ComponentInputs,
  controllerManagerCommand,
  etcdCommand,
  kwokCommand,
  metricsServerCommand,
  schedulerCommand,
} from "./components.ts";
import { type ClusterPaths, clusterPaths, ports } from "./layout.ts";
import { isHealthy, loadTls } from "./probe.ts";
import { type RunningProcess, startProcess, waitFor } from "./process.ts";
import { type PrometheusHandle, startPrometheus } from "./prometheus.ts";

export interface ControlPlaneOptions {
  binDir: string;
  stateDir: string;
  /** Progress lines for a person watching; defaults to stderr. */
  log?: (line: string) => void;
}

export interface ControlPlane {
  paths: ClusterPaths;
  pki: ClusterPki;
  /** Admin kubeconfig that dials the API server at 127.0.0.1 inside the network namespace. */
  kubeconfig: string;
  apiServerUrl: string;
  processes: RunningProcess[];
  prometheus: PrometheusHandle;
  stop(): Promise<void>;
}

/** Starts etcd, kube-apiserver, kube-controller-manager and kube-scheduler, in that order. */
export async function startControlPlane(opts: ControlPlaneOptions): Promise<ControlPlane> {
  const log = opts.log ?? ((line: string) => process.stderr.write(`[cluster] ${line}\n`));
  const paths = clusterPaths(opts.stateDir);
  await rm(paths.stateDir, { recursive: true, force: true });
  await Promise.all([mkdir(paths.logs, { recursive: true }), mkdir(paths.config, { recursive: true })]);

  const pki = await writeClusterPki(paths, new Date());
  const apiServerUrl = `https://127.0.0.1:${ports.apiServer}`;
  const kubeconfigs = await writeKubeconfigs(paths, pki, apiServerUrl);
  const inputs: ComponentInputs = { binDir: opts.binDir, paths, pki, kubeconfigs };
  const processes: RunningProcess[] = [];
  const start = (cmd: ComponentCommand) => {
    const proc = startProcess({ ...cmd, logDir: paths.logs });
    processes.push(proc);
    return proc;
  };
  let prometheus: PrometheusHandle | undefined;
  const stop = async () => {
    await prometheus?.stop();
    // Reverse order: clients first, etcd last.
    for (const proc of [...processes].reverse()) await proc.stop();
  };

  try {
    const tls = await loadTls({ ca: pki.caCert, cert: pki.clients.admin.cert, key: pki.clients.admin.key });
    log("starting etcd");
    start(etcdCommand(inputs));
    log("starting kube-apiserver");
    const apiServer = start(apiServerCommand(inputs));
    await waitFor(() => isHealthy(`${apiServerUrl}/readyz`, tls), {
      what: "kube-apiserver /readyz",
      timeoutMs: 90_000,
      process: apiServer,
    });
    log("starting kube-controller-manager, kube-scheduler, kwok, metrics-server and prometheus");
    start(controllerManagerCommand(inputs));
    start(schedulerCommand(inputs));
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfigs.admin);
    const objects = KubernetesObjectApi.makeApiClient(kc);
    await serverSideApply(objects, kwokNodes(), harnessFieldManager);
    const kwok = start(kwokCommand(inputs));
    const metricsServer = start(metricsServerCommand(inputs));
    await serverSideApply(objects, metricsServerRegistration(), harnessFieldManager);
    prometheus = await startPrometheus({
      dataDir: paths.prometheusData,
      configDir: paths.config,
      logDir: paths.logs,
    });
    await waitFor(() => nodesReady(kc), { what: "kwok nodes Ready", timeoutMs: 60_000, process: kwok });
    await waitFor(() => metricsApiAvailable(kc), {
      what: "APIService v1beta1.metrics.k8s.io Available",
      timeoutMs: 60_000,
      process: metricsServer,
    });
    return { paths, pki, kubeconfig: kubeconfigs.admin, apiServerUrl, processes, prometheus, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

async function writeKubeconfigs(
  paths: ClusterPaths,
  pki: ClusterPki,
  server: string,
): Promise<ComponentInputs["kubeconfigs"]> {
  const write = async (name: ClientName, file: string) => {
    const client = pki.clients[name];
    await writeFile(
      file,
      kubeconfigYaml({ server, caCert: pki.caCert, clientCert: client.cert, clientKey: client.key }),
    );
    return file;
  };
  return {
    admin: await write("admin", paths.adminKubeconfig),
    controllerManager: await write("controller-manager", join(paths.config, "controller-manager.kubeconfig")),
    scheduler: await write("scheduler", join(paths.config, "scheduler.kubeconfig")),
    kwok: await write("kwok", join(paths.config, "kwok.kubeconfig")),
    metricsServer: await write("metrics-server", join(paths.config, "metrics-server.kubeconfig")),
  };
}

async function nodesReady(kc: KubeConfig): Promise<true | undefined> {
  const nodes = await kc.makeApiClient(CoreV1Api).listNode();
  const ready = nodes.items.filter((n) =>
    n.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"),
  );
  return ready.length > 0 && ready.length === nodes.items.length ? true : undefined;
}

async function metricsApiAvailable(kc: KubeConfig): Promise<true | undefined> {
  const svc = await kc.makeApiClient(ApiregistrationV1Api).readAPIService({ name: "v1beta1.metrics.k8s.io" });
  const available = svc.status?.conditions?.find((c) => c.type === "Available");
  if (available?.status === "True") return true;
  throw new Error(`${available?.reason}: ${available?.message}`);
}
