import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EventsV1Api, type KubernetesObject, loadAllYaml } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { annotations, kedaPausedReplicas, labels } from "../../api/keys.ts";
import type { ManagedWorkload } from "../../api/managedworkload.ts";
import { rightsizingCrd } from "../../api/rightsizing.ts";
import { rightsizingPolicyPlural } from "../../api/rightsizingpolicy.ts";
import { serverSideApply } from "../../kube/apply.ts";
import { harnessFieldManager } from "../cluster/bootstrap.ts";
import {
  installCrds,
  serviceAccountKubeconfig,
  startOperatorProcess,
  waitForOperatorReady,
} from "../cluster/napwake-install.ts";
import { repoRoot } from "../cluster/paths.ts";
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

/**
 * The operator's RBAC from `manifests/base/rbac.yaml`, for a ServiceAccount in `namespace`: cluster-wide names
 * made this test's own, the namespaced Role moved to `namespace`. The scraper's role is not the operator's.
 */
async function operatorRbac(namespace: string): Promise<KubernetesObject[]> {
  const docs = loadAllYaml(
    await readFile(join(repoRoot, "manifests/base/rbac.yaml"), "utf8"),
  ) as (KubernetesObject & {
    roleRef?: { name: string };
    subjects?: { namespace?: string }[];
  })[];
  const clusterName = `napwake-operator-${namespace}`;
  return docs
    .filter((doc) => doc.metadata?.name === "napwake-operator")
    .map((doc) => {
      const cluster = doc.kind === "ClusterRole" || doc.kind === "ClusterRoleBinding";
      return {
        ...doc,
        metadata: cluster ? { name: clusterName } : { name: "napwake-operator", namespace },
        ...(doc.roleRef
          ? { roleRef: { ...doc.roleRef, name: cluster ? clusterName : "napwake-operator" } }
          : {}),
        ...(doc.subjects ? { subjects: doc.subjects.map((s) => ({ ...s, namespace })) } : {}),
      };
    });
}

/**
 * The operator as a process with exactly the permissions the install grants it: opting in, pausing and resuming a
 * workload a KEDA ScaledObject scales, leader election, rightsizing and policy status, with nothing refused.
 */
describe("the operator under its own RBAC", () => {
  let clients: Clients;
  let home: string;
  let work: string;
  let operator: RunningProcess;
  let logFromReady = 0;
  const policy = `rbac-${Date.now().toString(36)}`;

  beforeAll(async () => {
    clients = clusterClients();
    await installCrds(clients.kc);
    await installKedaCrd(clients);
    home = await createTestNamespace(clients, "rbac-home");
    work = await createTestNamespace(clients, "rbac-work");
    await clients.core.createNamespacedServiceAccount({
      namespace: home,
      body: { metadata: { name: "napwake-operator" } },
    });
    await serverSideApply(clients.objects, await operatorRbac(home), harnessFieldManager);
    const dir = await mkdtemp(join(tmpdir(), "napwake-operator-rbac-"));
    const kubeconfig = await serviceAccountKubeconfig({
      kc: clients.kc,
      namespace: home,
      serviceAccount: "napwake-operator",
      server: clients.kc.getCurrentCluster()?.server ?? "",
      caFile: clients.info.caCert,
      file: join(dir, "kubeconfig"),
      expirationSeconds: 3600,
    });
    const healthPort = await freePort();
    operator = startOperatorProcess({
      kubeconfig,
      logDir: dir,
      flags: [
        `--namespace=${home}`,
        "--pod-name=napwake-operator-rbac-test",
        "--leader-elect",
        `--prometheus-url=${clients.info.prometheusUrl}`,
        "--rightsizing-interval=1m",
        `--health-port=${healthPort}`,
        "--webhook-port=0",
        "--metrics-port=0",
        "--check-interval=2s",
        "--paused-check-interval=2s",
      ],
    });
    // Until the authorizer's cache has the bindings, lists may be refused and the operator retries them.
    await waitForOperatorReady(operator, healthPort, 120_000);
    logFromReady = (await readFile(operator.logFile, "utf8")).length;
  });

  afterAll(async () => {
    await operator?.stop();
    await clients.custom
      .deleteClusterCustomObject({ ...rightsizingCrd, plural: rightsizingPolicyPlural, name: policy })
      .catch(() => undefined);
    for (const kind of ["ClusterRoleBinding", "ClusterRole"]) {
      await clients.objects
        .delete({
          apiVersion: "rbac.authorization.k8s.io/v1",
          kind,
          metadata: { name: `napwake-operator-${home}` },
        })
        .catch(() => undefined);
    }
    await deleteTestNamespace(clients, work);
    await deleteTestNamespace(clients, home);
  });

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
    const reasons = (
      await clients.kc.makeApiClient(EventsV1Api).listNamespacedEvent({ namespace: work })
    ).items.map((e) => e.reason);
    expect(reasons).toEqual(expect.arrayContaining(["Paused", "Resumed"]));
    const web = await clients.apps.readNamespacedDeployment({ namespace: work, name: "web" });
    expect(web.metadata?.annotations?.[annotations.pausedFrom]).toBeUndefined();
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
