import {
  ApiException,
  type ConfigurationOptions,
  type RequestContext,
  type V1Lease,
  type V1LeaseSpec,
} from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { FakeClock } from "./clock.ts";
import {
  decideLease,
  LeaderElector,
  type LeaseClient,
  leaseSpecFor,
  observe,
  releasedSpec,
  validateTimings,
} from "./leader-election.ts";

const t0 = Date.UTC(2030, 0, 1);
const held = (holder: string, leaseDurationSeconds = 15): V1LeaseSpec => ({
  holderIdentity: holder,
  leaseDurationSeconds,
});

describe("decideLease: who may hold the lease now", () => {
  it.each([
    { name: "no Lease yet: create it", spec: undefined, observedAt: t0, now: t0, want: { action: "create" } },
    {
      name: "we hold it: renew",
      spec: held("a"),
      observedAt: t0,
      now: t0 + 60_000,
      want: { action: "renew" },
    },
    {
      name: "a released lease (no holder): take it at once",
      spec: held("", 1),
      observedAt: t0,
      now: t0,
      want: { action: "acquire", because: "released" },
    },
    {
      name: "a live lease of another: wait until it expires",
      spec: held("b"),
      observedAt: t0,
      now: t0 + 14_999,
      want: { action: "wait", holder: "b", expiresAtMs: t0 + 15_000 },
    },
    {
      name: "another's lease not renewed for its duration since we saw it: take it",
      spec: held("b"),
      observedAt: t0,
      now: t0 + 15_000,
      want: { action: "acquire", because: "expired" },
    },
    {
      name: "the holder's lease duration counts, not ours",
      spec: held("b", 60),
      observedAt: t0,
      now: t0 + 30_000,
      want: { action: "wait", holder: "b", expiresAtMs: t0 + 60_000 },
    },
  ])("$name", ({ spec, observedAt, now, want }) => {
    expect(decideLease({ identity: "a", spec, observedAtMs: observedAt, nowMs: now })).toEqual(want);
  });
});

describe("observe: expiry is counted from when a candidate first saw the lease's version", () => {
  it.each([
    { name: "first sight", previous: undefined, rv: "7", now: 5, want: { resourceVersion: "7", atMs: 5 } },
    {
      name: "same version later: keeps the first time",
      previous: { resourceVersion: "7", atMs: 5 },
      rv: "7",
      now: 9,
      want: { resourceVersion: "7", atMs: 5 },
    },
    {
      name: "a new version (a renewal): restarts the count",
      previous: { resourceVersion: "7", atMs: 5 },
      rv: "8",
      now: 9,
      want: { resourceVersion: "8", atMs: 9 },
    },
  ])("$name", ({ previous, rv, now, want }) => {
    expect(observe(previous, rv, now)).toEqual(want);
  });
});

describe("the lease a candidate writes", () => {
  const current: V1LeaseSpec = { ...held("b"), acquireTime: new Date(t0), leaseTransitions: 3 };
  it.each([
    {
      name: "creating starts at zero transitions",
      action: "create" as const,
      current: undefined,
      want: { holderIdentity: "a", leaseTransitions: 0, acquired: true },
    },
    {
      name: "renewing keeps the acquire time and the transitions",
      action: "renew" as const,
      current: { ...current, holderIdentity: "a" },
      want: { holderIdentity: "a", leaseTransitions: 3, acquired: false },
    },
    {
      name: "acquiring counts a transition",
      action: "acquire" as const,
      current,
      want: { holderIdentity: "a", leaseTransitions: 4, acquired: true },
    },
  ])("$name", ({ action, current, want }) => {
    const spec = leaseSpecFor({ action }, current, "a", t0 + 1_000, 15);
    expect(spec).toMatchObject({
      holderIdentity: want.holderIdentity,
      leaseTransitions: want.leaseTransitions,
    });
    expect(spec.leaseDurationSeconds).toBe(15);
    expect(new Date(spec.renewTime ?? 0).getTime()).toBe(t0 + 1_000);
    expect(new Date(spec.acquireTime ?? 0).getTime()).toBe(want.acquired ? t0 + 1_000 : t0);
  });

  it("writes times with microseconds, as the API server requires", () => {
    const spec = leaseSpecFor({ action: "create" }, undefined, "a", t0 + 1, 15);
    expect(JSON.parse(JSON.stringify(spec)).renewTime).toBe("2030-01-01T00:00:00.001000Z");
  });

  it("releasing empties the holder and keeps the transitions", () => {
    expect(releasedSpec({ ...current, holderIdentity: "a" }, t0)).toMatchObject({
      holderIdentity: "",
      leaseDurationSeconds: 1,
      leaseTransitions: 3,
    });
  });
});

