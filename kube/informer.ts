import type { Informer, KubernetesObject, ObjectCache } from "@kubernetes/client-node";

export type CachedInformer<T extends KubernetesObject> = Informer<T> & ObjectCache<T>;

export interface KeptInformer<T extends KubernetesObject> {
  cache: ObjectCache<T>;
  stop(): Promise<void>;
}

/** A restart that fails waits twice as long before the next, up to this. */
export const MAX_RESTART_DELAY_MS = 30_000;

/**
 * Starts an informer and keeps it running: a broken watch is restarted after `restartDelayMs` (the
 * client stops on error and leaves restarting to us), and a restart that fails itself (the API server
 * down, credentials refused) is tried again, waiting twice as long each time up to MAX_RESTART_DELAY_MS,
 * rather than leaving the cache to go stale. `onChange` runs after every add, update and delete, without
 * telling which: callers re-read the cache (level-based).
 */
export async function keepInformer<T extends KubernetesObject>(
  informer: Pick<CachedInformer<T>, "on" | "start" | "stop"> & ObjectCache<T>,
  opts: { onChange?: () => void; restartDelayMs?: number } = {},
): Promise<KeptInformer<T>> {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  const firstDelayMs = opts.restartDelayMs ?? 1_000;
  let delayMs = firstDelayMs;
  if (opts.onChange) {
    for (const verb of ["add", "update", "delete"] as const) informer.on(verb, opts.onChange);
  }
  const restartLater = () => {
    if (stopped) return;
    // One restart pending at a time: a failed start may also report an error.
    clearTimeout(timer);
    timer = setTimeout(() => {
      if (stopped) return;
      informer.start().then(
        () => {
          delayMs = firstDelayMs;
        },
        () => {
          delayMs = Math.min(MAX_RESTART_DELAY_MS, delayMs * 2);
          restartLater();
        },
      );
    }, delayMs);
  };
  informer.on("error", restartLater);
  await informer.start();
  return {
    cache: informer,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await informer.stop();
    },
  };
}
