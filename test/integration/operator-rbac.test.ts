import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EventsV1Api, type KubernetesObject, loadAllYaml } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { annotations, kedaPausedReplicas, labels } from "../../api/keys.ts";
import type { ManagedWorkload } from "../../api/managedworkload.ts";
import { rightsizingCrd } from "../../api/rightsizing.ts";
import { rightsizingPolicyPlural } from "../../api/rightsizingpolicy.ts";
import { caSecretName, metricsServiceName } from "../../bin/webhooks.ts";
import { serverSideApply } from "../../kube/apply.ts";
import { harnessFieldManager } from "../cluster/bootstrap.ts";
import { network, ports } from "../cluster/layout.ts";
import {
  injectedCaBundle,
  installCrds,
  serviceAccountKubeconfig,
  startOperatorProcess,
  waitForOperatorReady,
  webhookInstall,
} from "../cluster/napwake-install.ts";
import { repoRoot } from "../cluster/paths.ts";
import { httpsGet } from "../cluster/probe.ts";
import type { RunningProcess } from "../cluster/process.ts";
import {
  type Clients,
  clusterClients,
  createTestNamespace,
  deleteTestNamespace,
  eventually,
  freePort,
} from "./cluster.ts";
import { installKedaCrd, kedaApi, readScaledObject } from "./keda.ts";
import { managedWorkloadApi, requestOnManagedWorkload } from "./operator-support.ts";
import { httpDeployment } from "./workloads.ts";

const webhookService = "napwake-webhook";

type RbacDoc = KubernetesObject & {
  roleRef?: { name: string };
  subjects?: { kind?: string; name?: string; namespace?: string }[];
  rules?: { resources?: string[]; resourceNames?: string[] }[];
};

/**
 * The operator's RBAC from `manifests/base/rbac.yaml`, for ServiceAccount `serviceAccount` in `namespace`:
 * cluster-wide names made this test's own, the namespaced Role moved to `namespace`, and the webhook
 * configurations' name as `--webhook-configuration` gives it (the manifest's comment says to change both).
 * `dropResource` removes the grants on one resource, to make a replica whose caches cannot sync.
 */
async function operatorRbac(opts: {
  namespace: string;
  serviceAccount: string;
  configuration: string;
  dropResource?: string;
}): Promise<KubernetesObject[]> {
  const docs = loadAllYaml(await readFile(join(repoRoot, "manifests/base/rbac.yaml"), "utf8")) as RbacDoc[];
  const clusterName = `napwake-operator-${opts.namespace}-${opts.serviceAccount}`;
  const namespacedName = `napwake-operator-${opts.serviceAccount}`;
  return docs
    .filter((doc) => doc.metadata?.name === "napwake-operator")
    .map((doc) => {
      const cluster = doc.kind === "ClusterRole" || doc.kind === "ClusterRoleBinding";
      const name = cluster ? clusterName : namespacedName;
      return {
        ...doc,
        metadata: cluster ? { name } : { name, namespace: opts.namespace },
        ...(doc.roleRef ? { roleRef: { ...doc.roleRef, name } } : {}),
        ...(doc.subjects
          ? {
              subjects: doc.subjects.map((s) => ({
                ...s,
                name: opts.serviceAccount,
                namespace: opts.namespace,
              })),
            }
          : {}),
        ...(doc.rules
          ? {
              rules: doc.rules
                .filter((rule) => !opts.dropResource || !rule.resources?.includes(opts.dropResource))
                .map((rule) =>
                  rule.resourceNames?.includes("napwake")
                    ? { ...rule, resourceNames: [opts.configuration] }
                    : rule,
                ),
            }
          : {}),
      };
    });
}

/** The manifest's metrics reader role under this test's name, bound to `serviceAccount`. */
async function metricsReaderRbac(namespace: string, serviceAccount: string): Promise<KubernetesObject[]> {
  const docs = loadAllYaml(await readFile(join(repoRoot, "manifests/base/rbac.yaml"), "utf8")) as RbacDoc[];
  const reader = docs.find((doc) => doc.metadata?.name === "napwake-metrics-reader");
  if (!reader) throw new Error("manifests/base/rbac.yaml has no napwake-metrics-reader ClusterRole");
  const name = `napwake-metrics-reader-${namespace}`;
  return [
    { ...reader, metadata: { name } },
    {
      apiVersion: "rbac.authorization.k8s.io/v1",
      kind: "ClusterRoleBinding",
      metadata: { name },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name },
      subjects: [{ kind: "ServiceAccount", name: serviceAccount, namespace }],
    } as KubernetesObject,
  ];
}