describe("validateTimings", () => {
  it.each([
    { lease: 15_000, renew: 10_000, retry: 2_000, ok: true },
    { lease: 10_000, renew: 10_000, retry: 2_000, ok: false },
    { lease: 15_000, renew: 2_000, retry: 2_000, ok: false },
    { lease: 500, renew: 200, retry: 100, ok: false },
    { lease: 15_000, renew: 10_000, retry: 0, ok: false },
  ])("lease $lease, renew $renew, retry $retry: valid $ok", ({ lease, renew, retry, ok }) => {
    const check = () =>
      validateTimings({ leaseDurationMs: lease, renewDeadlineMs: renew, retryPeriodMs: retry });
    if (ok) expect(check).not.toThrow();
    else expect(check).toThrow(/leader election/);
  });
});

/** An in-memory Lease endpoint with the API server's optimistic concurrency. */
class FakeLeaseServer {
  lease: V1Lease | undefined;
  /** Requests that never answered. */
  hangs = 0;
  #rv = 0;

  client(
    isDown: () => boolean = () => false,
    isHung: () => boolean = () => false,
    /** Waited on before a replace is applied: an API server slow to write. */
    slowWrite: () => Promise<void> = async () => {},
  ): LeaseClient {
    const check = async () => {
      if (isDown()) throw new Error("connection refused");
      if (isHung()) {
        this.hangs++;
        await new Promise(() => {});
      }
    };
    const store = (body: V1Lease) => {
      this.#rv++;
      this.lease = JSON.parse(
        JSON.stringify({ ...body, metadata: { ...body.metadata, resourceVersion: String(this.#rv) } }),
      );
      return structuredClone(this.lease as V1Lease);
    };
    return {
      readNamespacedLease: async () => {
        await check();
        if (!this.lease) throw new ApiException(404, "not found", {}, {});
        return structuredClone(this.lease);
      },
      createNamespacedLease: async ({ body }) => {
        await check();
        if (this.lease) throw new ApiException(409, "already exists", {}, {});
        return store(body);
      },
      replaceNamespacedLease: async ({ body }) => {
        await check();
        await slowWrite();
        if (body.metadata?.resourceVersion !== this.lease?.metadata?.resourceVersion) {
          throw new ApiException(409, "conflict", {}, {});
        }
        return store(body);
      },
    };
  }
}

function candidates(failsToStart: readonly string[] = [], abortReasons: unknown[] = []) {
  const clock = new FakeClock(t0);
  const server = new FakeLeaseServer();
  const log: string[] = [];
  const down = new Set<string>();
  const hung = new Set<string>();
  const elector = (identity: string) =>
    new LeaderElector({
      client: server.client(
        () => down.has(identity),
        () => hung.has(identity),
      ),
      namespace: "napwake-system",
      name: "napwake",
      identity,
      clock,
      onStartedLeading: (signal) => {
        log.push(`${clock.now() - t0} ${identity} started`);
        if (failsToStart.includes(identity)) return Promise.reject(new Error("a controller failed to start"));
        return new Promise<void>((resolve) =>
          signal.addEventListener("abort", () => {
            abortReasons.push(signal.reason);
            resolve();
          }),
        );
      },
      onStoppedLeading: () => log.push(`${clock.now() - t0} ${identity} stopped`),
    });
  return { clock, server, log, down, hung, a: elector("a"), b: elector("b") };
}

describe("LeaderElector on a fake API server and clock", () => {
  it("one of two candidates leads and renews; the other waits", async () => {
    const { clock, server, log, a, b } = candidates();
    a.start();
    await clock.advance(1);
    b.start();
    await clock.advance(60_000);
    expect(log).toEqual(["0 a started"]);
    expect([a.isLeader, b.isLeader]).toEqual([true, false]);
    expect(server.lease?.spec).toMatchObject({ holderIdentity: "a", leaseTransitions: 0 });
  });

  it("a crashed leader is replaced once the lease expires, not before", async () => {
    const { clock, log, a, b } = candidates();
    a.start();
    await clock.advance(1);
    b.start();
    await clock.advance(10_000);
    await a.stop({ release: false });
    log.length = 0;
    await clock.advance(30_000);
    // a's last renewal was at 10 s (every 2 s from 0), b saw it at 10.001 s: b may take over from 25.001 s.
    expect(log).toEqual(["26001 b started"]);
  });

  it("a gracefully stopped leader hands over at the standby's next attempt", async () => {
    const { clock, server, log, a, b } = candidates();
    a.start();
    await clock.advance(1);
    b.start();
    await clock.advance(10_000);
    await a.stop();
    await clock.advance(2_000);
    // b's attempts come every 2 s from 1 ms; the one at 10.001 s ran just before a stopped.
    expect(log).toEqual(["0 a started", "10001 a stopped", "12001 b started"]);
    expect(server.lease?.spec).toMatchObject({ holderIdentity: "b", leaseTransitions: 1 });
  });

  it("a partitioned leader steps down at its renew deadline, before the standby takes over", async () => {
    const { clock, down, log, a, b } = candidates();
    a.start();
    await clock.advance(1);
    b.start();
    await clock.advance(10_000);
    down.add("a");
    await clock.advance(30_000);
    // a's last successful renewal was sent at 10 s: it stops at 20 s; b saw it at 10.001 s and takes over later.
    expect(log).toEqual(["0 a started", "20000 a stopped", "26001 b started"]);
  });

  it("a leader whose requests hang gives up on each in time and steps down at its renew deadline", async () => {
    const { clock, server, hung, log, a, b } = candidates();
    a.start();
    await clock.advance(1);
    b.start();
    await clock.advance(10_000);
    hung.add("a");
    await clock.advance(30_000);
    expect(log).toEqual(["0 a started", "20000 a stopped", "26001 b started"]);
    // Each hung request was abandoned after its timeout and tried again, rather than waited on for ever.
    expect(server.hangs).toBeGreaterThan(3);
  });

  it("a renewal that succeeds after its term's deadline starts no term until the old term's work settled", async () => {
    const clock = new FakeClock(t0);
    const server = new FakeLeaseServer();
    const since = () => clock.now() - t0;
    // Unreachable from 1 s to 8 s, then slow to write (3 s, within the request timeout).
    const client = server.client(
      () => since() >= 1_000 && since() < 8_000,
      () => false,
      () =>
        since() >= 8_000 ? new Promise((resolve) => clock.setTimeout(resolve, 3_000)) : Promise.resolve(),
    );
    const log: string[] = [];
    let terms = 0;
    const elector = new LeaderElector({
      client,
      namespace: "napwake-system",
      name: "napwake",
      identity: "a",
      clock,
      onStartedLeading: (signal) => {
        const term = ++terms;
        log.push(`${since()} term ${term} started`);
        // Its reconciles take 4 s to settle once aborted.
        return new Promise<void>((resolve) =>
          signal.addEventListener("abort", () =>
            clock.setTimeout(() => {
              log.push(`${since()} term ${term} settled`);
              resolve();
            }, 4_000),
          ),
        );
      },
      onStoppedLeading: () => log.push(`${since()} stopped`),
    });
    elector.start();
    await clock.advance(20_000);
    // The last renewal before the outage was sent at 0 s: the deadline ends term 1 at 10 s, while the renewal
    // sent at 8 s is in flight (it succeeds at 11 s).
    expect(log.slice(0, 3)).toEqual(["0 term 1 started", "10000 stopped", "14000 term 1 settled"]);
    expect(log[3]).toMatch(/^\d+ term 2 started$/);
    const stopped = elector.stop({ release: false });
    await clock.advance(10_000);
    await stopped;
  });

  it("closes the connection of a request it gave up on, rather than leave it open", async () => {
    const clock = new FakeClock(t0);
    const signals: AbortSignal[] = [];
    const hangs = async (_: unknown, options?: ConfigurationOptions): Promise<V1Lease> => {
      const context = { setSignal: (s: AbortSignal) => signals.push(s) } as unknown as RequestContext;
      await options?.middleware?.[0]?.pre(context).toPromise();
      return new Promise(() => {});
    };
    const elector = new LeaderElector({
      client: { readNamespacedLease: hangs, createNamespacedLease: hangs, replaceNamespacedLease: hangs },
      namespace: "napwake-system",
      name: "napwake",
      identity: "a",
      clock,
      onStartedLeading: () => new Promise(() => {}),
    });
    elector.start();
    await clock.advance(6_000);
    expect(signals.length).toBeGreaterThan(0);
    expect(signals[0]?.aborted).toBe(true);
    const stopped = elector.stop({ release: false });
    await clock.advance(10_000);
    await stopped;
  });

  it("a leader whose work fails to start releases the lease, and the standby takes over", async () => {
    const { clock, server, log, a, b } = candidates(["a"]);
    a.start();
    await clock.advance(1);
    b.start();
    await clock.advance(10_000);
    expect(a.isLeader).toBe(false);
    expect(log).toEqual(["0 a started", "0 a stopped", "1 b started"]);
    expect(server.lease?.spec).toMatchObject({ holderIdentity: "b" });
  });

  it("tells the work whether the lease may already be another's, or still its own until released", async () => {
    const reasons: unknown[] = [];
    const { clock, down, a } = candidates([], reasons);
    a.start();
    await clock.advance(1_000);
    down.add("a");
    await clock.advance(30_000);
    down.delete("a");
    await clock.advance(5_000);
    await a.stop();
    expect(reasons).toMatchObject([{ graceful: false }, { graceful: true }]);
  });

  it("lets a stopping leader's work drain only until its last renewal's deadline", async () => {
    const reasons: unknown[] = [];
    const { clock, hung, a } = candidates([], reasons);
    a.start();
    await clock.advance(10_001); // renewed at 10 s
    hung.add("a"); // the renewal at 12 s hangs until its 5 s timeout
    await clock.advance(2_500);
    const stopping = a.stop();
    await clock.advance(20_000);
    await stopping;
    // Stepped down at 17 s, when the hung request gave up: 3 s before the deadline of the renewal at 10 s.
    expect(reasons).toMatchObject([{ drainMs: 3_000, graceful: true }]);
  });
});
