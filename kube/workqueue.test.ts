import { describe, expect, it, vi } from "vitest";
import { FakeClock, settle, systemClock } from "./clock.ts";
import {
  ABORTED_SETTLE_MS,
  MAX_TIMER_MS,
  type Outcome,
  type Priority,
  type ReconcileContext,
  type ReconcileResult,
  RetryRateLimiter,
  TerminalError,
  WorkQueue,
  type WorkQueueOptions,
} from "./workqueue.ts";

type Step = Outcome | Error | "hang";

/**
 * A queue on a fake clock whose reconciles wait until the test settles them (`finish`), or follow a script
 * of steps per key. Records every start and flags a key reconciled concurrently with itself.
 */
function harness(opts: Partial<WorkQueueOptions> & { script?: Record<string, Step[]> } = {}) {
  const clock = new FakeClock();
  const started: { key: string; priority: Priority; at: number; retries: number }[] = [];
  const results: { result: ReconcileResult; priority: Priority; durationMs: number }[] = [];
  const depth: Partial<Record<Priority, number>> = {};
  const running = new Map<string, { resolve: (o: Outcome) => void; reject: (e: Error) => void }>();
  const contexts = new Map<string, ReconcileContext>();
  const overlaps: string[] = [];
  const queue = new WorkQueue({
    clock,
    metrics: {
      depth: (p, n) => {
        depth[p] = n;
      },
      reconciled: (result, priority, durationMs) => results.push({ result, priority, durationMs }),
    },
    ...opts,
    reconcile: (key, ctx) => {
      if (running.has(key)) overlaps.push(key);
      started.push({ key, priority: ctx.priority, at: clock.now(), retries: ctx.retries });
      contexts.set(key, ctx);
      const step = opts.script?.[key]?.shift();
      const promise = new Promise<Outcome>((resolve, reject) => {
        if (step === undefined || step === "hang") {
          running.set(key, { resolve, reject });
          if (step === "hang") ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason));
        } else if (step instanceof Error) reject(step);
        else resolve(step);
      });
      return promise.finally(() => running.delete(key));
    },
  });
  return {
    clock,
    queue,
    started,
    results,
    depth,
    overlaps,
    contexts,
    keys: () => started.map((s) => s.key),
    running: () => [...running.keys()],
    async finish(key: string, outcome: Outcome | Error = { done: true }) {
      const r = running.get(key);
      if (!r) throw new Error(`${key} is not running`);
      if (outcome instanceof Error) r.reject(outcome);
      else r.resolve(outcome);
      await settle();
    },
  };
}

