import { nodeCount, nodeIp, nodeName, ports } from "./layout.ts";

/**
 * Prometheus scrapes kwok's fake kubelets, so container_cpu_usage_seconds_total and
 * container_memory_working_set_bytes follow the pods' usage annotations live, as cAdvisor would.
 */
export function prometheusConfigYaml(): string {
  const jobs = Array.from({ length: nodeCount }, (_, i) => {
    return `  - job_name: kubelet-resource-${nodeName(i)}
    scheme: https
    tls_config:
      insecure_skip_verify: true
    metrics_path: /metrics/nodes/${nodeName(i)}/metrics/resource
    static_configs:
      - targets: ["${nodeIp(i)}:${ports.kubelet}"]
        labels:
          node: ${nodeName(i)}`;
  });
  return `global:
  scrape_interval: 15s
  evaluation_interval: 15s
scrape_configs:
${jobs.join("\n")}
`;
}
