import { LeadershipLostError } from "../kube/leader-election.ts";

/**
 * Something a leader runs and stops when it stops leading. `deadlineMs` bounds how long work in flight may
 * finish before it is aborted (0: abort it at once).
 */
export type Stoppable = { stop(opts?: { deadlineMs?: number }): Promise<void> };

/**
 * How long work in flight may finish once leading ends for this reason: for a lost lease, none (it may already
 * be another replica's); for a replica stopping on its own, until its last renewal's deadline; otherwise the
 * pieces' own default.
 */
export function drainDeadlineMs(reason: unknown): number | undefined {
  return reason instanceof LeadershipLostError ? reason.drainMs : undefined;
}

/**
 * Runs what a leader runs for as long as `signal` is not aborted. `start` registers each piece with `started`
 * as soon as it runs, so whatever started is stopped when leading ends: at once, also while a later piece is
 * still starting (a slow API server is when a lease is lost, and what runs may already be another replica's
 * to run), and also when a later piece fails to start. A piece that registers after leading ended is stopped
 * as it registers. Returns once everything started has stopped and `start` has settled.
 */
export async function whileLeading(
  signal: AbortSignal,
  start: (started: (s: Stoppable) => void) => Promise<void>,
): Promise<void> {
  const stops: Promise<void>[] = [];
  const failures: unknown[] = [];
  const running: Stoppable[] = [];
  const stopOptions = () => {
    const deadlineMs = drainDeadlineMs(signal.reason);
    return deadlineMs === undefined ? {} : { deadlineMs };
  };
  // Each stop is watched from the moment it starts: one that fails while start is still under way is reported,
  // not an unhandled rejection.
  const stopRunning = () => {
    for (const s of running.splice(0)) {
      stops.push(s.stop(stopOptions()).catch((err: unknown) => void failures.push(err)));
    }
  };
  const ended = new Promise<void>((resolve) => {
    if (signal.aborted) resolve();
    else signal.addEventListener("abort", () => resolve(), { once: true });
  });
  const starting = start((s) => {
    running.push(s);
    if (signal.aborted) stopRunning();
  });
  try {
    await Promise.race([starting, ended]);
    await ended;
  } finally {
    stopRunning();
    // A start still under way when leading ended: whatever it starts later is stopped as it registers.
    await starting.catch(() => undefined);
    stopRunning();
    await Promise.all(stops);
  }
  if (failures.length > 0) throw failures[0];
  await starting;
}
