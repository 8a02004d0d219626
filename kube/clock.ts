/**
 * Time as an injected dependency: the work queue, leader election and the event recorder take a Clock so
 * that unit tests run on a FakeClock without real waiting.
 */

export type TimerHandle = unknown;

export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle): void;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

/**
 * A clock that never jumps: milliseconds since the epoch as of this process's start, then counted by the
 * monotonic timer. For measuring durations that must hold when the wall clock is stepped (leader election's
 * lease expiry and renew deadline); it drifts from the wall clock by whatever the wall clock is corrected by.
 */
export const steadyClock: Clock = {
  now: () => performance.timeOrigin + performance.now(),
  setTimeout: systemClock.setTimeout,
  clearTimeout: systemClock.clearTimeout,
};

/**
 * The clock to measure durations on: the steady clock in place of the system clock, any other (a test's
 * FakeClock) as it is. For code given the wall clock for its decisions that also compares times it set itself.
 */
export function forDurations(clock: Clock): Clock {
  return clock === systemClock ? steadyClock : clock;
}

/** Resolves after `ms` on `clock`, or at once with `false` when `signal` aborts. True when the time passed. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<boolean> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve(false);
    const onAbort = () => {
      clock.clearTimeout(timer);
      resolve(false);
    };
    const timer = clock.setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve(true);
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Whether `work` settles (either way) within `ms` on `clock`. The timer is cleared once either comes first. */
export async function settlesWithin(clock: Clock, work: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: TimerHandle | undefined;
  const timeUp = new Promise<false>((resolve) => {
    timer = clock.setTimeout(() => resolve(false), ms);
  });
  try {
    return await Promise.race([
      work.then(
        () => true,
        () => true,
      ),
      timeUp,
    ]);
  } finally {
    clock.clearTimeout(timer);
  }
}

interface FakeTimer {
  id: number;
  at: number;
  fn: () => void;
}

/** Lets every pending promise callback run (not a sleep: it yields one macrotask turn). */
export function settle(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** A clock for tests: time moves only through `advance`, which fires due timers in order. */
export class FakeClock implements Clock {
  #now: number;
  #nextId = 1;
  #timers: FakeTimer[] = [];

  constructor(startMs = Date.UTC(2030, 0, 1)) {
    this.#now = startMs;
  }

  now(): number {
    return this.#now;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = this.#nextId++;
    this.#timers.push({ id, at: this.#now + Math.max(0, ms), fn });
    return id;
  }

  clearTimeout(handle: TimerHandle): void {
    this.#timers = this.#timers.filter((t) => t.id !== handle);
  }

  /** How many timers are waiting to fire. */
  get pendingTimers(): number {
    return this.#timers.length;
  }

  /** Moves time forward by `ms`, firing due timers in time order and letting promises settle after each. */
  async advance(ms: number): Promise<void> {
    const target = this.#now + ms;
    await settle();
    for (;;) {
      const due = this.#timers.filter((t) => t.at <= target).sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (!due) break;
      this.#timers = this.#timers.filter((t) => t !== due);
      this.#now = Math.max(this.#now, due.at);
      due.fn();
      await settle();
    }
    this.#now = target;
    await settle();
  }
}