describe("WorkQueue ordering", () => {
  it("a wake queued behind 5,000 periodic checks is the next item a free worker takes", async () => {
    const h = harness({ maxConcurrentReconciles: 8 });
    // Every worker busy: changes take the seven they may, a resume in progress the one kept for wakes.
    for (let i = 0; i < 7; i++) h.queue.add(`ns/busy-${i}`, "change");
    h.queue.add("ns/busy-7", "resume-in-progress");
    await settle();
    for (let i = 0; i < 5_000; i++) h.queue.add(`ns/periodic-${i}`, "periodic");
    h.queue.add("ns/woken", "wake");
    await settle();
    expect(h.started).toHaveLength(8);
    await h.finish("ns/busy-3");
    expect(h.started[8]?.key).toBe("ns/woken");
  });

  it("a wake finds a free worker at once while periodic checks fill every other worker", async () => {
    const h = harness({ maxConcurrentReconciles: 8 });
    for (let i = 0; i < 5_000; i++) h.queue.add(`ns/periodic-${i}`, "periodic");
    await settle();
    expect(h.running()).toHaveLength(7);
    h.queue.add("ns/woken", "wake");
    await settle();
    expect(h.running()).toContain("ns/woken");
  });

  it("a wake finds a free worker at once while changes (a new leader's sweep of every key) fill every other one", async () => {
    const h = harness({ maxConcurrentReconciles: 4 });
    for (let i = 0; i < 100; i++) h.queue.add(`ns/change-${i}`, "change");
    for (let i = 0; i < 100; i++) h.queue.add(`ns/periodic-${i}`, "periodic");
    await settle();
    expect(h.running()).toHaveLength(3);
    h.queue.add("ns/woken", "wake");
    await settle();
    expect(h.running()).toContain("ns/woken");
  });

  it("lets changes take every worker in a queue that keeps none for wakes", async () => {
    const h = harness({ maxConcurrentReconciles: 4, keepOneForWakes: false });
    for (let i = 0; i < 100; i++) h.queue.add(`ns/change-${i}`, "change");
    await settle();
    expect(h.running()).toHaveLength(4);
  });

  it.each([
    { workers: 1, periodicRunning: 1 },
    { workers: 2, periodicRunning: 1 },
    { workers: 8, periodicRunning: 7 },
  ])(
    "with $workers workers, periodic checks occupy at most $periodicRunning",
    async ({ workers, periodicRunning }) => {
      const h = harness({ maxConcurrentReconciles: workers });
      for (let i = 0; i < 100; i++) h.queue.add(`ns/p-${i}`, "periodic");
      await settle();
      expect(h.running()).toHaveLength(periodicRunning);
    },
  );

  it("a free worker takes the highest priority first, in queue order within a priority", async () => {
    const h = harness({ maxConcurrentReconciles: 1 });
    h.queue.add("ns/busy", "change");
    await settle();
    const queued: [string, Priority][] = [
      ["ns/p1", "periodic"],
      ["ns/c1", "change"],
      ["ns/r1", "resume-in-progress"],
      ["ns/w1", "wake"],
      ["ns/c2", "change"],
      ["ns/w2", "wake"],
    ];
    for (const [key, priority] of queued) h.queue.add(key, priority);
    await settle();
    for (const key of ["ns/busy", "ns/w1", "ns/w2", "ns/r1", "ns/c1", "ns/c2"]) await h.finish(key);
    expect(h.keys()).toEqual(["ns/busy", "ns/w1", "ns/w2", "ns/r1", "ns/c1", "ns/c2", "ns/p1"]);
  });

  it("reports the queue depth per priority", async () => {
    const h = harness({ maxConcurrentReconciles: 1 });
    h.queue.add("ns/busy", "change");
    await settle();
    h.queue.add("ns/a", "periodic");
    h.queue.add("ns/b", "periodic");
    h.queue.add("ns/c", "wake");
    expect(h.depth).toMatchObject({ periodic: 2, wake: 1, change: 0 });
    expect(h.queue.stats()).toEqual({
      waiting: { wake: 1, "resume-in-progress": 0, change: 0, periodic: 2 },
      inFlight: 1,
      delayed: 0,
    });
  });
});

describe("WorkQueue de-duplication", () => {
  it("a key queued twice while waiting is reconciled once", async () => {
    const h = harness({ maxConcurrentReconciles: 1, script: { "ns/a": [{ done: true }] } });
    h.queue.add("ns/busy", "change");
    await settle();
    h.queue.add("ns/a", "change");
    h.queue.add("ns/a", "change");
    await h.finish("ns/busy");
    await h.clock.advance(60_000);
    expect(h.keys()).toEqual(["ns/busy", "ns/a"]);
  });

  it.each([
    { first: "periodic", second: "wake", want: "wake" },
    { first: "wake", second: "periodic", want: "wake" },
    { first: "change", second: "resume-in-progress", want: "resume-in-progress" },
  ] as { first: Priority; second: Priority; want: Priority }[])(
    "a key queued as $first then $second is one item at $want",
    async ({ first, second, want }) => {
      const h = harness({ maxConcurrentReconciles: 1 });
      h.queue.add("ns/busy", "change");
      await settle();
      h.queue.add("ns/a", first);
      h.queue.add("ns/a", second);
      expect(h.queue.stats().waiting[want]).toBe(1);
      await h.finish("ns/busy");
      expect(h.started[1]).toMatchObject({ key: "ns/a", priority: want });
      expect(Object.values(h.queue.stats().waiting).every((n) => n === 0)).toBe(true);
    },
  );

  it("a key queued while being reconciled is reconciled once more afterwards, never concurrently", async () => {
    const h = harness({ maxConcurrentReconciles: 8 });
    h.queue.add("ns/a", "change");
    await settle();
    h.queue.add("ns/a", "periodic");
    h.queue.add("ns/a", "wake");
    await settle();
    expect(h.keys()).toEqual(["ns/a"]);
    await h.finish("ns/a");
    expect(h.started.map((s) => [s.key, s.priority])).toEqual([
      ["ns/a", "change"],
      ["ns/a", "wake"],
    ]);
    await h.finish("ns/a");
    await h.clock.advance(60_000);
    expect(h.started).toHaveLength(2);
    expect(h.overlaps).toEqual([]);
  });
});

