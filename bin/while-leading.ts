import { LeadershipLostError } from "../kube/leader-election.ts";

/**
 * Something a leader runs and stops when it stops leading. `deadlineMs` bounds how long work in flight may
 * finish before it is aborted (0: abort it at once).
 */
export type Stoppable = { stop(opts?: { deadlineMs?: number }): Promise<void> };

/** How long work in flight may finish once leading ends for this reason. */
export function drainDeadlineMs(reason: unknown): number | undefined {
  // A lost lease may already be another replica's, which starts within seconds: stop writing at once. A
  // replica stopping on its own still holds the lease until it releases it, so its work may finish first.
  return reason instanceof LeadershipLostError && !reason.graceful ? 0 : undefined;
}

/**
 * Runs what a leader runs for as long as `signal` is not aborted. `start` registers each piece with `started`
 * as soon as it runs, so whatever started is stopped when leading ends, also when a later piece fails to
 * start (a replica that cannot start everything must not keep half of it running after losing the lease).
 */
export async function whileLeading(
  signal: AbortSignal,
  start: (started: (s: Stoppable) => void) => Promise<void>,
): Promise<void> {
  const running: Stoppable[] = [];
  try {
    await start((s) => running.push(s));
    if (!signal.aborted) {
      await new Promise((resolve) => signal.addEventListener("abort", resolve, { once: true }));
    }
  } finally {
    const deadlineMs = drainDeadlineMs(signal.reason);
    await Promise.all(running.map((s) => s.stop(deadlineMs === undefined ? {} : { deadlineMs })));
  }
}
