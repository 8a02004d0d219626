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
