import {
  type Informer,
  type KubeConfig,
  type KubernetesObject,
  type ListPromise,
  ListWatch,
  type ObjectCache,
  Watch,
} from "@kubernetes/client-node";
import { type Clock, steadyClock } from "./clock.ts";

export type CachedInformer<T extends KubernetesObject> = Informer<T> & ObjectCache<T>;

/** What an informer watches with: client-node's Watch. */
export type WatchLike = Pick<Watch, "watch">;

/**
 * An informer as client-node's `makeInformer` builds it, whose watch does not connect once `close()` came. The
 * client reconnects a watch the server closed after a delay of its own, and does not ask after it whether it was
 * stopped meanwhile: a stop in that delay would leave a watch running, feeding a cache nobody reads.
 */
export function closableInformer<T extends KubernetesObject>(
  kc: KubeConfig,
  path: string,
  list: ListPromise<T>,
  watch: WatchLike = new Watch(kc),
): CachedInformer<T> & { close(): void } {
  let closed = false;
  const gated: WatchLike = {
    watch: (watchPath, query, callback, done) => {
      if (!closed) return watch.watch(watchPath, query, callback, done);
      const aborted = new AbortController();
      aborted.abort();
      return Promise.resolve(aborted);
    },
  };
  return Object.assign(new ListWatch<T>(path, gated as Watch, list, false), {
    close: () => {
      closed = true;
    },
  });
}

export interface KeptInformer<T extends KubernetesObject> {
  cache: ObjectCache<T>;
  stop(): Promise<void>;
}

/** Each restart after a failure waits twice as long as the one before, up to this. */
export const MAX_RESTART_DELAY_MS = 30_000;
/**
 * A watch that ran this long since it last started without failing was healthy: its next failure starts from the
 * first delay.
 */
export const HEALTHY_AFTER_MS = 60_000;

/**
 * Starts an informer and keeps it running: a broken watch is restarted after `restartDelayMs` (the
 * client stops on error and leaves restarting to us). While restarts keep failing (the API server down,
 * credentials refused) each waits twice as long as the one before, up to MAX_RESTART_DELAY_MS, rather than
 * hammering the API server every second; a restart that throws is retried the same way. `onChange` runs after
 * every add, update and delete, without telling which: callers re-read the cache (level-based).
 *
 * Resolves once a start has listed without error, not before: the client's start() resolves after a failed
 * list too, and an empty cache taken for synced would read as "nothing exists" (opt-in would delete every
 * ManagedWorkload of a Namespace it did not see).
 *
 * Once stopped, nothing is told and nothing keeps running: a restart whose watch was still connecting when stop()
 * came is stopped again as soon as it connects (the client's stop() closes only a watch it already has), and an
 * informer from closableInformer opens no watch its client was about to reconnect.
 */
export async function keepInformer<T extends KubernetesObject>(
  informer: Pick<CachedInformer<T>, "on" | "start" | "stop"> & ObjectCache<T> & { close?(): void },
  opts: {
    onChange?: () => void;
    restartDelayMs?: number;
    /**
     * A failed first list rejects (the informer stopped) instead of being retried until one works: for a
     * resource that may not be served, whose caller tries again later (see optional-cache.ts).
     */
    failFirstList?: boolean;
    /** Each failed list or watch, before it is retried (for a log line: until one works, callers wait). */
    onError?: (err: unknown) => void;
    /** Measures how long a watch ran (the steady clock: a wall-clock step is no time). */
    clock?: Pick<Clock, "now">;
  } = {},
): Promise<KeptInformer<T>> {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const firstDelayMs = opts.restartDelayMs ?? 1_000;
  let delayMs = firstDelayMs;
  const clock = opts.clock ?? steadyClock;
  // When the running watch last started without a failure; null while none runs.
  let runningSinceMs: number | null = null;
  const onChange = opts.onChange;
  if (onChange) {
    const tell = () => {
      if (!stopped) onChange();
    };
    for (const verb of ["add", "update", "delete"] as const) informer.on(verb, tell);
  }
  let markSynced: () => void = () => undefined;
  const synced = new Promise<void>((resolve) => {
    markSynced = resolve;
  });
  // A start that listed without error: the watch runs from now, and the cache is synced.
  const running = () => {
    runningSinceMs = clock.now();
    markSynced();
  };
  let failedSinceStart = false;
  const start = async () => {
    failedSinceStart = false;
    await informer.start();
    if (stopped) {
      await informer.stop();
      return;
    }
    if (!failedSinceStart) running();
  };
  // The client reports a failed list or watch as an error event (its start() resolves all the same).
  const restartLater = (err?: unknown) => {
    failedSinceStart = true;
    if (stopped) return;
    opts.onError?.(err);
    if (runningSinceMs !== null && clock.now() - runningSinceMs >= HEALTHY_AFTER_MS) delayMs = firstDelayMs;
    runningSinceMs = null;
    const waitMs = delayMs;
    delayMs = Math.min(MAX_RESTART_DELAY_MS, delayMs * 2);
    // One restart pending at a time.
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (!stopped) start().catch(restartLater);
    }, waitMs);
  };
  // With failFirstList, a failure of the first start is kept to be thrown, not retried.
  let firstFailure: unknown;
  let firstStartDone = !opts.failFirstList;
  informer.on("error", (err: unknown) => {
    if (firstStartDone) restartLater(err);
    else firstFailure ??= err ?? new Error("the first list failed");
  });
  if (opts.failFirstList) {
    await informer.start().catch((err: unknown) => {
      firstFailure ??= err;
    });
    firstStartDone = true;
    if (firstFailure !== undefined) {
      stopped = true;
      await informer.stop();
      throw firstFailure;
    }
    running();
  } else {
    await start().catch(restartLater);
  }
  await synced;
  return {
    cache: informer,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      // A watch the client is about to reconnect after its own delay is not opened (see closableInformer).
      informer.close?.();
      await informer.stop();
    },
  };
}
