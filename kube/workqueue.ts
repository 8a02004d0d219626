import { type Clock, forDurations, settlesWithin, systemClock } from "./clock.ts";

/**
 * A level-based priority work queue of `namespace/name` keys, in the manner of client-go's workqueue:
 * a key queued twice while it waits is one item (at the higher priority); a key queued while it is being
 * reconciled is reconciled once more after that finishes, never concurrently with itself.
 */

/** Highest first. A wake never waits behind a periodic check. */
export const priorities = ["wake", "resume-in-progress", "change", "periodic"] as const;
export type Priority = (typeof priorities)[number];

const rank: Record<Priority, number> = { wake: 0, "resume-in-progress": 1, change: 2, periodic: 3 };

export function higherPriority(a: Priority, b: Priority): Priority {
  return rank[a] <= rank[b] ? a : b;
}

/** What a reconcile asks for next. Retries are asked for by throwing; see TerminalError. */
export type Outcome = { done: true } | { requeueAfterMs: number; priority?: Priority };

/** Thrown by a reconcile that cannot succeed by retrying (bad spec, missing permission): logged, counted, dropped. */
export class TerminalError extends Error {
  override name = "TerminalError";
}

/** The abort reason of a reconcile that ran past its timeout. */
export class ReconcileTimeoutError extends Error {
  override name = "ReconcileTimeoutError";
}

/**
 * The abort reason of a periodic check whose key was queued as a wake or a resume: the check stops so that
 * the wake, which cannot run beside it, runs next. Not a failure: no backoff.
 */
export class SupersededError extends Error {
  override name = "SupersededError";
}

/** The abort reason of a reconcile still running when the shutdown deadline passed. */
export class ShutdownError extends Error {
  override name = "ShutdownError";
}

export interface ReconcileContext {
  /**
   * Aborts at the reconcile timeout, at the shutdown deadline, or (for a periodic check) when a wake for the
   * same key arrives: stop writing and return or throw. A reconcile that ignores it keeps its worker until it
   * settles, since a key never runs beside itself.
   */
  signal: AbortSignal;
  priority: Priority;
  /** Failed attempts since the last success (0 on a first try). */
  retries: number;
}

export type Reconcile = (key: string, ctx: ReconcileContext) => Promise<Outcome>;

export type ReconcileResult = "done" | "requeue" | "retry" | "timeout" | "terminal" | "superseded";

/** Hooks for metrics (the operator wires prom-client to them). */
export interface QueueMetrics {
  /** Keys waiting at a priority, after every change. */
  depth(priority: Priority, depth: number): void;
  reconciled(result: ReconcileResult, priority: Priority, durationMs: number): void;
  /** How long a key waited between being queued and a worker taking it. */
  waited?(priority: Priority, waitMs: number): void;
}

export interface QueueLogger {
  warn(obj: object, msg: string): void;
  error(obj: object, msg: string): void;
}

/**
 * How long shutdown waits for aborted reconciles to settle: within the pod's 45 s grace period, beside the drain,
 * the Lease release and --shutdown-delay (see bin/operator-config.ts).
 */
export const ABORTED_SETTLE_MS = 5_000;

/** The longest delay a Node timer holds (2^31 - 1 ms, about 24.8 days). */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export interface RateLimiterOptions {
  /** First per-key retry delay; doubles with each failure. Default 5 ms. */
  baseDelayMs?: number;
  /** Per-key delay cap. Default 1000 s. */
  maxDelayMs?: number;
  /** Overall retries per second (token bucket refill). Default 10. */
  qps?: number;
  /** Token bucket size. Default 100. */
  burst?: number;
}

/**
 * client-go's default controller rate limiter: the larger of a per-key exponential backoff
 * (ItemExponentialFailureRateLimiter) and an overall token bucket (BucketRateLimiter).
 */
export class RetryRateLimiter {
  readonly #clock: Clock;
  readonly #base: number;
  readonly #max: number;
  readonly #qps: number;
  readonly #burst: number;
  readonly #failures = new Map<string, number>();
  #tokens: number;
  #last: number;

