/** Something a leader runs and stops when it stops leading. */
export type Stoppable = { stop(): Promise<void> };

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
    await Promise.all(running.map((s) => s.stop()));
  }
}
