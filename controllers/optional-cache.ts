/**
 * A cache of a resource that may not exist yet, such as KEDA's ScaledObjects when KEDA is installed after
 * Napwake: `start` is tried now and then every `retryMs` until it succeeds, so the operator picks the
 * resource up without a restart. Until then `current` is undefined and readers carry on without it.
 */
export interface OptionalCache<C> {
  readonly current: C | undefined;
  stop(): void;
}

export async function optionalCache<C>(
  start: () => Promise<C>,
  retryMs: number,
  onMissing: (err: unknown) => void = () => undefined,
): Promise<OptionalCache<C>> {
  let current: C | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  const attempt = async () => {
    try {
      const started = await start();
      if (stopped) return;
      current = started;
    } catch (err) {
      onMissing(err);
      if (!stopped) timer = setTimeout(() => void attempt(), retryMs);
    }
  };
  await attempt();
  return {
    get current() {
      return current;
    },
    stop() {
      stopped = true;
      if (timer) clearTimeout(timer);
    },
  };
}
