import type { Informer, KubernetesObject, ObjectCache } from "@kubernetes/client-node";

export type CachedInformer<T extends KubernetesObject> = Informer<T> & ObjectCache<T>;

export interface KeptInformer<T extends KubernetesObject> {
  cache: ObjectCache<T>;
  stop(): Promise<void>;
}

/**
 * Starts an informer and keeps it running: a broken watch is restarted after `restartDelayMs` (the
 * client stops on error and leaves restarting to us). `onChange` runs after every add, update and delete,
 * without telling which: callers re-read the cache (level-based).
 */
export async function keepInformer<T extends KubernetesObject>(
  informer: CachedInformer<T>,
  opts: { onChange?: () => void; restartDelayMs?: number } = {},
): Promise<KeptInformer<T>> {
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;
  if (opts.onChange) {
    for (const verb of ["add", "update", "delete"] as const) informer.on(verb, opts.onChange);
  }
  informer.on("error", () => {
    if (stopped) return;
    timer = setTimeout(() => {
      if (!stopped) informer.start().catch(() => undefined);
    }, opts.restartDelayMs ?? 1_000);
  });
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
