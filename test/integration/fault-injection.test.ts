import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { annotations } from "../../api/keys.ts";
import type { ManagedWorkloadController } from "../../controllers/managedworkload/controller.ts";
import type { TargetState } from "../../controllers/managedworkload/observation.ts";
import type { ClusterWrites } from "../../controllers/managedworkload/writes.ts";
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
  readManagedWorkload,
  realWrites,
  requestOnManagedWorkload,
  shiftedClock,
  startController,
} from "./operator-support.ts";
import { httpDeployment } from "./workloads.ts";

const minute = 60_000;

/**
 * Writes that all go through until armed; once armed, `limit` more writes about `workload` are made and every
 * later write fails for good: the operator died there (status writes count as writes too). Writes about other
 * workloads (other test files' leftovers) pass uncounted until the death.
 */
function dyingWrites(
  real: ClusterWrites,
  workload: string,
): ClusterWrites & { made: string[]; arm(limit: number): void } {
  const made: string[] = [];
  let limit = Number.POSITIVE_INFINITY;
  const guard =
    <A extends unknown[], R>(
      kind: string,
      write: (...args: A) => Promise<R>,
      about: (...args: A) => string,
    ) =>
    async (...args: A): Promise<R> => {
      if (made.length >= limit) throw new Error(`operator killed after ${limit} writes`);
      const result = await write(...args);
      // Counting starts at the pause's or resume's first write to the workload: a status the new operator
      // writes about the workload before that (what it restored, its forecast) is not part of the sequence.
      const starts = made.length > 0 || kind !== "status";
      if (Number.isFinite(limit) && about(...args) === workload && starts) made.push(kind);
      return result;
    };
  const target = (t: TargetState) => t.name;
  return {
    made,
    arm(n) {
      limit = n;
    },
    recordPausedFrom: guard("record-paused-from", real.recordPausedFrom, target),
    forgetPausedFrom: guard("forget-paused-from", real.forgetPausedFrom, target),
    // Changes nothing, so it is not one of the writes counted; a killed operator makes it no more.
    async confirmTarget(t) {
      if (made.length >= limit) throw new Error(`operator killed after ${limit} writes`);
      await real.confirmTarget(t);
    },
    scale: guard("scale", real.scale, target),
    apply: guard("apply", real.apply, (o) => o.metadata?.name ?? ""),
    writeStatus: guard("status", real.writeStatus, (mw) => mw.spec.targetRef.name),
  };
}

describe("killing the operator between any two writes of a pause or a resume", () => {
  let clients: Clients;
  let namespace: string;
  const running: ManagedWorkloadController[] = [];

  beforeAll(async () => {
    clients = clusterClients();
    await installManagedWorkloadCrd(clients);
    namespace = await createTestNamespace(clients, "faults");
    // All targets up front, so metrics-server has their pods' CPU by the time each case needs it.
    for (const name of ["p1", "p2", "r1", "r2"]) {
      await clients.apps.createNamespacedDeployment({
        namespace,
        body: httpDeployment({ namespace, name, replicas: 2, cpu: "5m" }),
      });
    }
  });
  afterAll(async () => {
    await Promise.all(running.map((c) => c.stop()));
    await deleteTestNamespace(clients, namespace);
  });

  const deployment = async (name: string) => {
    const d = await clients.apps.readNamespacedDeployment({ namespace, name });
    return { replicas: d.spec?.replicas, pausedFrom: d.metadata?.annotations?.[annotations.pausedFrom] };
  };
  const createMw = (name: string) =>
    clients.custom.createNamespacedCustomObject({
      ...managedWorkloadApi,
      namespace,
      body: managedWorkload(namespace, `${name}.deployment`, name),
    });
  // Each case's controllers see every ManagedWorkload: a finished case removes its own.
  const deleteMw = async (name: string) => {
    await clients.custom.deleteNamespacedCustomObject({
      ...managedWorkloadApi,
      namespace,
      name: `${name}.deployment`,
    });
  };
  const phaseOf = async (name: string) =>
    (await readManagedWorkload(clients, namespace, `${name}.deployment`)).status?.phase;
  const run = async (clock: ReturnType<typeof shiftedClock>, writes?: ClusterWrites) => {
    const controller = await startController(clients, clock, writes);
    running.push(controller);
    return controller;
  };
  const kill = async (controller: ManagedWorkloadController) => {
    await controller.stop();
    running.splice(running.indexOf(controller), 1);
  };

  it.each([1, 2])("a pause killed after write %i is completed by the next operator", async (limit) => {
    const name = `p${limit}`;
    // A clock of its own: earlier cases moved theirs past this workload's idle window.
    const clock = shiftedClock();
    const writes = dyingWrites(realWrites(clients), name);
    const dying = await run(clock, writes);
    await createMw(name);
    await eventually(`${name} seen awake`, async () =>
      (await phaseOf(name)) === "Awake" ? true : undefined,
    );
    writes.arm(limit);
    clock.advance(2 * minute);
    await eventually(
      `the operator dies after ${limit} writes of the pause`,
      async () => (writes.made.length >= limit ? true : undefined),
      120_000,
    );
    expect(writes.made).toEqual(["record-paused-from", "scale", "status"].slice(0, limit));
    await kill(dying);
    const next = await run(clock);
    await eventually(
      `${name} paused from 2`,
      async () => {
        const d = await deployment(name);
        return d.replicas === 0 && d.pausedFrom === "2" && (await phaseOf(name)) === "Paused"
          ? true
          : undefined;
      },
      120_000,
    );
    await kill(next);
    await deleteMw(name);
  });

  it.each([1, 2])("a resume killed after write %i is completed by the next operator", async (limit) => {
    const name = `r${limit}`;
    const clock = shiftedClock();
    const pauser = await run(clock);
    await createMw(name);
    await eventually(`${name} seen awake`, async () =>
      (await phaseOf(name)) === "Awake" ? true : undefined,
    );
    clock.advance(2 * minute);
    await eventually(
      `${name} paused and its status written`,
      async () =>
        (await deployment(name)).replicas === 0 && (await phaseOf(name)) === "Paused" ? true : undefined,
      120_000,
    );
    await kill(pauser);

    const writes = dyingWrites(realWrites(clients), name);
    writes.arm(limit);
    const dying = await run(clock, writes);
    await requestOnManagedWorkload(clients, namespace, `${name}.deployment`, "resume", new Date(clock.now()));
    await eventually(`the operator dies after ${limit} writes of the resume`, async () =>
      writes.made.length >= limit ? true : undefined,
    );
    expect(writes.made).toEqual(["scale", "forget-paused-from", "status"].slice(0, limit));
    await kill(dying);
    await run(clock);
    await eventually(`${name} back at exactly 2 replicas, paused-from gone, Awake`, async () => {
      const d = await deployment(name);
      return d.replicas === 2 && d.pausedFrom === undefined && (await phaseOf(name)) === "Awake"
        ? true
        : undefined;
    });
    expect(await deployment(name)).toEqual({ replicas: 2, pausedFrom: undefined });
    await Promise.all(running.map((c) => c.stop()));
    running.length = 0;
    await deleteMw(name);
  });
});
