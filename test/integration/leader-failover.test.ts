import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoordinationV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startOperatorProcess, waitForOperatorReady } from "../cluster/napwake-install.ts";
import type { RunningProcess } from "../cluster/process.ts";
import {
  type Clients,
  clusterClients,
  createTestNamespace,
  deleteTestNamespace,
  eventually,
} from "./cluster.ts";
import {
  installManagedWorkloadCrd,
  managedWorkload,
  managedWorkloadApi,
  requestOnManagedWorkload,
} from "./operator-support.ts";
import { httpDeployment } from "./workloads.ts";

/** Two real operator processes with --leader-elect: only the leader acts, and a standby takes over when it dies. */
describe("leader failover between operator processes", () => {
  let clients: Clients;
  let namespace: string;
  let operatorNamespace: string;
  const operators = new Map<string, RunningProcess>();

  beforeAll(async () => {
    clients = clusterClients();
    await installManagedWorkloadCrd(clients);
    namespace = await createTestNamespace(clients, "failover");
    // Napwake never pauses in its own namespace: the operators (and their Lease) live in another one.
    operatorNamespace = await createTestNamespace(clients, "failover-op");
    const logDir = await mkdtemp(join(tmpdir(), "napwake-failover-"));
    for (const [i, name] of ["replica-a", "replica-b"].entries()) {
      const proc = startOperatorProcess({
        name,
        kubeconfig: clients.info.kubeconfig,
        logDir,
        flags: [
          `--namespace=${operatorNamespace}`,
          `--pod-name=${name}`,
          "--leader-elect",
          "--check-interval=2s",
          "--webhook-port=0",
          "--metrics-port=0",
          `--health-port=${18_181 + i}`,
        ],
      });
      operators.set(name, proc);
      await waitForOperatorReady(proc, 18_181 + i);
    }
  });
  afterAll(async () => {
    await Promise.all([...operators.values()].map((p) => p.stop(2_000)));
    await deleteTestNamespace(clients, namespace);
    await deleteTestNamespace(clients, operatorNamespace);
  });

  const holder = async () =>
    (
      await clients.kc
        .makeApiClient(CoordinationV1Api)
        .readNamespacedLease({ namespace: operatorNamespace, name: "napwake-operator" })
    ).spec?.holderIdentity;
  const requestPause = (mw: string) => requestOnManagedWorkload(clients, namespace, mw, "pause", new Date());
  const replicas = async (name: string) =>
    (await clients.apps.readNamespacedDeployment({ namespace, name })).spec?.replicas;

  it("a standby reconciles within the lease time after the leader is killed", {
    timeout: 180_000,
  }, async () => {
    const leader = await eventually("one replica holds the Lease", async () => {
      const h = await holder();
      return h && operators.has(h) ? h : undefined;
    });
    for (const name of ["before", "after"]) {
      await clients.apps.createNamespacedDeployment({
        namespace,
        body: httpDeployment({ namespace, name, replicas: 2 }),
      });
      await clients.custom.createNamespacedCustomObject({
        ...managedWorkloadApi,
        namespace,
        body: managedWorkload(namespace, `${name}.deployment`, name),
      });
    }
    await requestPause("before.deployment");
    await eventually("the leader pauses on request", async () =>
      (await replicas("before")) === 0 ? true : undefined,
    );

    // kill -9: no release, the standby must wait for the Lease to expire.
    process.kill(operators.get(leader)?.pid ?? 0, "SIGKILL");
    await requestPause("after.deployment");
    await eventually(
      "the standby pauses on request",
      async () => ((await replicas("after")) === 0 ? true : undefined),
      60_000,
    );
    const standby = [...operators.keys()].find((n) => n !== leader);
    expect(await holder()).toBe(standby);
  });
});