describe("WorkQueue supersede", () => {
  it.each([
    { running: "periodic", queued: "wake", aborted: true },
    { running: "periodic", queued: "resume-in-progress", aborted: true },
    { running: "periodic", queued: "change", aborted: false },
    { running: "change", queued: "wake", aborted: false },
  ] as { running: Priority; queued: Priority; aborted: boolean }[])(
    "a $running reconcile of a key queued as $queued is aborted: $aborted",
    async ({ running, queued, aborted }) => {
      const h = harness({ script: { "ns/a": ["hang", { done: true }] } });
      h.queue.add("ns/a", running);
      await settle();
      const first = h.contexts.get("ns/a");
      h.queue.add("ns/a", queued);
      await settle();
      expect(first?.signal.aborted).toBe(aborted);
    },
  );

  it("the wake runs as soon as the superseded periodic check stops, without backoff", async () => {
    const h = harness({ script: { "ns/a": ["hang", { done: true }] } });
    h.queue.add("ns/a", "periodic");
    await settle();
    h.queue.add("ns/a", "wake");
    await settle();
    expect(h.started.map((s) => [s.priority, s.retries])).toEqual([
      ["periodic", 0],
      ["wake", 0],
    ]);
    expect(h.results.map((r) => r.result)).toEqual(["superseded", "done"]);
    expect(h.overlaps).toEqual([]);
  });
});

describe("WorkQueue outcomes", () => {
  it("done: the key is not reconciled again", async () => {
    const h = harness({ script: { "ns/a": [{ done: true }] } });
    h.queue.add("ns/a", "change");
    await h.clock.advance(3_600_000);
    expect(h.keys()).toEqual(["ns/a"]);
    expect(h.results.map((r) => r.result)).toEqual(["done"]);
  });

  it("requeueAfterMs: reconciled again after that time as a periodic check unless told otherwise", async () => {
    const h = harness({
      script: {
        "ns/a": [{ requeueAfterMs: 30_000 }, { requeueAfterMs: 10_000, priority: "change" }, { done: true }],
      },
    });
    h.queue.add("ns/a", "wake");
    await h.clock.advance(29_999);
    expect(h.started).toHaveLength(1);
    await h.clock.advance(60_000);
    const t0 = h.started[0]?.at ?? 0;
    expect(h.started.map((s) => [s.priority, s.at - t0])).toEqual([
      ["wake", 0],
      ["periodic", 30_000],
      ["change", 40_000],
    ]);
  });

  it("a retryable error is retried with per-key exponential backoff at the same priority, reset on success", async () => {
    const fail = new Error("conflict");
    const h = harness({
      script: { "ns/a": [fail, fail, fail, { requeueAfterMs: 1_000 }, fail, { done: true }] },
    });
    h.queue.add("ns/a", "change");
    await h.clock.advance(10_000);
    const t0 = h.started[0]?.at ?? 0;
    expect(h.started.map((s) => [s.at - t0, s.priority, s.retries])).toEqual([
      [0, "change", 0],
      [5, "change", 1],
      [15, "change", 2],
      [35, "change", 3],
      [1_035, "periodic", 0],
      [1_040, "periodic", 1],
    ]);
    expect(h.results.map((r) => r.result)).toEqual(["retry", "retry", "retry", "requeue", "retry", "done"]);
  });

  it("a TerminalError is counted and not retried", async () => {
    const h = harness({ script: { "ns/a": [new TerminalError("spec names no target")] } });
    h.queue.add("ns/a", "change");
    await h.clock.advance(3_600_000);
    expect(h.keys()).toEqual(["ns/a"]);
    expect(h.results.map((r) => r.result)).toEqual(["terminal"]);
  });

  it("a reconcile running past its timeout is aborted and retried", async () => {
    const h = harness({ reconcileTimeoutMs: 120_000, script: { "ns/a": ["hang", { done: true }] } });
    h.queue.add("ns/a", "wake");
    await h.clock.advance(119_999);
    expect(h.contexts.get("ns/a")?.signal.aborted).toBe(false);
    await h.clock.advance(1);
    expect(h.results.map((r) => [r.result, r.durationMs])).toEqual([["timeout", 120_000]]);
    await h.clock.advance(5);
    expect(h.started.map((s) => s.priority)).toEqual(["wake", "wake"]);
    expect(h.results.map((r) => r.result)).toEqual(["timeout", "done"]);
  });
});

