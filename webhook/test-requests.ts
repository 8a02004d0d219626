import type { AdmissionRequest, KubeObject } from "./admission.ts";

/** Builders of AdmissionRequests for the handler and server tests. */

export function deployment(
  name: string,
  opts: { replicas?: number; annotations?: Record<string, string>; labels?: Record<string, string> } = {},
): KubeObject {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: {
      name,
      namespace: "shop",
      ...(opts.annotations ? { annotations: opts.annotations } : {}),
      ...(opts.labels ? { labels: opts.labels } : {}),
    },
    spec: {
      replicas: opts.replicas ?? 2,
      selector: { matchLabels: { app: name } },
      template: { metadata: { labels: { app: name } }, spec: { containers: [{ name: "c", image: "x" }] } },
    },
  };
}

export function workloadRequest(
  object: KubeObject,
  opts: { operation?: "CREATE" | "UPDATE"; oldObject?: KubeObject; username?: string; kind?: string } = {},
): AdmissionRequest {
  const kind = opts.kind ?? object.kind ?? "Deployment";
  return {
    uid: "uid-1",
    kind: { group: "apps", version: "v1", kind },
    resource: { group: "apps", version: "v1", resource: `${kind.toLowerCase()}s` },
    name: object.metadata?.name,
    namespace: "shop",
    operation: opts.operation ?? (opts.oldObject ? "UPDATE" : "CREATE"),
    userInfo: { username: opts.username ?? "alice" },
    object,
    ...(opts.oldObject ? { oldObject: opts.oldObject } : {}),
  };
}

export function managedWorkload(
  name: string,
  target: { kind: string; name: string },
  annotations?: Record<string, string>,
): KubeObject {
  return {
    apiVersion: "napwake.dev/v1alpha1",
    kind: "ManagedWorkload",
    metadata: { name, namespace: "shop", ...(annotations ? { annotations } : {}) },
    spec: { targetRef: target },
  };
}

export function managedWorkloadRequest(object: KubeObject, oldObject?: KubeObject): AdmissionRequest {
  return {
    uid: "uid-2",
    kind: { group: "napwake.dev", version: "v1alpha1", kind: "ManagedWorkload" },
    resource: { group: "napwake.dev", version: "v1alpha1", resource: "managedworkloads" },
    name: object.metadata?.name,
    namespace: "shop",
    operation: oldObject ? "UPDATE" : "CREATE",
    userInfo: { username: "alice" },
    object,
    ...(oldObject ? { oldObject } : {}),
  };
}
