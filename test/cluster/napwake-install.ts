import { readFile } from "node:fs/promises";
import { join } from "node:path";
import {
  ApiextensionsV1Api,
  type KubeConfig,
  KubernetesObjectApi,
  loadAllYaml,
  type V1CustomResourceDefinition,
} from "@kubernetes/client-node";
import { fieldManager } from "../../api/keys.ts";
import { serverSideApply } from "../../kube/apply.ts";
import { repoRoot } from "./paths.ts";
import { type RunningProcess, startProcess, waitFor } from "./process.ts";

const crdFiles = ["manifests/crds/managedworkload.yaml", "manifests/crds/rightsizingpolicy.yaml"];

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
 * Runs the operator as a process inside the cluster's network namespace (kwok pods run nothing), with the
 * sandbox's short check intervals. It logs to `<logDir>/napwake-operator.log`.
 */
export function startOperatorProcess(opts: {
  kubeconfig: string;
  logDir: string;
  prometheusUrl: string;
}): RunningProcess {
  return startProcess({
    name: "napwake-operator",
    command: process.execPath,
    args: [
      join(repoRoot, "bin/napwake.ts"),
      "operator",
      `--kubeconfig=${opts.kubeconfig}`,
      "--namespace=napwake-system",
      "--pod-name=napwake-sandbox",
      "--check-interval=10s",
      "--paused-check-interval=30s",
      `--prometheus-url=${opts.prometheusUrl}`,
      "--health-port=0",
    ],
    logDir: opts.logDir,
  });
}