  constructor(clock: Clock, opts: RateLimiterOptions = {}) {
    this.#clock = clock;
    this.#base = opts.baseDelayMs ?? 5;
    this.#max = opts.maxDelayMs ?? 1_000_000;
    this.#qps = opts.qps ?? 10;
    this.#burst = opts.burst ?? 100;
    this.#tokens = this.#burst;
    this.#last = clock.now();
  }

  /** Records a failure of `key` and returns how long to wait before retrying it. */
  when(key: string): number {
    const failures = this.#failures.get(key) ?? 0;
    this.#failures.set(key, failures + 1);
    const perKey = Math.min(this.#max, this.#base * 2 ** failures);
    return Math.max(perKey, this.#reserveToken());
  }

  retries(key: string): number {
    return this.#failures.get(key) ?? 0;
  }

  /** A success: the next failure starts from the base delay again. */
  forget(key: string): void {
    this.#failures.delete(key);
  }

  #reserveToken(): number {
    const now = this.#clock.now();
    // A wall clock stepped back refills nothing rather than a debt that would stall every retry.
    this.#tokens = Math.min(this.#burst, this.#tokens + (Math.max(0, now - this.#last) * this.#qps) / 1000);
    this.#last = now;
    this.#tokens -= 1;
    return this.#tokens >= 0 ? 0 : (-this.#tokens * 1000) / this.#qps;
  }
}

export interface WorkQueueOptions {
  reconcile: Reconcile;
  /**
   * Workers; changes and periodic checks together may occupy at most N-1 of them so that a wake (or a resume in
   * progress) always finds one. Default 8.
   */
  maxConcurrentReconciles?: number;
  /** Keep that one worker for wakes. Default true; false for a queue that is never told of one. */
  keepOneForWakes?: boolean;
  /** Each reconcile's signal aborts after this long. Default 2 minutes. */
  reconcileTimeoutMs?: number;
  /**
   * Every time the queue reads is a duration (due times, backoff, waits), so the system clock is read as the
   * steady clock: a wall clock stepped forward would make a retry due in 5 ms look later than a check due before
   * the step, and drop it.
   */
  clock?: Clock;
  rateLimiter?: RateLimiterOptions;
  metrics?: QueueMetrics;
  log?: QueueLogger;
}

interface Delayed {
  at: number;
  priority: Priority;
  timer: unknown;
}

export interface QueueStats {
  waiting: Record<Priority, number>;
  inFlight: number;
  delayed: number;
}

export class WorkQueue {
  readonly #reconcile: Reconcile;
  readonly #workers: number;
  /** Workers changes and periodic checks may occupy between them. */
  readonly #backgroundWorkers: number;
  readonly #timeoutMs: number;
  readonly #clock: Clock;
  readonly #limiter: RetryRateLimiter;
  readonly #metrics: QueueMetrics | undefined;
  readonly #log: QueueLogger | undefined;

  /** Keys waiting for a worker, one insertion-ordered set per priority. */
  readonly #buckets = new Map<Priority, Set<string>>(priorities.map((p) => [p, new Set<string>()]));
  readonly #waiting = new Map<string, { priority: Priority; since: number }>();
  /** Keys being reconciled, with the priority they were taken at. */
  readonly #processing = new Map<string, Priority>();
  /** Keys queued again while being reconciled: queued once more when that reconcile ends. */
  readonly #dirty = new Map<string, Priority>();
  readonly #delayed = new Map<string, Delayed>();
  readonly #inFlight = new Map<string, AbortController>();
  #backgroundInFlight = 0;
  #pumpScheduled = false;
  #shuttingDown = false;
  #idle: (() => void) | undefined;

  constructor(opts: WorkQueueOptions) {
    this.#reconcile = opts.reconcile;
    this.#workers = Math.max(1, Math.floor(opts.maxConcurrentReconciles ?? 8));
    const keep = (opts.keepOneForWakes ?? true) && this.#workers > 1;
    this.#backgroundWorkers = keep ? this.#workers - 1 : this.#workers;
    this.#timeoutMs = opts.reconcileTimeoutMs ?? 120_000;
    this.#clock = forDurations(opts.clock ?? systemClock);
    this.#limiter = new RetryRateLimiter(this.#clock, opts.rateLimiter);
    this.#metrics = opts.metrics;
    this.#log = opts.log;
  }

