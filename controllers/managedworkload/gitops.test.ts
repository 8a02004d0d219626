import { describe, expect, it } from "vitest";
import { fieldManager } from "../../api/keys.ts";
import { type ManagedFieldsEntry, replicasOwner } from "./gitops.ts";

const web = { kind: "Deployment", name: "web" };
const time = "2026-11-02T09:14:03Z";

// The rest of a Deployment's spec, as appliers own it beside replicas.
const template = {
  "f:selector": {},
  "f:template": {
    "f:metadata": { "f:labels": { ".": {}, "f:app": {} } },
    "f:spec": { "f:containers": { 'k:{"name":"web"}': { ".": {}, "f:image": {}, "f:name": {} } } },
  },
};

function entry(
  manager: string,
  operation: "Apply" | "Update",
  opts: { replicas?: boolean; subresource?: string } = {},
): ManagedFieldsEntry & Record<string, unknown> {
  const spec =
    opts.subresource === "scale"
      ? { "f:replicas": {} }
      : { ...(opts.replicas === false ? {} : { "f:replicas": {} }), ...template };
  return {
    manager,
    operation,
    apiVersion: opts.subresource === "scale" ? "autoscaling/v1" : "apps/v1",
    time,
    fieldsType: "FieldsV1",
    fieldsV1: { "f:spec": spec },
    ...(opts.subresource ? { subresource: opts.subresource } : {}),
  };
}

// Every Deployment has these: the Deployment controller's status, and its revision annotation.
const controllerStatus: ManagedFieldsEntry = {
  manager: "kube-controller-manager",
  operation: "Update",
  subresource: "status",
  fieldsV1: { "f:status": { "f:replicas": {}, "f:readyReplicas": {} } },
};
const controllerRevision: ManagedFieldsEntry = {
  manager: "kube-controller-manager",
  operation: "Update",
  fieldsV1: { "f:metadata": { "f:annotations": { ".": {}, "f:deployment.kubernetes.io/revision": {} } } },
};
const base = [controllerRevision, controllerStatus];

describe("replicasOwner", () => {
  it.each([
    {
      name: "Argo CD with server-side apply",
      fields: [entry("argocd-controller", "Apply"), ...base],
      want: { tool: "argocd", manager: "argocd-controller" },
      says: /ignoreDifferences: \[\{group: apps, kind: Deployment, name: web, jsonPointers: \[\/spec\/replicas\]\}\].*RespectIgnoreDifferences=true/,
    },
    {
      name: "Argo CD with client-side apply",
      fields: [entry("argocd-application-controller", "Update"), ...base],
      want: { tool: "argocd", manager: "argocd-application-controller" },
      says: /RespectIgnoreDifferences=true/,
    },
    {
      name: "Flux from a Kustomization",
      fields: [entry("kustomize-controller", "Apply"), ...base],
      want: { tool: "flux", manager: "kustomize-controller" },
      says: /Remove spec\.replicas from the Deployment manifest in Git.*"op": "remove", "path": "\/spec\/replicas"/,
    },
    {
      name: "Flux from a HelmRelease",
      fields: [entry("helm-controller", "Update"), ...base],
      want: { tool: "flux", manager: "helm-controller" },
      says: /template spec\.replicas only when autoscaling is off.*postRenderers/,
    },
    {
      name: "Helm",
      fields: [entry("helm", "Update"), ...base],
      want: { tool: "helm", manager: "helm" },
      says: /do not template spec\.replicas, or set it only when autoscaling is off/,
    },
    {
      name: "kubectl apply (client-side)",
      fields: [entry("kubectl-client-side-apply", "Update"), ...base],
      want: { tool: "kubectl", manager: "kubectl-client-side-apply" },
      says: /Remove spec\.replicas from the Deployment manifest you apply/,
    },
    {
      name: "kubectl apply --server-side",
      fields: [entry("kubectl", "Apply"), ...base],
      want: { tool: "kubectl", manager: "kubectl" },
      says: /Remove spec\.replicas from the Deployment manifest you apply/,
    },
    {
      name: "another server-side applier",
      fields: [entry("Terraform", "Apply"), ...base],
      want: { tool: "other", manager: "Terraform" },
      says: /^Terraform sets spec\.replicas.*Remove spec\.replicas from the Deployment manifest it applies/,
    },
    {
      name: "Argo CD before kubectl when both own replicas",
      fields: [entry("kubectl-client-side-apply", "Update"), entry("argocd-controller", "Apply"), ...base],
      want: { tool: "argocd", manager: "argocd-controller" },
      says: /^Argo CD sets spec\.replicas of Deployment web \(field manager argocd-controller\)/,
    },
  ])("reports $name", ({ fields, want, says }) => {
    const owner = replicasOwner(web, fields, fieldManager);
    expect(owner).toMatchObject(want);
    expect(owner?.message).toMatch(says);
  });

  it.each([
    { name: "no managedFields", fields: undefined },
    { name: "only the controllers' own entries", fields: base },
    {
      name: "a tool that applies the Deployment without replicas",
      fields: [entry("argocd-controller", "Apply", { replicas: false }), ...base],
    },
    {
      name: "an HPA's writes through the scale subresource",
      fields: [
        entry("argocd-controller", "Apply", { replicas: false }),
        entry("kube-controller-manager", "Update", { subresource: "scale" }),
        ...base,
      ],
    },
    {
      name: "Napwake's own scale writes",
      fields: [entry(fieldManager, "Update", { subresource: "scale" }), ...base],
    },
    {
      name: "a one-off kubectl create",
      fields: [entry("kubectl-create", "Update"), ...base],
    },
    {
      name: "an unknown client's one-off update",
      fields: [entry("kubernetes-client-javascript", "Update"), ...base],
    },
  ])("reports nothing for $name", ({ fields }) => {
    expect(replicasOwner(web, fields, fieldManager)).toBeNull();
  });

  it("names the StatefulSet in the Argo CD setting", () => {
    const owner = replicasOwner(
      { kind: "StatefulSet", name: "db" },
      [entry("argocd-controller", "Apply")],
      fieldManager,
    );
    expect(owner?.message).toContain("kind: StatefulSet, name: db, jsonPointers: [/spec/replicas]");
  });
});
