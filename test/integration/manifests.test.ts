import { execFile } from "node:child_process";
import { join } from "node:path";
import { promisify } from "node:util";
import { ApiException } from "@kubernetes/client-node";
import { beforeAll, describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { parseQuantity } from "../../kube/quantity.ts";
import { type Clients, clusterClients } from "./cluster.ts";
import { repoRoot } from "./crds.ts";

const run = promisify(execFile);

/** The install namespace: fixed by design (the manifests, the webhooks' exclusion, the operator's RBAC). */
const installNamespace = "napwake-system";

/** Every kustomization a user may apply, by the path `kubectl apply -k` takes. */
const kustomizations = {
  base: "manifests/base",
  sandbox: "kustomize/overlays/sandbox",
  production: "kustomize/overlays/production",
  "dry-run": "kustomize/overlays/dry-run",
  prometheus: "kustomize/overlays/prometheus",
  "cert-manager": "kustomize/overlays/cert-manager",
} as const;
type Name = keyof typeof kustomizations;
const names = Object.keys(kustomizations) as Name[];
/** cert-manager's needs cert-manager's CRDs, which the local control plane does not have: build only. */
const appliable = names.filter((n) => n !== "cert-manager");

interface Manifest {
  apiVersion: string;
  kind: string;
  metadata: {
    name: string;
    namespace?: string;
    annotations?: Record<string, string>;
    labels?: Record<string, string>;
  };
  // biome-ignore lint/suspicious/noExplicitAny: manifests are read as untyped YAML and asserted on.
  [field: string]: any;
}
interface Rule {
  apiGroups?: string[];
  resources?: string[];
  resourceNames?: string[];
  nonResourceURLs?: string[];
  verbs: string[];
}

describe("the install manifests", () => {
  let clients: Clients;
  const built = new Map<Name, Manifest[]>();

  const kubectl = async (...args: string[]) => {
    const { binDir, kubeconfig } = clients.info;
    const { stdout } = await run(join(binDir, "kubectl"), [`--kubeconfig=${kubeconfig}`, ...args], {
      cwd: repoRoot,
      maxBuffer: 64 * 1024 * 1024,
    });
    return stdout;
  };
  const objects = (name: Name) => built.get(name) ?? [];
  const find = (name: Name, kind: string, objectName: string) => {
    const found = objects(name).find((o) => o.kind === kind && o.metadata.name === objectName);
    if (!found) throw new Error(`${kind} ${objectName} is missing from ${name}`);
    return found;
  };
  const operator = (name: Name) => find(name, "Deployment", "napwake-operator");
  const container = (name: Name) => operator(name).spec.template.spec.containers[0];

  beforeAll(async () => {
    clients = clusterClients();
    for (const name of names) {
      const yaml = await kubectl("kustomize", kustomizations[name]);
      built.set(
        name,
        parseAllDocuments(yaml).map((doc) => doc.toJS() as Manifest),
      );
    }
    // A server-side dry run persists nothing, so the namespaced objects of an install need their
    // namespace to exist already. An empty namespace, left in place: it is the install's fixed home.
    await clients.core.createNamespace({ body: { metadata: { name: installNamespace } } }).catch((err) => {
      if (!(err instanceof ApiException && err.code === 409)) throw err;
    });
  });

  it.each(names)("%s builds with kubectl kustomize into the whole install", (name) => {
    const kinds = new Set(objects(name).map((o) => `${o.kind}/${o.metadata.name}`));
    for (const expected of [
      "Namespace/napwake-system",
      "CustomResourceDefinition/managedworkloads.napwake.dev",
      "CustomResourceDefinition/rightsizingpolicies.napwake.dev",
      "ServiceAccount/napwake-operator",
      "ClusterRole/napwake-operator",
      "ClusterRoleBinding/napwake-operator",
      "Role/napwake-operator",
      "RoleBinding/napwake-operator",
      "Deployment/napwake-operator",
      "Service/napwake-webhook",
      "Service/napwake-metrics",
      "MutatingWebhookConfiguration/napwake",
      "ValidatingWebhookConfiguration/napwake",
    ]) {
      expect(kinds).toContain(expected);
    }
  });

  it.each(appliable)("%s is accepted by the API server (kubectl apply --dry-run=server -k)", async (name) => {
    const out = await kubectl("apply", "--dry-run=server", "-k", kustomizations[name]);
    expect(out).toContain("deployment.apps/napwake-operator");
    expect(out).toContain("validatingwebhookconfiguration.admissionregistration.k8s.io/napwake");
  });

  it.each(names)(
    "%s gives people view and edit of ManagedWorkloads through Kubernetes' own roles",
    (name) => {
      const role = (roleName: string) => find(name, "ClusterRole", roleName);
      expect(role("napwake-view").metadata.labels).toMatchObject({
        "rbac.authorization.k8s.io/aggregate-to-view": "true",
        "rbac.authorization.k8s.io/aggregate-to-edit": "true",
      });
      expect(role("napwake-edit").metadata.labels).toMatchObject({
        "rbac.authorization.k8s.io/aggregate-to-edit": "true",
      });
      expect(role("napwake-edit").metadata.labels).not.toHaveProperty(
        "rbac.authorization.k8s.io/aggregate-to-view",
      );
      // Rightsizings are the operator's to write.
      expect(role("napwake-edit").rules.flatMap((r: Rule) => r.resources)).toEqual(["managedworkloads"]);
    },
  );

  it.each(names)("%s grants no wildcard and writes workloads only through the scale subresource", (name) => {
    const rules: Rule[] = objects(name)
      .filter(
        (o) => (o.kind === "ClusterRole" || o.kind === "Role") && o.metadata.name === "napwake-operator",
      )
      .flatMap((o) => o.rules as Rule[]);
    for (const rule of rules) {
      expect(rule.verbs).not.toContain("*");
      expect(rule.apiGroups ?? []).not.toContain("*");
      expect(rule.resources ?? []).not.toContain("*");
      expect(rule.nonResourceURLs ?? []).not.toContain("*");
    }
    const onWorkloads = rules.filter(
      (r) =>
        r.apiGroups?.includes("apps") &&
        r.resources?.some((res) => res === "deployments" || res === "statefulsets"),
    );
    expect(onWorkloads.length).toBeGreaterThan(0);
    for (const rule of onWorkloads) {
      expect(rule.verbs).not.toContain("update");
      expect(rule.verbs).not.toContain("create");
      expect(rule.verbs).not.toContain("delete");
    }
    const scale = rules.filter((r) => r.apiGroups?.includes("apps")).flatMap((r) => r.resources ?? []);
    expect(scale).toEqual(expect.arrayContaining(["deployments/scale", "statefulsets/scale"]));
    // The CA Secret and the caBundles are the operator's to keep only with its own CA; with cert-manager's,
    // cert-manager keeps them and the operator gets no grant for either.
    const ownCa = container(name).args.includes("--cert-source=self");
    const webhookConfigs = rules.filter((r) => r.apiGroups?.includes("admissionregistration.k8s.io"));
    expect(webhookConfigs.map((r) => r.resourceNames)).toEqual(ownCa ? [["napwake"]] : []);
    // What the operator writes, and nothing more: a grant is added with the code that needs it.
    const writes = rules
      .filter((r) => r.verbs.some((verb) => !["get", "list", "watch"].includes(verb)))
      .flatMap((r) => (r.resources ?? []).map((res) => `${res}: ${r.verbs.join(",")}`))
      .sort();
    const ownCaWrites = [
      "mutatingwebhookconfigurations: get,list,watch,patch",
      "secrets: create",
      "secrets: get,update",
      "validatingwebhookconfigurations: get,list,watch,patch",
    ];
    const always = [
      "deployments/scale: update",
      "deployments: get,list,watch,patch",
      "events: create",
      "leases: create",
      "leases: get,update",
      "managedworkloads/status: patch",
      "managedworkloads: get,list,watch,create,patch,delete",
      "rightsizingpolicies/status: patch",
      "rightsizings/status: patch",
      "rightsizings: get,list,watch,create,patch,delete",
      "scaledobjects: get,list,watch,patch",
      "statefulsets/scale: update",
      "statefulsets: get,list,watch,patch",
      "subjectaccessreviews: create",
      "tokenreviews: create",
    ];
    expect(writes).toEqual([...always, ...(ownCa ? ownCaWrites : [])].sort());
  });

  it.each(names)("%s runs the operator non-root, read-only, without privileges", (name) => {
    const pod = operator(name).spec.template.spec;
    expect(pod.serviceAccountName).toBe("napwake-operator");
    expect(pod.securityContext).toMatchObject({
      runAsNonRoot: true,
      seccompProfile: { type: "RuntimeDefault" },
    });
    const c = container(name);
    expect(c.securityContext).toMatchObject({
      runAsNonRoot: true,
      readOnlyRootFilesystem: true,
      allowPrivilegeEscalation: false,
      capabilities: { drop: ["ALL"] },
      seccompProfile: { type: "RuntimeDefault" },
    });
    expect(c.resources.requests).toMatchObject({ cpu: expect.any(String), memory: expect.any(String) });
    expect(c.resources.limits).toMatchObject({ memory: expect.any(String) });
    expect(c.volumeMounts).toContainEqual({ name: "tmp", mountPath: "/tmp" });
    expect(c.livenessProbe.httpGet).toEqual({ path: "/healthz", port: "health" });
    expect(c.readinessProbe.httpGet).toEqual({ path: "/readyz", port: "health" });
    expect(c.env.map((e: { name: string }) => e.name)).toEqual(["NODE_OPTIONS", "POD_NAMESPACE", "POD_NAME"]);
    // The V8 heap leaves room within the memory limit for buffers and native memory.
    const heapMiB = Number(/--max-old-space-size=(\d+)/.exec(c.env[0].value)?.[1]);
    expect(heapMiB * 2 ** 20).toBeLessThanOrEqual(parseQuantity(c.resources.limits.memory) * 0.8);
    expect(c.args[0]).toBe("operator");
  });

  it.each(names)("%s routes every webhook to the operator's webhook port", (name) => {
    const service = find(name, "Service", "napwake-webhook");
    const port = service.spec.ports.find((p: { port: number }) => p.port === 443);
    const podLabels = operator(name).spec.template.metadata.labels;
    // The sandbox's Services have no selector: their EndpointSlices point at the operator process.
    if (name === "sandbox") expect(service.spec.selector).toBeUndefined();
    else expect(podLabels).toMatchObject(service.spec.selector);
    const named = container(name).ports.find((p: { name: string }) => p.name === port.targetPort);
    expect(named.containerPort).toBe(9443);
    expect(container(name).args).toContain("--webhook-port=9443");
    for (const kind of ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"]) {
      for (const webhook of find(name, kind, "napwake").webhooks) {
        expect(webhook.clientConfig.service).toMatchObject({
          namespace: installNamespace,
          name: "napwake-webhook",
          port: 443,
        });
        expect(webhook.clientConfig.caBundle).toBeUndefined();
      }
    }
  });

  it("sets each overlay's flags", () => {
    const args = (name: Name) => container(name).args as string[];
    expect(args("base")).toContain("--cert-source=self");
    // Leader election even with one replica, so a rollout never runs two reconcilers at once.
    expect(args("base")).toContain("--leader-elect");
    expect(args("base")).not.toContain("--dry-run");
    expect(args("sandbox")).toEqual(
      expect.arrayContaining(["--check-interval=10s", "--prometheus-url=http://127.0.0.1:9090"]),
    );
    expect(container("sandbox").image).toBe("napwake:dev");
    // The sandbox runs the operator as a process under this ServiceAccount; its Services carry no selector.
    expect(operator("sandbox").spec.replicas).toBe(0);
    expect(find("sandbox", "Service", "napwake-webhook").spec.selector).toBeUndefined();
    expect(args("dry-run")).toContain("--dry-run");
    expect(args("prometheus").some((a) => a.startsWith("--prometheus-url=http"))).toBe(true);
    expect(args("production").filter((a) => a === "--leader-elect")).toHaveLength(1);
    expect(operator("production").spec.replicas).toBe(2);
    expect(container("production").image).not.toBe("napwake:dev");
    expect(operator("production").spec.template.spec.topologySpreadConstraints).toHaveLength(2);
    const pdb = find("production", "PodDisruptionBudget", "napwake-operator");
    expect(pdb.spec.minAvailable).toBe(1);
    // Unready replicas never hold a drain.
    expect(pdb.spec.unhealthyPodEvictionPolicy).toBe("AlwaysAllow");
  });

  it("cert-manager: issues from a CA of its own, injects that CA into both webhook configurations and mounts the issued Secret", () => {
    const certificate = find("cert-manager", "Certificate", "napwake-webhook");
    const ca = find("cert-manager", "Certificate", "napwake-ca");
    // The serving certificate renews against a CA that stays: what the API server trusts does not change with it.
    expect(ca.spec.isCA).toBe(true);
    expect(ca.spec.issuerRef.name).toBe(find("cert-manager", "Issuer", "napwake-selfsigned").metadata.name);
    const caIssuer = find("cert-manager", "Issuer", certificate.spec.issuerRef.name);
    expect(caIssuer.spec.ca.secretName).toBe(ca.spec.secretName);
    const injectFrom = `${ca.metadata.namespace}/${ca.metadata.name}`;
    expect(injectFrom).toBe("napwake-system/napwake-ca");
    for (const kind of ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"]) {
      expect(find("cert-manager", kind, "napwake").metadata.annotations).toEqual({
        "cert-manager.io/inject-ca-from": injectFrom,
      });
    }
    expect(certificate.spec.dnsNames).toContain("napwake-webhook.napwake-system.svc");
    // The metrics endpoint serves the same certificate.
    expect(certificate.spec.dnsNames).toContain("napwake-metrics.napwake-system.svc");
    const c = container("cert-manager");
    expect(c.args).toContain("--cert-source=cert-manager");
    expect(c.args).not.toContain("--cert-source=self");
    const mount = c.volumeMounts.find((m: { mountPath: string }) => m.mountPath === "/etc/napwake/tls");
    const volume = operator("cert-manager").spec.template.spec.volumes.find(
      (v: { name: string }) => v.name === mount?.name,
    );
    expect(volume?.secret?.secretName).toBe(certificate.spec.secretName);
  });
});