  /** Queues `key` now. Ignored after shutdown began. */
  add(key: string, priority: Priority): void {
    if (this.#shuttingDown) return;
    const processing = this.#processing.get(key);
    if (processing) {
      const dirty = this.#dirty.get(key);
      this.#dirty.set(key, dirty ? higherPriority(dirty, priority) : priority);
      if (processing === "periodic" && rank[priority] < rank.change) {
        this.#inFlight.get(key)?.abort(new SupersededError(`${key} was queued as ${priority}`));
      }
      return;
    }
    const waiting = this.#waiting.get(key);
    if (waiting && higherPriority(waiting.priority, priority) === waiting.priority) return;
    if (waiting) this.#bucketDelete(waiting.priority, key);
    this.#waiting.set(key, { priority, since: waiting?.since ?? this.#clock.now() });
    this.#bucket(priority).add(key);
    this.#reportDepth(priority);
    this.#schedulePump();
  }

  /** Queues `key` after `ms`. Of several pending delayed adds of one key, the earliest time wins. */
  addAfter(key: string, ms: number, priority: Priority): void {
    if (this.#shuttingDown) return;
    if (ms <= 0) {
      this.add(key, priority);
      return;
    }
    // A timer cannot wait longer (Node fires it at once instead); an earlier look is harmless, level-based.
    const waitMs = Math.min(ms, MAX_TIMER_MS);
    const at = this.#clock.now() + waitMs;
    const pending = this.#delayed.get(key);
    if (pending && pending.at <= at) {
      pending.priority = higherPriority(pending.priority, priority);
      return;
    }
    if (pending) this.#clock.clearTimeout(pending.timer);
    const entry: Delayed = {
      at,
      priority: pending ? higherPriority(pending.priority, priority) : priority,
      timer: this.#clock.setTimeout(() => {
        this.#delayed.delete(key);
        this.add(key, entry.priority);
      }, waitMs),
    };
    this.#delayed.set(key, entry);
  }

