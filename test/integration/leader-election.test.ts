import { CoordinationV1Api } from "@kubernetes/client-node";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type LeaderElectionTimings, LeaderElector, type LeaseClient } from "../../kube/leader-election.ts";
import {
  type Clients,
  clusterClients,
  createTestNamespace,
  deleteTestNamespace,
  eventually,
} from "./cluster.ts";

/** Short timings so that failovers take seconds; the same ratios as the defaults' guarantees need. */
const fast: LeaderElectionTimings = { leaseDurationMs: 3_000, renewDeadlineMs: 2_000, retryPeriodMs: 250 };

describe("leader election on a real Lease", () => {
  let clients: Clients;
  let namespace: string;
  let coordination: CoordinationV1Api;
  const running: LeaderElector[] = [];

  beforeAll(async () => {
    clients = clusterClients();
    coordination = clients.kc.makeApiClient(CoordinationV1Api);
    namespace = await createTestNamespace(clients, "leader");
  });
  afterEach(async () => {
    await Promise.all(running.splice(0).map((e) => e.stop({ release: false })));
  });
  afterAll(async () => {
    await deleteTestNamespace(clients, namespace);
  });

  /** A journal of who started and stopped leading, in order, and a check that two never lead at once. */
  function election(lease: string, timings: LeaderElectionTimings = fast) {
    const journal: string[] = [];
    const leaders = new Set<string>();
    const overlaps: string[] = [];
    const partitioned = new Set<string>();
    const elector = (identity: string) => {
      // Cut off from the API server while partitioned: every call fails as a broken connection would.
      const guard = <T>(call: () => Promise<T>) =>
        partitioned.has(identity) ? Promise.reject(new Error("partitioned")) : call();
      const client: LeaseClient = {
        readNamespacedLease: (p) => guard(() => coordination.readNamespacedLease(p)),
        createNamespacedLease: (p) => guard(() => coordination.createNamespacedLease(p)),
        replaceNamespacedLease: (p) => guard(() => coordination.replaceNamespacedLease(p)),
      };
      const e = new LeaderElector({
        client,
        namespace,
        name: lease,
        identity,
        ...timings,
        onStartedLeading: (signal) => {
          if (leaders.size > 0) overlaps.push(`${identity} started while ${[...leaders]} led`);
          leaders.add(identity);
          journal.push(`${identity} started`);
          return new Promise<void>((resolve) =>
            signal.addEventListener("abort", () => {
              leaders.delete(identity);
              resolve();
            }),
          );
        },
        onStoppedLeading: () => journal.push(`${identity} stopped`),
      });
      running.push(e);
      return e;
    };
    const leader = (electors: LeaderElector[]) =>
      eventually("a leader", async () => {
        const leading = electors.filter((e) => e.isLeader);
        return leading.length === 1 ? leading[0] : undefined;
      });
    return { journal, overlaps, partitioned, elector, leader };
  }

  const readLease = (name: string) => coordination.readNamespacedLease({ name, namespace });

  it("of two candidates exactly one leads, and the Lease names it", async () => {
    const el = election("one-leader");
    const a = el.elector("a");
    const b = el.elector("b");
    a.start();
    b.start();
    const leader = await el.leader([a, b]);
    const lease = await readLease("one-leader");
    expect(lease.spec?.holderIdentity).toBe(leader === a ? "a" : "b");
    expect(lease.spec?.leaseDurationSeconds).toBe(3);
    expect(lease.spec?.leaseTransitions).toBe(0);
    // Several renewals later still one leader, and the renewals happened.
    await eventually("a renewal", async () => {
      const renewed = await readLease("one-leader");
      return renewed.metadata?.resourceVersion !== lease.metadata?.resourceVersion ? true : undefined;
    });
    expect([a.isLeader, b.isLeader].filter(Boolean)).toHaveLength(1);
    expect(el.overlaps).toEqual([]);
  });

  it("when the leader dies without releasing, the standby leads within lease duration plus retry period", async () => {
    const el = election("failover");
    const a = el.elector("a");
    a.start();
    await el.leader([a]);
    const b = el.elector("b");
    b.start();
    await a.stop({ release: false });
    const before = await readLease("failover");
    expect(before.spec?.holderIdentity).toBe("a");
    // Bound: the lease runs out leaseDuration after b last saw a renewal (up to one retry period after it
    // was written), and b notices at its next attempt: + 2 retry periods, plus slack for a busy machine.
    await eventually(
      "b leads",
      async () => (b.isLeader ? true : undefined),
      fast.leaseDurationMs + 2 * fast.retryPeriodMs + 3_000,
    );
    const after = await readLease("failover");
    expect(after.spec).toMatchObject({ holderIdentity: "b", leaseTransitions: 1 });
    expect(el.overlaps).toEqual([]);
  });

  it("a graceful stop releases the lease and the standby takes over at once, long before it would expire", async () => {
    const slow: LeaderElectionTimings = {
      leaseDurationMs: 120_000,
      renewDeadlineMs: 60_000,
      retryPeriodMs: 250,
    };
    const el = election("release", slow);
    const a = el.elector("a");
    a.start();
    await el.leader([a]);
    const b = el.elector("b");
    b.start();
    await eventually("b has seen a's lease", async () =>
      (await readLease("release")).spec ? true : undefined,
    );
    await a.stop();
    await eventually("b leads", async () => (b.isLeader ? true : undefined), 10_000);
    expect(el.journal).toEqual(["a started", "a stopped", "b started"]);
    expect((await readLease("release")).spec).toMatchObject({ holderIdentity: "b", leaseTransitions: 1 });
  });

  it("a partitioned leader steps down before the other replica acquires", async () => {
    const el = election("partition");
    const a = el.elector("a");
    a.start();
    await el.leader([a]);
    const b = el.elector("b");
    b.start();
    el.partitioned.add("a");
    await eventually("b leads", async () => (b.isLeader ? true : undefined), 20_000);
    expect(a.isLeader).toBe(false);
    expect(el.journal).toEqual(["a started", "a stopped", "b started"]);
    expect(el.overlaps).toEqual([]);
    // Healed, a sees b's lease and stays a standby.
    el.partitioned.delete("a");
    await eventually("a renewal by b after the partition healed", async () => {
      const rv = (await readLease("partition")).metadata?.resourceVersion;
      await new Promise((r) => setTimeout(r, 2 * fast.retryPeriodMs));
      return (await readLease("partition")).metadata?.resourceVersion !== rv ? true : undefined;
    });
    expect([a.isLeader, b.isLeader]).toEqual([false, true]);
  });
});
