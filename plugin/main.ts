/**
 * kubectl-napwake: the kubectl plugin's IO shell (bin/kubectl-napwake runs it on the repo's Node 24).
 * Parsing, resolving, messages and formatting are pure, in plugin/; this file reads and patches the cluster.
 */
import {
  AppsV1Api,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  type V1Deployment,
  type V1StatefulSet,
} from "@kubernetes/client-node";
import type { ManagedWorkload, TargetKind } from "../api/managedworkload.ts";
import { managedWorkloadCrd, unreadableManagedWorkload } from "../api/managedworkload.ts";
import { type Rightsizing, rightsizingCrd } from "../api/rightsizing.ts";
import { type Attempt, describeApiError, type FailedRequest } from "./api-errors.ts";
import { type Command, type Connection, exitCodes, parseCommand } from "./args.ts";
import { loadKubeconfig } from "./kubeconfig.ts";
import {
  formatRecommendationsTable,
  noRecommendationsMessage,
  recommendationRows,
} from "./recommendations.ts";
import {
  clusterNow,
  notFoundMessage,
  notManagedMessage,
  planRequest,
  requestTime,
  type TargetFacts,
  targetMissingMessage,
} from "./request.ts";
import {
  formatStatusTable,
  noRowsMessage,
  replicaCounts,
  statusRows,
  type TargetReplicas,
} from "./status.ts";
import { parseWorkloadRef, resolveWorkload, type WorkloadRef } from "./workload-ref.ts";

/** An error whose message is for the person at the terminal: printed as is, exit code 1. */
class PluginError extends Error {}

const mwResource = `${managedWorkloadCrd.plural}.${managedWorkloadCrd.group}`;
const rszResource = `${rightsizingCrd.plural}.${rightsizingCrd.group}`;
const targetResource: Record<TargetKind, string> = {
  Deployment: "deployments.apps",
  StatefulSet: "statefulsets.apps",
};

interface Cluster {
  apps: AppsV1Api;
  custom: CustomObjectsApi;
  namespace: string;
  server: string;
}