  stats(): QueueStats {
    const waiting = Object.fromEntries(priorities.map((p) => [p, this.#bucket(p).size])) as Record<
      Priority,
      number
    >;
    return { waiting, inFlight: this.#processing.size, delayed: this.#delayed.size };
  }

  /**
   * Stops taking new work (queued and delayed keys are dropped) and waits for in-flight reconciles. At
   * `deadlineMs` their signals abort and it returns `drained: false` without waiting further.
   */
  async shutdown(opts: { deadlineMs?: number } = {}): Promise<{ drained: boolean }> {
    this.#shuttingDown = true;
    for (const d of this.#delayed.values()) this.#clock.clearTimeout(d.timer);
    this.#delayed.clear();
    this.#waiting.clear();
    this.#dirty.clear();
    for (const p of priorities) {
      this.#bucket(p).clear();
      this.#reportDepth(p);
    }
    if (this.#processing.size === 0) return { drained: true };
    const idle = new Promise<void>((resolve) => {
      this.#idle = resolve;
    });
    if (await settlesWithin(this.#clock, idle, opts.deadlineMs ?? 30_000)) return { drained: true };
    for (const controller of this.#inFlight.values()) {
      controller.abort(new ShutdownError("the work queue is shutting down"));
    }
    // Aborted reconciles still settle before this returns, so a leader that lost its lease does not start a
    // new term while the old one's writes are in flight; one that ignores its signal is waited for a bounded
    // time (most of its writes are conditional, so a late one fails rather than undoes the new term's).
    await settlesWithin(this.#clock, idle, ABORTED_SETTLE_MS);
    return { drained: false };
  }

  #bucket(priority: Priority): Set<string> {
    return this.#buckets.get(priority) as Set<string>;
  }

  #bucketDelete(priority: Priority, key: string): void {
    this.#bucket(priority).delete(key);
    this.#reportDepth(priority);
  }

  #reportDepth(priority: Priority): void {
    this.#metrics?.depth(priority, this.#bucket(priority).size);
  }

  #schedulePump(): void {
    if (this.#pumpScheduled) return;
    this.#pumpScheduled = true;
    queueMicrotask(() => {
      this.#pumpScheduled = false;
      this.#pump();
    });
  }

  /** Hands waiting keys to free workers, highest priority first, keeping one worker from changes and checks. */
  #pump(): void {
    while (!this.#shuttingDown && this.#processing.size < this.#workers) {
      const next = this.#next();
      if (!next) return;
      this.#start(next.key, next.priority);
    }
  }

  #next(): { key: string; priority: Priority } | undefined {
    for (const priority of priorities) {
      if (isBackground(priority) && this.#backgroundInFlight >= this.#backgroundWorkers) continue;
      const bucket = this.#bucket(priority);
      const key = bucket.values().next().value;
      if (key !== undefined) return { key, priority };
    }
    return undefined;
  }

  #start(key: string, priority: Priority): void {
    const waiting = this.#waiting.get(key);
    this.#waiting.delete(key);
    this.#bucketDelete(priority, key);
    this.#processing.set(key, priority);
    if (isBackground(priority)) this.#backgroundInFlight++;
    if (waiting) this.#metrics?.waited?.(priority, this.#clock.now() - waiting.since);
    void this.#run(key, priority);
  }

  async #run(key: string, priority: Priority): Promise<void> {
    const controller = new AbortController();
    this.#inFlight.set(key, controller);
    const timer = this.#clock.setTimeout(
      () => controller.abort(new ReconcileTimeoutError(`reconcile of ${key} ran past ${this.#timeoutMs} ms`)),
      this.#timeoutMs,
    );
    const started = this.#clock.now();
    let result: ReconcileResult;
    try {
      const outcome = await this.#reconcile(key, {
        signal: controller.signal,
        priority,
        retries: this.#limiter.retries(key),
      });
      this.#limiter.forget(key);
      if ("requeueAfterMs" in outcome) {
        result = "requeue";
        this.addAfter(key, outcome.requeueAfterMs, outcome.priority ?? "periodic");
      } else {
        result = "done";
      }
    } catch (err) {
      result = this.#failed(key, priority, err, controller.signal);
    } finally {
      this.#clock.clearTimeout(timer);
      this.#inFlight.delete(key);
    }
    this.#metrics?.reconciled(result, priority, this.#clock.now() - started);
    this.#finish(key, priority);
  }

  #failed(key: string, priority: Priority, err: unknown, signal: AbortSignal): ReconcileResult {
    if (signal.reason instanceof SupersededError) return "superseded";
    if (err instanceof TerminalError) {
      this.#limiter.forget(key);
      this.#log?.error({ key, priority, err }, "reconcile failed for good; not retrying");
      return "terminal";
    }
    const timedOut = signal.reason instanceof ReconcileTimeoutError;
    const delayMs = this.#limiter.when(key);
    this.#log?.warn(
      { key, priority, err, retryInMs: delayMs, retries: this.#limiter.retries(key) },
      timedOut ? "reconcile timed out; retrying" : "reconcile failed; retrying",
    );
    this.addAfter(key, delayMs, priority);
    return timedOut ? "timeout" : "retry";
  }

  #finish(key: string, priority: Priority): void {
    this.#processing.delete(key);
    if (isBackground(priority)) this.#backgroundInFlight--;
    const dirty = this.#dirty.get(key);
    if (dirty) {
      this.#dirty.delete(key);
      this.add(key, dirty);
    }
    if (this.#processing.size === 0) this.#idle?.();
    this.#schedulePump();
  }
}

/** Work that can wait behind a wake: a change seen by a watch, or a periodic check. */
function isBackground(priority: Priority): boolean {
  return priority === "change" || priority === "periodic";
}
