import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import type { TestProject } from "vitest/node";
import { ensureBinaries } from "./binaries.ts";
import { startControlPlane } from "./control-plane.ts";
import { startHarnessApi } from "./harness-api.ts";
import { startPodBackend } from "./pod-backend.ts";

export interface ClusterInfo {
  kubeconfig: string;
  binDir: string;
  stateDir: string;
  caCert: string;
  caKey: string;
  prometheusUrl: string;
  /** See harness-api.ts: what test workers ask of the process that owns the cluster. */
  harnessUrl: string;
}

declare module "vitest" {
  export interface ProvidedContext {
    cluster: ClusterInfo;
  }
}

/** One control plane per test run, shared by the integration suites; each test works in its own namespace. */
export default async function setup(project: TestProject) {
  if (process.env.NAPWAKE_IN_NETNS !== "1") {
    throw new Error(
      "integration tests need the cluster's network namespace: run them with `npm run test:integration` " +
        "(it wraps vitest in test/cluster/netns-run.sh)",
    );
  }
  const binDir = await ensureBinaries();
  const stateDir = await mkdtemp(join(tmpdir(), "napwake-cluster-"));
  const started = Date.now();
  const cluster = await startControlPlane({ binDir, stateDir });
  const kc = new KubeConfig();
  kc.loadFromFile(cluster.kubeconfig);
  const backend = await startPodBackend(kc);
  const harness = await startHarnessApi(cluster.prometheus);
  process.stderr.write(`[cluster] ready in ${Date.now() - started} ms; state in ${stateDir}\n`);
  project.provide("cluster", {
    kubeconfig: cluster.kubeconfig,
    binDir,
    stateDir,
    caCert: cluster.pki.caCert,
    caKey: cluster.pki.caKey,
    prometheusUrl: cluster.prometheus.url,
    harnessUrl: harness.url,
  });
  return async () => {
    await harness.stop();
    await backend.stop();
    await cluster.stop();
    await rm(stateDir, { recursive: true, force: true });
  };
}