describe("WorkQueue delayed adds", () => {
  it("waits no longer than a timer holds, rather than firing at once in a loop", async () => {
    const h = harness();
    h.queue.addAfter("shop/web", 600 * 3_600_000, "periodic");
    await h.clock.advance(1_000);
    expect(h.started).toEqual([]);
    await h.clock.advance(MAX_TIMER_MS);
    expect(h.started.map((s) => s.key)).toEqual(["shop/web"]);
  });

  it("adds the key when its time comes", async () => {
    const h = harness({ script: { "ns/a": [{ done: true }] } });
    h.queue.addAfter("ns/a", 5_000, "periodic");
    await h.clock.advance(4_999);
    expect(h.started).toHaveLength(0);
    await h.clock.advance(1);
    expect(h.started.map((s) => s.priority)).toEqual(["periodic"]);
  });

  it("keeps the earliest of several delayed adds of one key, at the highest priority", async () => {
    const h = harness({ script: { "ns/a": [{ done: true }] } });
    h.queue.addAfter("ns/a", 10_000, "wake");
    h.queue.addAfter("ns/a", 2_000, "periodic");
    h.queue.addAfter("ns/a", 5_000, "periodic");
    expect(h.queue.stats().delayed).toBe(1);
    await h.clock.advance(60_000);
    expect(h.started.map((s) => [s.at - h.clock.now() + 60_000, s.priority])).toEqual([[2_000, "wake"]]);
  });
});

describe("WorkQueue shutdown", () => {
  it("stops taking new work and waits for in-flight reconciles", async () => {
    const h = harness({ maxConcurrentReconciles: 1 });
    h.queue.add("ns/a", "change");
    h.queue.add("ns/b", "change");
    h.queue.addAfter("ns/c", 1_000, "change");
    await settle();
    let drained: { drained: boolean } | undefined;
    void h.queue.shutdown({ deadlineMs: 10_000 }).then((r) => {
      drained = r;
    });
    h.queue.add("ns/d", "wake");
    await settle();
    expect(drained).toBeUndefined();
    await h.finish("ns/a");
    expect(drained).toEqual({ drained: true });
    await h.clock.advance(60_000);
    expect(h.keys()).toEqual(["ns/a"]);
  });

  it("aborts reconciles still running at the deadline", async () => {
    const h = harness({ script: { "ns/a": ["hang"] } });
    h.queue.add("ns/a", "change");
    await settle();
    const result = h.queue.shutdown({ deadlineMs: 5_000 });
    await h.clock.advance(5_000);
    await expect(result).resolves.toEqual({ drained: false });
    expect(h.contexts.get("ns/a")?.signal.reason).toMatchObject({ name: "ShutdownError" });
  });

  it("returns once aborted reconciles have settled, so a new leadership term never overlaps the old one", async () => {
    const h = harness();
    h.queue.add("ns/a", "change");
    await settle();
    let returned = false;
    void h.queue.shutdown({ deadlineMs: 0 }).then(() => {
      returned = true;
    });
    await h.clock.advance(1);
    // A write that ignores the abort is still in flight.
    expect(returned).toBe(false);
    await h.finish("ns/a");
    expect(returned).toBe(true);
  });

  it("waits a bounded time for a reconcile that never settles", async () => {
    const h = harness();
    h.queue.add("ns/a", "change");
    await settle();
    const result = h.queue.shutdown({ deadlineMs: 0 });
    await h.clock.advance(ABORTED_SETTLE_MS);
    await expect(result).resolves.toEqual({ drained: false });
  });
});

