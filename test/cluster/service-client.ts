import { request } from "node:http";
import { connect, type Socket } from "node:net";
import {
  CoreV1Api,
  DiscoveryV1Api,
  type KubeConfig,
  makeInformer,
  type V1EndpointSlice,
  type V1Service,
} from "@kubernetes/client-node";
import { type Endpoint, readyEndpoints } from "../../kube/endpoints.ts";
import { keepInformer } from "../../kube/informer.ts";

export interface ServiceResponse {
  status: number;
  body: string;
  endpoint: Endpoint;
}

export interface ServiceClient {
  endpoints(namespace: string, service: string, port: number | string): Endpoint[];
  /** Opens a TCP connection to one ready endpoint, as kube-proxy would route a connection to the Service. */
  connect(namespace: string, service: string, port: number | string): Socket;
  get(namespace: string, service: string, port: number | string, path?: string): Promise<ServiceResponse>;
  stop(): Promise<void>;
}

/**
 * Does kube-proxy's job for tests and the sandbox: resolves a Service to its ready endpoints from
 * informer caches of Services and EndpointSlices, and connects to one of them (round robin).
 */
export async function startServiceClient(kc: KubeConfig): Promise<ServiceClient> {
  const core = kc.makeApiClient(CoreV1Api);
  const discovery = kc.makeApiClient(DiscoveryV1Api);
  const [services, slices] = await Promise.all([
    keepInformer(makeInformer<V1Service>(kc, "/api/v1/services", () => core.listServiceForAllNamespaces())),
    keepInformer(
      makeInformer<V1EndpointSlice>(kc, "/apis/discovery.k8s.io/v1/endpointslices", () =>
        discovery.listEndpointSliceForAllNamespaces(),
      ),
    ),
  ]);
  let turn = 0;

  const endpoints = (namespace: string, name: string, port: number | string) => {
    const service = services.cache.get(name, namespace);
    return service ? readyEndpoints(service, slices.cache.list(namespace), port) : [];
  };
  const pick = (namespace: string, name: string, port: number | string): Endpoint => {
    const candidates = endpoints(namespace, name, port);
    const chosen = candidates[turn++ % Math.max(candidates.length, 1)];
    if (!chosen) throw new Error(`service ${namespace}/${name} port ${port} has no ready endpoints`);
    return chosen;
  };

  return {
    endpoints,
    connect(namespace, name, port) {
      const endpoint = pick(namespace, name, port);
      return connect({ host: endpoint.ip, port: endpoint.port });
    },
    async get(namespace, name, port, path = "/") {
      const endpoint = pick(namespace, name, port);
      return new Promise((resolve, reject) => {
        const req = request({ host: endpoint.ip, port: endpoint.port, path, timeout: 5_000 }, (res) => {
          let body = "";
          res.setEncoding("utf8");
          res.on("data", (chunk) => {
            body += chunk;
          });
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body, endpoint }));
        });
        req.on("timeout", () =>
          req.destroy(new Error(`GET ${path} on ${endpoint.ip}:${endpoint.port} timed out`)),
        );
        req.on("error", reject);
        req.end();
      });
    },
    async stop() {
      await Promise.all([services.stop(), slices.stop()]);
    },
  };
}
