import type { KubernetesObject } from "@kubernetes/client-node";
import { type ContainerSeries, containerUsageOpenMetrics } from "./history.ts";

export const demo = { namespace: "demo", name: "hello", port: 80, idleWindow: "2m" } as const;

/** The sandbox's demo: a Deployment whose kwok pods answer HTTP (through the pod backend) and its Service. */
export function demoObjects(): KubernetesObject[] {
  const labels = { app: demo.name };
  return [
    { apiVersion: "v1", kind: "Namespace", metadata: { name: demo.namespace } },
    {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { namespace: demo.namespace, name: demo.name, labels },
      spec: {
        replicas: 2,
        selector: { matchLabels: labels },
        template: {
          metadata: {
            labels,
            annotations: { "kwok.x-k8s.io/usage-cpu": "20m", "kwok.x-k8s.io/usage-memory": "48Mi" },
          },
          spec: {
            containers: [
              {
                name: "web",
                image: "registry.local/hello:1.0",
                ports: [{ name: "http", containerPort: 8080 }],
                resources: { requests: { cpu: "250m", memory: "128Mi" }, limits: { memory: "256Mi" } },
              },
            ],
          },
        },
      },
    },
    {
      apiVersion: "v1",
      kind: "Service",
      metadata: { namespace: demo.namespace, name: demo.name },
      spec: { selector: labels, ports: [{ name: "http", port: demo.port, targetPort: "http" }] },
    },
  ] as KubernetesObject[];
}

/**
 * The demo's ManagedWorkload, as a GitOps repository would hold it: a short idle window so the sandbox shows a
 * pause within minutes (the pods use 2 x 20m CPU, under the 50m threshold).
 */
export function demoManagedWorkload(): KubernetesObject {
  return {
    apiVersion: "napwake.dev/v1alpha1",
    kind: "ManagedWorkload",
    metadata: { namespace: demo.namespace, name: `${demo.name}.deployment` },
    spec: {
      targetRef: { apiVersion: "apps/v1", kind: "Deployment", name: demo.name },
      idle: { window: demo.idleWindow, cpuThreshold: "50m" },
    },
  } as KubernetesObject;
}

/**
 * Two weeks of the demo's usage, as Prometheus would have scraped it: busy 08:00-18:00 UTC at about 60m CPU
 * per pod, quiet at 15m otherwise, 50-60 MiB of memory. Loaded before Napwake starts, so its first recommender
 * run has a recommendation to show (the pods ask for 250m and 128Mi).
 */
export function demoHistory(endMs: number): string {
  const pod = (suffix: string, scale: number): ContainerSeries => ({
    namespace: demo.namespace,
    pod: `${demo.name}-6b7c8d9f5d-${suffix}`,
    container: "web",
    // A sample at t holds the five minutes before it (the counter grew by that much since the one before).
    cpuCores: (t) => {
      const hour = new Date(t - 5 * 60_000).getUTCHours();
      const wiggle = 0.8 + 0.4 * Math.abs(Math.sin(t / 3_600_000));
      return (hour >= 8 && hour < 18 ? 0.06 : 0.015) * wiggle * scale;
    },
    memoryBytes: (t) => (50 + 10 * Math.abs(Math.sin(t / 86_400_000))) * 2 ** 20 * scale,
  });
  return containerUsageOpenMetrics([pod("wwwww", 1), pod("bbbbb", 0.9)], {
    end: endMs,
    durationMs: 14 * 86_400_000,
    stepMs: 5 * 60_000,
  });
}