describe("RetryRateLimiter", () => {
  it.each([
    { failures: 1, want: 5 },
    { failures: 2, want: 10 },
    { failures: 3, want: 20 },
    { failures: 10, want: 2_560 },
    { failures: 18, want: 655_360 },
    { failures: 19, want: 1_000_000 },
    { failures: 40, want: 1_000_000 },
  ])("the failure number $failures of one key waits $want ms", ({ failures, want }) => {
    const limiter = new RetryRateLimiter(new FakeClock(), { qps: 1e9, burst: 1e9 });
    let delay = 0;
    for (let i = 0; i < failures; i++) delay = limiter.when("ns/a");
    expect(delay).toBe(want);
  });

  it("limits retries of all keys together with a token bucket", () => {
    const limiter = new RetryRateLimiter(new FakeClock(), { qps: 10, burst: 100 });
    const delays = Array.from({ length: 102 }, (_, i) => limiter.when(`ns/k${i}`));
    expect(delays.slice(0, 100).every((d) => d === 5)).toBe(true);
    expect(delays.slice(100)).toEqual([100, 200]);
  });

  it("owes nothing after the wall clock steps back", () => {
    let now = 10 * 3_600_000;
    const limiter = new RetryRateLimiter({ now: () => now } as FakeClock, { qps: 10, burst: 100 });
    now -= 3_600_000;
    expect(limiter.when("ns/a")).toBe(5);
  });

  it("refills the bucket with time", async () => {
    const clock = new FakeClock();
    const limiter = new RetryRateLimiter(clock, { qps: 10, burst: 1 });
    expect(limiter.when("ns/a")).toBe(5);
    expect(limiter.when("ns/b")).toBe(100);
    await clock.advance(1_000);
    expect(limiter.when("ns/c")).toBe(5);
  });

  it("forgets a key's failures", () => {
    const limiter = new RetryRateLimiter(new FakeClock());
    limiter.when("ns/a");
    limiter.when("ns/a");
    limiter.forget("ns/a");
    expect(limiter.retries("ns/a")).toBe(0);
    expect(limiter.when("ns/a")).toBe(5);
  });
});

describe("a queue on the system clock", () => {
  it("keeps a retry due in 5 ms when the wall clock steps forward past a check pending from before", async () => {
    vi.useFakeTimers({ toFake: ["Date", "setTimeout", "clearTimeout", "performance"] });
    try {
      const steps: (Outcome | Error)[] = [
        { requeueAfterMs: 300_000 }, // a paused workload: next look in 5 minutes
        new Error("the scale write failed"), // the wake that comes meanwhile fails once
        { done: true },
      ];
      let runs = 0;
      const queue = new WorkQueue({
        clock: systemClock,
        reconcile: async () => {
          runs++;
          const step = steps.shift() ?? { done: true };
          if (step instanceof Error) throw step;
          return step;
        },
      });
      queue.add("shop/web", "change");
      await vi.advanceTimersByTimeAsync(10);
      expect(runs).toBe(1);
      vi.setSystemTime(Date.now() + 3_600_000); // the wall clock is stepped an hour forward
      queue.add("shop/web", "wake"); // runs, fails, and is retried within the second, not in 5 minutes
      await vi.advanceTimersByTimeAsync(1_000);
      expect(runs).toBe(3);
      await queue.shutdown({ deadlineMs: 0 });
    } finally {
      vi.useRealTimers();
    }
  });
});
