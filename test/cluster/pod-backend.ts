import { createServer, type Server } from "node:http";
import type { Socket } from "node:net";
import { CoreV1Api, type KubeConfig, makeInformer, type V1Pod } from "@kubernetes/client-node";
import { keepInformer } from "../../kube/informer.ts";

/** One address a Ready pod should answer on. */
export interface PodListener {
  ip: string;
  port: number;
  namespace: string;
  pod: string;
  uid: string;
}

function isReady(pod: V1Pod): boolean {
  return (
    !pod.metadata?.deletionTimestamp &&
    pod.status?.phase === "Running" &&
    (pod.status?.conditions ?? []).some((c) => c.type === "Ready" && c.status === "True")
  );
}

/** Pure: the listeners that should exist for these pods, keyed by `ip:port`. */
export function desiredListeners(pods: readonly V1Pod[]): Map<string, PodListener> {
  const result = new Map<string, PodListener>();
  for (const pod of pods) {
    const ip = pod.status?.podIP;
    if (!ip || !isReady(pod)) continue;
    for (const container of pod.spec?.containers ?? []) {
      for (const port of container.ports ?? []) {
        if ((port.protocol ?? "TCP") !== "TCP") continue;
        result.set(`${ip}:${port.containerPort}`, {
          ip,
          port: port.containerPort,
          namespace: pod.metadata?.namespace ?? "",
          pod: pod.metadata?.name ?? "",
          uid: pod.metadata?.uid ?? "",
        });
      }
    }
  }
  return result;
}

interface OpenListener {
  spec: PodListener;
  server: Server;
  sockets: Set<Socket>;
}

export interface PodBackend {
  /** `ip:port` addresses answering now. */
  listening(): string[];
  stop(): Promise<void>;
}

/**
 * Makes kwok's fake pods answer on the wire: every container port of every Ready pod gets an HTTP server
 * on the pod's IP, which says which pod answered. When a pod stops being Ready or goes away, its server
 * closes and drops its connections, so clients see connection refused, as with a real pod.
 */
export async function startPodBackend(kc: KubeConfig): Promise<PodBackend> {
  const core = kc.makeApiClient(CoreV1Api);
  const open = new Map<string, OpenListener>();
  let chain: Promise<void> = Promise.resolve();
  let stopped = false;

  const reconcile = async () => {
    const want = stopped ? new Map<string, PodListener>() : desiredListeners(pods.cache.list());
    for (const [key, current] of open) {
      const wanted = want.get(key);
      if (wanted?.uid === current.spec.uid) continue;
      open.delete(key);
      await closeListener(current);
    }
    for (const [key, spec] of want) {
      if (open.has(key)) continue;
      const listener = await openListener(spec).catch(() => undefined);
      // A bind can fail while an old socket on the address drains; the next event retries it.
      if (listener) open.set(key, listener);
    }
  };
  const schedule = () => {
    chain = chain.then(reconcile, reconcile);
  };
  const pods = await keepInformer(
    makeInformer<V1Pod>(kc, "/api/v1/pods", () => core.listPodForAllNamespaces()),
    { onChange: schedule },
  );
  schedule();
  await chain;

  return {
    listening: () => [...open.keys()].sort(),
    async stop() {
      stopped = true;
      await pods.stop();
      schedule();
      await chain;
    },
  };
}

function openListener(spec: PodListener): Promise<OpenListener> {
  const sockets = new Set<Socket>();
  const server = createServer((req, res) => {
    const body = JSON.stringify({
      pod: spec.pod,
      namespace: spec.namespace,
      ip: spec.ip,
      port: spec.port,
      method: req.method,
      path: req.url,
    });
    res.writeHead(200, { "content-type": "application/json", "x-pod": spec.pod });
    res.end(body);
  });
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(spec.port, spec.ip, () => {
      server.off("error", reject);
      resolve({ spec, server, sockets });
    });
  });
}

function closeListener(listener: OpenListener): Promise<void> {
  return new Promise((resolve) => {
    listener.server.close(() => resolve());
    for (const socket of listener.sockets) socket.destroy();
  });
}