/**
 * The operator as a process with exactly the permissions the install grants it: opting in, pausing and resuming a
 * workload a KEDA ScaledObject scales, leader election, rightsizing and policy status, with nothing refused.
 */
describe("the operator under its own RBAC", () => {
  let clients: Clients;
  let home: string;
  let work: string;
  let configuration: string;
  let operator: RunningProcess;
  let stuck: RunningProcess;
  let stuckHealthPort: number;
  const metricsPorts = { operator: 0, stuck: 0 };
  let scraperToken = "";
  let logFromReady = 0;
  const policy = `rbac-${Date.now().toString(36)}`;

  beforeAll(async () => {
    clients = clusterClients();
    await installCrds(clients.kc);
    await installKedaCrd(clients);
    home = await createTestNamespace(clients, "rbac-home");
    work = await createTestNamespace(clients, "rbac-work");
    configuration = `napwake-${home}`;
    for (const name of ["napwake-operator", "napwake-stuck", "scraper"]) {
      await clients.core.createNamespacedServiceAccount({ namespace: home, body: { metadata: { name } } });
    }
    await serverSideApply(
      clients.objects,
      [
        ...(await operatorRbac({ namespace: home, serviceAccount: "napwake-operator", configuration })),
        ...(await operatorRbac({
          namespace: home,
          serviceAccount: "napwake-stuck",
          configuration,
          dropResource: "managedworkloads",
        })),
        ...(await metricsReaderRbac(home, "scraper")),
        ...webhookInstall({
          namespace: home,
          service: webhookService,
          configuration,
          ip: network.operatorTestIp,
          port: ports.operatorWebhook,
          excludeNamespaces: [home],
          onlyNamespaces: [work],
        }),
      ],
      harnessFieldManager,
    );
    scraperToken =
      (
        await clients.core.createNamespacedServiceAccountToken({
          namespace: home,
          name: "scraper",
          body: { spec: { expirationSeconds: 3600 } },
        })
      ).status?.token ?? "";
    const startUnder = async (serviceAccount: string, webhookPort: number, flags: string[]) => {
      const dir = await mkdtemp(join(tmpdir(), `${serviceAccount}-rbac-`));
      const healthPort = await freePort();
      const metricsPort = await freePort();
      const process = startOperatorProcess({
        kubeconfig: await serviceAccountKubeconfig({
          kc: clients.kc,
          namespace: home,
          serviceAccount,
          server: clients.kc.getCurrentCluster()?.server ?? "",
          caFile: clients.info.caCert,
          file: join(dir, "kubeconfig"),
          expirationSeconds: 3600,
        }),
        logDir: dir,
        name: serviceAccount,
        flags: [
          `--namespace=${home}`,
          `--pod-name=${serviceAccount}-rbac-test`,
          `--health-port=${healthPort}`,
          `--webhook-host=${network.operatorTestIp}`,
          `--webhook-port=${webhookPort}`,
          `--webhook-service=${webhookService}`,
          `--webhook-configuration=${configuration}`,
          "--cert-source=self",
          `--metrics-port=${metricsPort}`,
          ...flags,
        ],
      });
      return { process, healthPort, metricsPort };
    };
    const main = await startUnder("napwake-operator", ports.operatorWebhook, [
      "--leader-elect",
      `--prometheus-url=${clients.info.prometheusUrl}`,
      "--rightsizing-interval=1m",
      "--check-interval=2s",
      "--paused-check-interval=2s",
    ]);
    operator = main.process;
    metricsPorts.operator = main.metricsPort;
    const second = await startUnder("napwake-stuck", await freePort(), ["--no-rightsizing"]);
    stuck = second.process;
    stuckHealthPort = second.healthPort;
    metricsPorts.stuck = second.metricsPort;
    // Until the authorizer's cache has the bindings, lists may be refused and the operator retries them.
    await waitForOperatorReady(operator, main.healthPort, 120_000);
    logFromReady = (await readFile(operator.logFile, "utf8")).length;
  });

  afterAll(async () => {
    await operator?.stop();
    await stuck?.stop();
    await clients.custom
      .deleteClusterCustomObject({ ...rightsizingCrd, plural: rightsizingPolicyPlural, name: policy })
      .catch(() => undefined);
    const rbacApi = "rbac.authorization.k8s.io/v1";
    const clusterNames = [
      `napwake-operator-${home}-napwake-operator`,
      `napwake-operator-${home}-napwake-stuck`,
      `napwake-metrics-reader-${home}`,
    ];
    for (const name of clusterNames) {
      for (const kind of ["ClusterRoleBinding", "ClusterRole"]) {
        await clients.objects
          .delete({ apiVersion: rbacApi, kind, metadata: { name } })
          .catch(() => undefined);
      }
    }
    for (const kind of ["MutatingWebhookConfiguration", "ValidatingWebhookConfiguration"]) {
      await clients.objects
        .delete({ apiVersion: "admissionregistration.k8s.io/v1", kind, metadata: { name: configuration } })
        .catch(() => undefined);
    }
    await deleteTestNamespace(clients, work);
    await deleteTestNamespace(clients, home);
  });

  /** GET /metrics from one of the processes, as the scraper, trusting the CA in the shared Secret. */
  const scrape = async (port: number) => {
    const secret = await clients.core.readNamespacedSecret({ namespace: home, name: caSecretName });
    const ca = Buffer.from(secret.data?.["tls.crt"] ?? "", "base64").toString();
    return httpsGet(
      `https://${network.operatorTestIp}:${port}/metrics`,
      { ca },
      {
        servername: `${metricsServiceName}.${home}.svc`,
        headers: { authorization: `Bearer ${scraperToken}` },
      },
    );
  };

  const mwName = "web.deployment";
  const readMw = async () =>
    (await clients.custom.getNamespacedCustomObject({
      ...managedWorkloadApi,
      namespace: work,
      name: mwName,
    })) as ManagedWorkload;
  const replicas = async () =>
    (await clients.apps.readNamespacedDeployment({ namespace: work, name: "web" })).spec?.replicas;
  const held = async () =>
    (await readScaledObject(clients, work, "web")).metadata?.annotations?.[kedaPausedReplicas];

  it("opts a labelled workload in, pauses it and its ScaledObject by request, and resumes both", async () => {
    await clients.apps.createNamespacedDeployment({
      namespace: work,
      body: {
        ...httpDeployment({ namespace: work, name: "web", replicas: 2 }),
        metadata: { name: "web", namespace: work, labels: { app: "web", [labels.managed]: "true" } },
      },
    });
    await clients.custom.createNamespacedCustomObject({
      ...kedaApi,
      namespace: work,
      body: {
        apiVersion: "keda.sh/v1alpha1",
        kind: "ScaledObject",
        metadata: { name: "web" },
        spec: {
          scaleTargetRef: { name: "web" },
          minReplicaCount: 1,
          maxReplicaCount: 4,
          triggers: [{ type: "cpu", metricType: "Utilization", metadata: { value: "80" } }],
        },
      },
    });
    await eventually(
      "opted in",
      async () => ((await readMw().catch(() => undefined))?.status?.phase === "Awake" ? true : undefined),
      90_000,
    );
    await requestOnManagedWorkload(clients, work, mwName, "pause", new Date());
    await eventually(
      "paused, its ScaledObject held",
      async () => ((await replicas()) === 0 && (await held()) === "0" ? true : undefined),
      90_000,
    );
    await requestOnManagedWorkload(clients, work, mwName, "resume", new Date());
    await eventually(
      "resumed, its ScaledObject released",
      async () => ((await replicas()) === 2 && (await held()) === undefined ? true : undefined),
      90_000,
    );
    // The resume is finished by the reconcile that sees the scale made: it tells Resumed and forgets the count.
    const reasons = await eventually("the resume finished and told", async () => {
      const told = (
        await clients.kc.makeApiClient(EventsV1Api).listNamespacedEvent({ namespace: work })
      ).items.map((e) => e.reason);
      return told.includes("Resumed") ? told : undefined;
    });
    expect(reasons).toEqual(expect.arrayContaining(["Paused", "Resumed"]));
    await eventually("paused-from forgotten", async () => {
      const web = await clients.apps.readNamespacedDeployment({ namespace: work, name: "web" });
      return web.metadata?.annotations?.[annotations.pausedFrom] === undefined ? true : undefined;
    });
  });

  it("rightsizes the workload and writes the status of the policy that governs it", async () => {
    await clients.custom.createClusterCustomObject({
      ...rightsizingCrd,
      plural: rightsizingPolicyPlural,
      body: {
        apiVersion: rightsizingCrd.apiVersion,
        kind: "RightsizingPolicy",
        metadata: { name: policy },
        spec: {
          selector: { namespaceSelector: { matchLabels: { "kubernetes.io/metadata.name": work } } },
          cpu: { mode: "audit" },
        },
      },
    });
    await eventually(
      "the policy governs the workload",
      async () => {
        const status = (
          (await clients.custom.getClusterCustomObject({
            ...rightsizingCrd,
            plural: rightsizingPolicyPlural,
            name: policy,
          })) as {
            status?: { matchedWorkloads?: number };
          }
        ).status;
        return status?.matchedWorkloads === 1 ? true : undefined;
      },
      90_000,
    );
    await eventually(
      "a Rightsizing with a status",
      async () => {
        const rs = (await clients.custom
          .getNamespacedCustomObject({ ...rightsizingCrd, namespace: work, name: "web.deployment" })
          .catch(() => undefined)) as { status?: { modes?: unknown } } | undefined;
        return rs?.status?.modes ? true : undefined;
      },
      90_000,
    );
  });

  it("publishes its webhooks' CA, refuses a malformed annotation and serves /metrics to a bound scraper", async () => {
    const caBundle = await eventually("the caBundle to be injected", () =>
      injectedCaBundle(clients.kc, configuration),
    );
    const secret = await clients.core.readNamespacedSecret({ namespace: home, name: caSecretName });
    expect(caBundle).toBe(secret.data?.["tls.crt"]);
    let attempt = 0;
    const refusal = await eventually("the validating webhook to refuse", async () => {
      try {
        await clients.apps.createNamespacedDeployment({
          namespace: work,
          body: {
            ...httpDeployment({ namespace: work, name: `bad-${attempt}`, replicas: 1 }),
            metadata: { name: `bad-${attempt++}`, annotations: { [annotations.pausedFrom]: "abc" } },
          },
        });
        return undefined;
      } catch (error) {
        return String((error as { body?: unknown }).body);
      }
    });
    expect(refusal).toContain("must be a positive integer");
    const reply = await eventually("a 200 from /metrics", async () => {
      const r = await scrape(metricsPorts.operator);
      return r.status === 200 ? r : undefined;
    });
    expect(reply.body).toMatch(/^napwake_workloads\{phase="Awake"\} \d+$/m);
  });

  it("serves /metrics from a replica whose caches cannot sync, with no workload counts, and keeps it unready", async () => {
    const reply = await eventually("a 200 from the stuck replica's /metrics", async () => {
      const r = await scrape(metricsPorts.stuck);
      return r.status === 200 ? r : undefined;
    });
    expect(reply.body).toContain("process_cpu_user_seconds_total");
    expect(reply.body).not.toMatch(/^napwake_workloads\{/m);
    expect((await fetch(`http://127.0.0.1:${stuckHealthPort}/readyz`)).status).toBe(503);
    const stuckLog = await readFile(stuck.logFile, "utf8");
    expect(stuckLog).toContain("managedworkloads.napwake.dev is forbidden");
    expect(stuckLog).toContain("cannot list resource");
  });

  it("lets a workload go when its label is removed, and was refused nothing on the way", async () => {
    await clients.apps.patchNamespacedDeployment({
      namespace: work,
      name: "web",
      body: [{ op: "remove", path: `/metadata/labels/${labels.managed.replace("/", "~1")}` }],
    });
    await eventually(
      "its ManagedWorkload deleted",
      async () => ((await readMw().catch(() => undefined)) === undefined ? true : undefined),
      60_000,
    );
    const log = (await readFile(operator.logFile, "utf8")).slice(logFromReady);
    // RBAC's refusal, not any 403: other test files' namespaces still terminating refuse new content too.
    expect(log).not.toMatch(/cannot (get|list|watch|create|update|patch|delete) resource/);
  });
});
