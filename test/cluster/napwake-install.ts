import { execFile } from "node:child_process";
import { readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import {
  AdmissionregistrationV1Api,
  ApiextensionsV1Api,
  CoreV1Api,
  type KubeConfig,
  type KubernetesObject,
  KubernetesObjectApi,
  loadAllYaml,
  type V1CustomResourceDefinition,
} from "@kubernetes/client-node";
import { fieldManager } from "../../api/keys.ts";
import { serverSideApply } from "../../kube/apply.ts";
import { napwakeWebhooks, webhookConfigurations } from "../../webhook/registry.ts";
import { externalProcessService } from "./bootstrap.ts";
import { repoRoot } from "./paths.ts";
import { type RunningProcess, startProcess, waitFor } from "./process.ts";

const run = promisify(execFile);

const crdFiles = [
  "manifests/crds/managedworkload.yaml",
  "manifests/crds/rightsizingpolicy.yaml",
  "manifests/crds/rightsizing.yaml",
];

/** Installs Napwake's CRDs and waits until they are served. */
export async function installCrds(kc: KubeConfig): Promise<void> {
  for (const file of crdFiles) await installCrdFile(kc, join(repoRoot, file));
}

/**
 * Applies the CRDs in a YAML file, read as the client reads YAML so that schema keys (defaults, CEL rules)
 * survive its serialiser, and waits until each is Established. Idempotent: a forced apply under Napwake's
 * field manager.
 */
export async function installCrdFile(kc: KubeConfig, path: string): Promise<V1CustomResourceDefinition[]> {
  const objects = KubernetesObjectApi.makeApiClient(kc);
  const apiext = kc.makeApiClient(ApiextensionsV1Api);
  const docs = loadAllYaml(await readFile(path, "utf8")) as V1CustomResourceDefinition[];
  await serverSideApply(objects, docs, fieldManager, { force: true });
  const established: V1CustomResourceDefinition[] = [];
  for (const crd of docs) {
    const name = crd.metadata?.name ?? "";
    const isEstablished = async () => {
      const live = await apiext.readCustomResourceDefinition({ name });
      return live.status?.conditions?.some((c) => c.type === "Established" && c.status === "True")
        ? live
        : undefined;
    };
    established.push(await waitFor(isEstablished, { what: `CRD ${name} established`, timeoutMs: 30_000 }));
  }
  return established;
}

/**
 * Runs `napwake operator` as a process inside the cluster's network namespace (kwok pods run nothing) with
 * the given flags. It logs to `<logDir>/<name>.log`.
 */
export function startOperatorProcess(opts: {
  kubeconfig: string;
  logDir: string;
  flags: readonly string[];
  name?: string;
}): RunningProcess {
  return startProcess({
    name: opts.name ?? "napwake-operator",
    command: process.execPath,
    args: [join(repoRoot, "bin/napwake.ts"), "operator", `--kubeconfig=${opts.kubeconfig}`, ...opts.flags],
    logDir: opts.logDir,
  });
}

/**
 * What the install manifests hold for the webhooks of an operator running as a process at `ip:port`: the
 * Service (selector-less, with an EndpointSlice to the process) and the webhook configurations generated
 * from the registry, without a caBundle (the operator injects it).
 */
export function webhookInstall(opts: {
  namespace: string;
  service: string;
  configuration: string;
  ip: string;
  port: number;
  excludeNamespaces: readonly string[];
  onlyNamespaces?: readonly string[];
}): KubernetesObject[] {
  // The handlers are never called here: only names, paths, rules and policies are read.
  const entries = napwakeWebhooks({
    lookup: { ownerOf: () => undefined },
    operatorUsername: "",
    now: Date.now,
  });
  const { mutating, validating } = webhookConfigurations(entries, {
    name: opts.configuration,
    service: { namespace: opts.namespace, name: opts.service },
    excludeNamespaces: opts.excludeNamespaces,
    ...(opts.onlyNamespaces ? { onlyNamespaces: opts.onlyNamespaces } : {}),
    labels: { "app.kubernetes.io/name": "napwake", "app.kubernetes.io/component": "webhook" },
  });
  return [
    ...externalProcessService({
      namespace: opts.namespace,
      name: opts.service,
      ip: opts.ip,
      port: opts.port,
    }),
    mutating as KubernetesObject,
    validating as KubernetesObject,
  ];
}

/** Waits until the operator's /readyz answers 200 (caches synced, a serving certificate loaded). */
export async function waitForOperatorReady(
  operator: RunningProcess,
  healthPort: number,
  timeoutMs = 60_000,
): Promise<void> {
  await waitFor(async () => ((await fetch(`http://127.0.0.1:${healthPort}/readyz`)).ok ? true : undefined), {
    what: "the operator to be ready",
    timeoutMs,
    intervalMs: 250,
    process: operator,
  });
}

/** The caBundle of every webhook of both configurations named `name`, once all are set and agree. */
export async function injectedCaBundle(kc: KubeConfig, name: string): Promise<string | undefined> {
  const api = kc.makeApiClient(AdmissionregistrationV1Api);
  const mutating = await api.readMutatingWebhookConfiguration({ name });
  const validating = await api.readValidatingWebhookConfiguration({ name });
  const bundles = [...(mutating.webhooks ?? []), ...(validating.webhooks ?? [])].map(
    (w) => w.clientConfig.caBundle,
  );
  const first = bundles[0];
  return first && bundles.every((b) => b === first) ? first : undefined;
}

/**
 * Installs Napwake as a platform team would: `kubectl apply --server-side -k` of an overlay (the sandbox's:
 * CRDs, RBAC, ServiceAccount, Services, webhook configurations, a Deployment kept at zero replicas), then waits
 * for the CRDs to be served.
 */
export async function applyOverlay(opts: {
  binDir: string;
  kubeconfig: string;
  overlay: string;
}): Promise<void> {
  await run(join(opts.binDir, "kubectl"), [
    `--kubeconfig=${opts.kubeconfig}`,
    "apply",
    "--server-side",
    "--force-conflicts",
    "--field-manager=napwake-install",
    "-k",
    join(repoRoot, opts.overlay),
  ]);
  await run(join(opts.binDir, "kubectl"), [
    `--kubeconfig=${opts.kubeconfig}`,
    "wait",
    "--for=condition=Established",
    "--timeout=60s",
    "crd/managedworkloads.napwake.dev",
    "crd/rightsizingpolicies.napwake.dev",
  ]);
}

/** EndpointSlices that point the install's selector-less Services at an operator running as a process. */
export function operatorEndpoints(opts: {
  namespace: string;
  ip: string;
  webhookPort: number;
  metricsPort: number;
}) {
  const slice = (service: string, portName: string, port: number): KubernetesObject =>
    ({
      apiVersion: "discovery.k8s.io/v1",
      kind: "EndpointSlice",
      metadata: {
        namespace: opts.namespace,
        name: `${service}-process`,
        labels: {
          "kubernetes.io/service-name": service,
          "endpointslice.kubernetes.io/managed-by": "napwake-test-harness",
        },
      },
      addressType: "IPv4",
      ports: [{ name: portName, port, protocol: "TCP" }],
      endpoints: [{ addresses: [opts.ip], conditions: { ready: true } }],
    }) as KubernetesObject;
  return [
    slice("napwake-webhook", "webhook", opts.webhookPort),
    slice("napwake-metrics", "metrics", opts.metricsPort),
  ];
}

/**
 * A kubeconfig that authenticates as a ServiceAccount with a token from the TokenRequest API, so a process
 * outside any pod runs with exactly the permissions the install's RBAC grants.
 */
export async function serviceAccountKubeconfig(opts: {
  kc: KubeConfig;
  namespace: string;
  serviceAccount: string;
  server: string;
  caFile: string;
  file: string;
  /** The context's default namespace; the ServiceAccount's own when not given. */
  contextNamespace?: string;
  /** How long the token lives; a week when not given. */
  expirationSeconds?: number;
}): Promise<string> {
  const token = await opts.kc.makeApiClient(CoreV1Api).createNamespacedServiceAccountToken({
    namespace: opts.namespace,
    name: opts.serviceAccount,
    body: { spec: { expirationSeconds: opts.expirationSeconds ?? 7 * 24 * 3600, audiences: [] } },
  });
  await writeFile(
    opts.file,
    `apiVersion: v1
kind: Config
clusters:
- name: sandbox
  cluster:
    server: ${opts.server}
    certificate-authority: ${opts.caFile}
contexts:
- name: ${opts.serviceAccount}
  context:
    cluster: sandbox
    user: ${opts.serviceAccount}
    namespace: ${opts.contextNamespace ?? opts.namespace}
current-context: ${opts.serviceAccount}
users:
- name: ${opts.serviceAccount}
  user:
    token: ${token.status?.token ?? ""}
`,
    { mode: 0o600 },
  );
  return opts.file;
}
