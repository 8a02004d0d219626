/**
 * Merges kubeconfig files as kubectl does, so the plugin talks to the cluster `kubectl get` would: `--kubeconfig`
 * alone, else every file KUBECONFIG lists (missing or empty ones skipped, the first definition of a name winning,
 * the current context from the first file that sets one), else ~/.kube/config. client-node's own merge takes the
 * last file's context and refuses a name defined twice. Each file is read by client-node, which resolves
 * certificate paths against the file's directory (but not a `token-file`).
 *
 * A cluster served over plain http (`kubectl proxy`) has no TLS to verify: client-node refuses one unless told to
 * skip verification, so it is told.
 */
import { existsSync, readFileSync } from "node:fs";
import { delimiter } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";

type Named = { name: string };

export function loadKubeconfig(
  kc: KubeConfig,
  source: { file?: string; env?: string },
  exists: (path: string) => boolean = existsSync,
): void {
  const loaded = source.file
    ? [fromFile(source.file)]
    : source.env
      ? fromEnv(source.env, exists)
      : [fromDefault()];
  const firstOf = <T extends Named>(lists: readonly (readonly T[])[]): T[] => {
    const byName = new Map<string, T>();
    for (const item of lists.flat()) if (!byName.has(item.name)) byName.set(item.name, item);
    return [...byName.values()];
  };
  kc.loadFromOptions({
    clusters: firstOf(loaded.map((one) => one.clusters)).map((cluster) =>
      cluster.server.startsWith("http://") ? { ...cluster, skipTLSVerify: true } : cluster,
    ),
    users: firstOf(loaded.map((one) => one.users)),
    contexts: firstOf(loaded.map((one) => one.contexts)),
    currentContext: loaded.find((one) => one.currentContext)?.currentContext ?? "",
  });
}

function fromEnv(env: string, exists: (path: string) => boolean): KubeConfig[] {
  const paths = env.split(delimiter).filter((path) => path !== "");
  const present = paths.filter((path) => exists(path) && readFileSync(path, "utf8").trim() !== "");
  if (present.length === 0) {
    throw new Error(`none of the files KUBECONFIG names exists, or has anything in it: ${paths.join(", ")}`);
  }
  return present.map(fromFile);
}

function fromFile(path: string): KubeConfig {
  const one = new KubeConfig();
  one.loadFromFile(path);
  return one;
}

function fromDefault(): KubeConfig {
  const one = new KubeConfig();
  one.loadFromDefault();
  return one;
}