function connect(conn: Connection): Cluster {
  const kc = new KubeConfig();
  try {
    loadKubeconfig(kc, {
      ...(conn.kubeconfig ? { file: conn.kubeconfig } : {}),
      ...(process.env.KUBECONFIG ? { env: process.env.KUBECONFIG } : {}),
    });
    if (conn.context) {
      if (!kc.getContextObject(conn.context))
        throw new Error(`no context "${conn.context}" in the kubeconfig`);
      kc.setCurrentContext(conn.context);
    }
  } catch (err) {
    throw new PluginError(`cannot load the kubeconfig: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!kc.getCurrentCluster()) throw new PluginError(noClusterMessage(kc));
  return {
    apps: kc.makeApiClient(AppsV1Api),
    custom: kc.makeApiClient(CustomObjectsApi),
    namespace: kc.getContextObject(kc.getCurrentContext())?.namespace || "default",
    server: kc.getCurrentCluster()?.server ?? "(no cluster in the kubeconfig)",
  };
}

/** Why the kubeconfig gives no cluster to talk to, and what to do. */
function noClusterMessage(kc: KubeConfig): string {
  const context = kc.getCurrentContext();
  if (!context)
    return "the kubeconfig sets no current context: pick one with --context, or kubectl config use-context <name>";
  if (!kc.getContextObject(context)) {
    return `the kubeconfig's current context "${context}" is not defined in it: pick another with --context, or kubectl config use-context <name>`;
  }
  return `the kubeconfig's context "${context}" names no cluster it defines: fix the context, or pick another with --context`;
}

/** Runs one API request; a failure becomes a PluginError that says what was attempted. */
async function call<T>(cluster: Cluster, attempt: Attempt, request: () => Promise<T>): Promise<T> {
  try {
    return await request();
  } catch (err) {
    throw new PluginError(describeApiError(err as FailedRequest, attempt, cluster.server));
  }
}

const crdRef = {
  group: managedWorkloadCrd.group,
  version: managedWorkloadCrd.version,
  plural: managedWorkloadCrd.plural,
};

async function listManagedWorkloads(cluster: Cluster, namespace: string | null): Promise<ManagedWorkload[]> {
  return (await listManagedWorkloadsWithDate(cluster, namespace)).items;
}

/** The ManagedWorkloads, and the `Date` the API server answered with (its clock, which the operator shares). */
async function listManagedWorkloadsWithDate(
  cluster: Cluster,
  namespace: string | null,
): Promise<{ items: ManagedWorkload[]; date: string | undefined }> {
  const answer = await call(cluster, { verb: "list", resource: mwResource, namespace }, () =>
    namespace === null
      ? cluster.custom.listClusterCustomObjectWithHttpInfo(crdRef)
      : cluster.custom.listNamespacedCustomObjectWithHttpInfo({ ...crdRef, namespace }),
  );
  // One stored without a spec (a CRD that did not require one) is left out, as the operator leaves it out.
  const items = (answer.data as { items: ManagedWorkload[] }).items.filter((mw) => {
    const why = unreadableManagedWorkload(mw);
    if (why)
      process.stderr.write(
        `warning: ManagedWorkload ${mw.metadata.namespace}/${mw.metadata.name} is left out: ${why}\n`,
      );
    return why === null;
  });
  return { items, date: answer.headers.date };
}

/** The target, or null when it does not exist. */
async function readTarget(
  cluster: Cluster,
  namespace: string,
  kind: TargetKind,
  name: string,
): Promise<TargetFacts | null> {
  const attempt: Attempt = { verb: "get", resource: targetResource[kind], namespace, name };
  try {
    const object: V1Deployment | V1StatefulSet =
      kind === "Deployment"
        ? await cluster.apps.readNamespacedDeployment({ namespace, name })
        : await cluster.apps.readNamespacedStatefulSet({ namespace, name });
    return {
      kind,
      name,
      replicas: object.spec?.replicas ?? 1,
      annotations: object.metadata?.annotations ?? {},
      labels: object.metadata?.labels ?? {},
    };
  } catch (err) {
    if ((err as FailedRequest).code === 404) return null;
    throw new PluginError(describeApiError(err as FailedRequest, attempt, cluster.server));
  }
}

async function request(command: Extract<Command, { kind: "request" }>, now: () => number): Promise<string> {
  const ref = parseWorkloadRef(command.workload);
  if ("error" in ref) throw new PluginError(ref.error);
  const cluster = connect(command);
  const namespace = command.namespace ?? cluster.namespace;
  // The patch is made on the ManagedWorkload as read: a pause or a wake made meanwhile moves the time the stamp
  // must come after (a pause by hand is one stamped after the last pause), so a conflict reads it again.
  for (let attempt = 1; ; attempt++) {
    const { mw, target, date } = await requestedWorkload(cluster, namespace, ref);
    const plan = planRequest(command.action, mw, target, requestTime(date, now(), command.action, mw));
    const what: Attempt = { verb: "patch", resource: mwResource, namespace, name: mw.metadata.name };
    try {
      await cluster.custom.patchNamespacedCustomObject(
        { ...crdRef, namespace, name: mw.metadata.name, body: plan.patch },
        setHeaderOptions("Content-Type", PatchStrategy.MergePatch),
      );
      return `${plan.message}\n`;
    } catch (err) {
      if ((err as FailedRequest).code === 409 && attempt < requestAttempts) continue;
      throw new PluginError(describeApiError(err as FailedRequest, what, cluster.server));
    }
  }
}

/**
 * The other namespaces where `ref` names a managed workload: where the person likely meant. Nothing when the
 * ManagedWorkloads of every namespace may not be listed.
 */
async function managedElsewhere(cluster: Cluster, namespace: string, ref: WorkloadRef): Promise<string[]> {
  const all = await listManagedWorkloads(cluster, null).catch(() => [] as ManagedWorkload[]);
  return [...Map.groupBy(all, (mw) => mw.metadata.namespace)]
    .filter(([ns, mws]) => ns !== namespace && resolveWorkload(ref, mws).kind === "managed")
    .map(([ns]) => ns)
    .sort();
}

/** Patches of a request made on a ManagedWorkload that kept changing under them before the plugin gives up. */
const requestAttempts = 3;

/** The ManagedWorkload `ref` names in `namespace`, its target, and the API server's time of the read. */
async function requestedWorkload(
  cluster: Cluster,
  namespace: string,
  ref: WorkloadRef,
): Promise<{ mw: ManagedWorkload; target: TargetFacts; date: string | undefined }> {
  const listed = await listManagedWorkloadsWithDate(cluster, namespace);
  const resolved = resolveWorkload(ref, listed.items);
  if (resolved.kind === "unmanaged") {
    const { kind, name } = resolved.target;
    const exists = await readTarget(cluster, namespace, kind, name);
    if (exists) throw new PluginError(notManagedMessage(kind, name, namespace, exists.labels));
    // A bare name that is no Deployment may be a StatefulSet, managed or not.
    const statefulSet = ref.kind === null ? await readTarget(cluster, namespace, "StatefulSet", name) : null;
    if (statefulSet)
      throw new PluginError(notManagedMessage("StatefulSet", name, namespace, statefulSet.labels));
    throw new PluginError(
      notFoundMessage(ref.kind, name, namespace, await managedElsewhere(cluster, namespace, ref)),
    );
  }
  const mw = resolved.mw;
  const target = await readTarget(cluster, namespace, mw.spec.targetRef.kind, mw.spec.targetRef.name);
  if (!target) throw new PluginError(targetMissingMessage(mw));
  return { mw, target, date: listed.date };
}

async function listTargets(
  cluster: Cluster,
  namespace: string | null,
  warn: (text: string) => void,
): Promise<Map<string, TargetReplicas>> {
  const list =
    (resource: string, request: () => Promise<{ items: (V1Deployment | V1StatefulSet)[] }>) => () =>
      call(cluster, { verb: "list", resource, namespace }, request);
  return replicaCounts(
    [
      {
        kind: "Deployment",
        list: list(targetResource.Deployment, () =>
          namespace === null
            ? cluster.apps.listDeploymentForAllNamespaces()
            : cluster.apps.listNamespacedDeployment({ namespace }),
        ),
      },
      {
        kind: "StatefulSet",
        list: list(targetResource.StatefulSet, () =>
          namespace === null
            ? cluster.apps.listStatefulSetForAllNamespaces()
            : cluster.apps.listNamespacedStatefulSet({ namespace }),
        ),
      },
    ],
    warn,
  );
}

async function status(
  command: Extract<Command, { kind: "status" }>,
  now: () => number,
  warn: (text: string) => void,
): Promise<string> {
  const cluster = connect(command);
  const namespace = command.allNamespaces ? null : (command.namespace ?? cluster.namespace);
  const { items: mws, date } = await listManagedWorkloadsWithDate(cluster, namespace);
  const targets = await listTargets(cluster, namespace, warn);
  // Ages by the cluster's clock, as the operator measures idle time: a laptop's may be minutes off.
  const rows = statusRows(mws, targets, clusterNow(date, now()));
  if (command.output === "json") return `${JSON.stringify(rows, null, 2)}\n`;
  if (!rows.length) {
    warn(noRowsMessage(namespace));
    return "";
  }
  return formatStatusTable(rows, { allNamespaces: command.allNamespaces });
}

const rszRef = {
  group: rightsizingCrd.group,
  version: rightsizingCrd.version,
  plural: rightsizingCrd.plural,
};

async function listRightsizings(cluster: Cluster, namespace: string | null): Promise<Rightsizing[]> {
  const list = await call(cluster, { verb: "list", resource: rszResource, namespace }, () =>
    namespace === null
      ? cluster.custom.listClusterCustomObject(rszRef)
      : cluster.custom.listNamespacedCustomObject({ ...rszRef, namespace }),
  );
  return (list as { items: Rightsizing[] }).items;
}

async function recommendations(
  command: Extract<Command, { kind: "recommendations" }>,
  warn: (text: string) => void,
): Promise<string> {
  const ref = command.workload === undefined ? null : parseWorkloadRef(command.workload);
  if (ref && "error" in ref) throw new PluginError(ref.error);
  const cluster = connect(command);
  const namespace = command.allNamespaces ? null : (command.namespace ?? cluster.namespace);
  const rows = recommendationRows(await listRightsizings(cluster, namespace), ref);
  if (!rows.length) {
    // Asked for by name, like `kubectl get <kind> <name>`: nothing found is an error.
    if (ref) throw new PluginError(noRecommendationsMessage(namespace, ref).trimEnd());
    warn(noRecommendationsMessage(namespace, ref));
    return "";
  }
  return formatRecommendationsTable(rows, { allNamespaces: command.allNamespaces });
}

async function main(argv: string[]): Promise<number> {
  const out = (text: string) => process.stdout.write(text);
  const err = (text: string) => process.stderr.write(text);
  const command = parseCommand(argv);
  try {
    switch (command.kind) {
      case "help":
        out(command.text);
        return exitCodes.ok;
      case "usage-error":
        err(`error: ${command.message}\n\n${command.text}`);
        return exitCodes.usage;
      case "request":
        out(await request(command, Date.now));
        return exitCodes.ok;
      case "status":
        out(await status(command, Date.now, err));
        return exitCodes.ok;
      case "recommendations":
        out(await recommendations(command, err));
        return exitCodes.ok;
    }
  } catch (e) {
    if (!(e instanceof PluginError)) throw e;
    err(`error: ${e.message}\n`);
    return exitCodes.error;
  }
}

process.exitCode = await main(process.argv.slice(2));
