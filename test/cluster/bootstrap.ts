import type { KubernetesObject } from "@kubernetes/client-node";
import { kwokNodeAnnotation } from "./components.ts";
import { network, nodeCount, nodeIp, nodeName, ports } from "./layout.ts";

export const harnessFieldManager = "napwake-test-harness";

/**
 * Fake nodes for kwok. Priced-looking labels (instance type, capacity type, zone) make them useful to cost
 * code too; the metrics path annotation tells metrics-server where kwok serves each node's metrics.
 */
export function kwokNodes(): KubernetesObject[] {
  return Array.from({ length: nodeCount }, (_, i) => ({
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name: nodeName(i),
      annotations: {
        [kwokNodeAnnotation]: "fake",
        "node.alpha.kubernetes.io/ttl": "0",
        "metrics.k8s.io/resource-metrics-path": `/metrics/nodes/${nodeName(i)}/metrics/resource`,
      },
      labels: {
        type: "kwok",
        "kubernetes.io/hostname": nodeName(i),
        "kubernetes.io/os": "linux",
        "kubernetes.io/arch": "amd64",
        "node.kubernetes.io/instance-type": "m6i.2xlarge",
        "karpenter.sh/capacity-type": i === 0 ? "spot" : "on-demand",
        "topology.kubernetes.io/zone": `local-${String.fromCharCode(97 + (i % 3))}`,
      },
    },
    spec: {},
    status: {
      addresses: [
        { type: "InternalIP", address: nodeIp(i) },
        { type: "Hostname", address: nodeName(i) },
      ],
      capacity: { cpu: "8", memory: "32Gi", pods: "110" },
      allocatable: { cpu: "8", memory: "32Gi", pods: "110" },
    },
  }));
}

/**
 * A Service for a process that runs in the cluster's network namespace but outside any pod: no selector,
 * one EndpointSlice with the process's address. The API server (with aggregator routing) dials webhooks
 * and APIServices at these endpoints, as it would dial a pod.
 */
export function externalProcessService(opts: {
  namespace: string;
  name: string;
  ip: string;
  port: number;
}): KubernetesObject[] {
  return [
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { namespace: opts.namespace, name: opts.name },
      spec: { ports: [{ name: "https", port: 443, targetPort: opts.port, protocol: "TCP" }] },
    } as KubernetesObject,
    {
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: {
        namespace: opts.namespace,
        name: `${opts.name}-process`,
        labels: {
          "kubernetes.io/service-name": opts.name,
          "endpointslice.kubernetes.io/managed-by": harnessFieldManager,
        },
      },
      addressType: "IPv4",
      ports: [{ name: "https", port: opts.port, protocol: "TCP" }],
      endpoints: [{ addresses: [opts.ip], conditions: { ready: true } }],
    } as KubernetesObject,
  ];
}

export function metricsServerRegistration(): KubernetesObject[] {
  return [
    ...externalProcessService({
      namespace: "kube-system",
      name: "metrics-server",
      ip: network.metricsServerIp,
      port: ports.metricsServer,
    }),
    {
      apiVersion: "apiregistration.k8s.io/v1",
      kind: "APIService",
      metadata: { name: "v1beta1.metrics.k8s.io" },
      spec: {
        service: { namespace: "kube-system", name: "metrics-server", port: 443 },
        group: "metrics.k8s.io",
        version: "v1beta1",
        // metrics-server serves a self-signed certificate, as in most installs.
        insecureSkipTLSVerify: true,
        groupPriorityMinimum: 100,
        versionPriority: 100,
      },
    } as KubernetesObject,
  ];
}
