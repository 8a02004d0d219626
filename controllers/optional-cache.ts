/**
 * A cache of a resource that may not exist yet, such as KEDA's ScaledObjects when KEDA is installed after
 * Napwake: `start` is tried now and then every `retryMs` until it succeeds, so the operator picks the
 * resource up without a restart. Until then `current` is undefined and readers carry on without it.
 *
 * "Not installed" must be an answer, not a guess: a first look that fails for another reason (RBAC, the API
 * server) says nothing about the resource, and readers carrying on without it would act as if it did not exist
 * (a resume that does not release KEDA's hold, say). So the first look is retried, sooner, until it either
 * starts the cache or fails with `isAbsent`; until then the returned promise waits, as a cache whose list keeps
 * failing keeps the operator unready.
 */
export interface OptionalCache<C> {
  readonly current: C | undefined;
  stop(): void;
}

export interface OptionalCacheOptions {
  /** Every failed attempt (for a log line). */
  onMissing?: (err: unknown) => void;
  /** Whether a failure says the resource is not there. Default: every failure does. */
  isAbsent?: (err: unknown) => boolean;
  /** The first wait between first looks that did not answer; doubled each time, up to `retryMs`. */
  firstRetryMs?: number;
}

export async function optionalCache<C>(
  start: () => Promise<C>,
  retryMs: number,
  opts: OptionalCacheOptions = {},
): Promise<OptionalCache<C>> {
  const { onMissing = () => undefined, isAbsent = () => true } = opts;
  let current: C | undefined;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let stopped = false;
  // Whether this attempt answered: started, or failed because the resource is not there.
  const attempt = async (): Promise<boolean> => {
    try {
      const started = await start();
      if (!stopped) current = started;
      return true;
    } catch (err) {
      onMissing(err);
      return isAbsent(err);
    }
  };
  const later = () => {
    if (stopped || current !== undefined) return;
    timer = setTimeout(() => void attempt().then(later), retryMs);
  };
  let delayMs = Math.min(opts.firstRetryMs ?? 1_000, retryMs);
  while (!(await attempt())) {
    await new Promise((resolve) => setTimeout(resolve, delayMs));
    delayMs = Math.min(delayMs * 2, retryMs);
  }
  later();
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
