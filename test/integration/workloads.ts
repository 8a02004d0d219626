import type { V1Deployment, V1Service } from "@kubernetes/client-node";

/** A Deployment whose kwok pods answer on port 8080 (through the pod backend) and report `cpu` usage. */
export function httpDeployment(opts: {
  namespace: string;
  name: string;
  replicas: number;
  cpu?: string;
}): V1Deployment {
  const labels = { app: opts.name };
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { namespace: opts.namespace, name: opts.name, labels },
    spec: {
      replicas: opts.replicas,
      selector: { matchLabels: labels },
      template: {
        metadata: {
          labels,
          annotations: { "kwok.x-k8s.io/usage-cpu": opts.cpu ?? "10m", "kwok.x-k8s.io/usage-memory": "32Mi" },
        },
        spec: {
          containers: [
            {
              name: "web",
              image: "registry.local/demo-web:1.0",
              ports: [{ name: "http", containerPort: 8080 }],
              resources: { requests: { cpu: "100m", memory: "64Mi" } },
            },
          ],
        },
      },
    },
  };
}

export function httpService(opts: { namespace: string; name: string }): V1Service {
  return {
    apiVersion: "v1",
    kind: "Service",
    metadata: { namespace: opts.namespace, name: opts.name },
    spec: { selector: { app: opts.name }, ports: [{ name: "http", port: 80, targetPort: "http" }] },
  };
}
