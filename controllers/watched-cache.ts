/**
 * An informer cache as the controllers read it: only the objects they can read (a ManagedWorkload stored
 * without a spec by an older CRD is left out, reported, rather than read), and listeners that cannot take the
 * process down. The informer calls listeners from a watch callback nobody awaits, so a listener that throws
 * would end as an unhandled rejection, which ends the process; a listener's error is reported instead.
 */
import type { KubernetesObject, ObjectCache } from "@kubernetes/client-node";

export interface WatchedCache<T extends KubernetesObject> {
  cache: ObjectCache<T>;
  /**
   * Adds a listener called after every add, update and delete (level-based: it re-reads what it needs); the
   * function returned removes it (a controller's stop, so terms do not pile up).
   */
  onChange(listener: (obj: T) => void): () => void;
  /** Why the object of that name is left out of `cache` (it exists but cannot be read), or null. */
  leftOut(name: string, namespace?: string): string | null;
  /**
   * Adds a listener called with the name of an object left out of `cache` once it is deleted: what its name
   * blocked (an opt-in refused while it held the name) can go ahead. Removed by the function returned.
   */
  onLeftOutGone(listener: (meta: { name: string; namespace: string }) => void): () => void;
}

/** What a cache reports: objects it leaves out, and listeners that threw. */
export interface WatchedCacheLog {
  warn(fields: object, message: string): void;
}

export interface WatchedCacheOptions<T> {
  /** Why an object cannot be read (it is left out of the cache and of listeners), or null. */
  unreadable?: (obj: T) => string | null;
  log?: WatchedCacheLog;
}

type Verb = "add" | "update" | "delete";

/** The informer's event source: client-node's ListWatch calls `on(verb, cb)` for each change. */
export interface CacheEvents {
  on(verb: Verb, callback: (obj: KubernetesObject) => void): void;
}

export function watchedCache<T extends KubernetesObject>(
  inner: ObjectCache<T>,
  events: CacheEvents,
  opts: WatchedCacheOptions<T> = {},
): WatchedCache<T> {
  const unreadable = opts.unreadable ?? (() => null);
  const readable = (o: T | undefined): o is T => o !== undefined && unreadable(o) === null;
  const listeners: ((obj: T) => void)[] = [];
  const goneListeners: ((meta: { name: string; namespace: string }) => void)[] = [];
  const tell = <A>(to: readonly ((arg: A) => void)[], arg: A, obj: T, verb: Verb) => {
    for (const listener of [...to]) {
      try {
        listener(arg);
      } catch (err) {
        opts.log?.warn({ object: nameOf(obj), verb, err: String(err) }, "a cache listener failed");
      }
    }
  };
  for (const verb of ["add", "update", "delete"] as const) {
    events.on(verb, (o) => {
      const obj = o as T;
      const why = unreadable(obj);
      if (why === null) return tell(listeners, obj, obj, verb);
      // Deleted, it is gone from the cache: nothing left to say about it, but what it blocked may go ahead.
      if (verb !== "delete") opts.log?.warn({ object: nameOf(obj), reason: why }, "left out of the cache");
      else
        tell(
          goneListeners,
          { name: obj.metadata?.name ?? "", namespace: obj.metadata?.namespace ?? "" },
          obj,
          verb,
        );
    });
  }
  const removable = <L>(list: L[], listener: L) => {
    list.push(listener);
    return () => {
      const at = list.indexOf(listener);
      if (at >= 0) list.splice(at, 1);
    };
  };
  return {
    cache: {
      get: (name, namespace) => {
        const o = inner.get(name, namespace);
        return readable(o) ? o : undefined;
      },
      list: (namespace) => inner.list(namespace).filter(readable),
    },
    leftOut(name, namespace) {
      const o = inner.get(name, namespace);
      return o === undefined ? null : unreadable(o);
    },
    onChange: (listener) => removable(listeners, listener),
    onLeftOutGone: (listener) => removable(goneListeners, listener),
  };
}

function nameOf(o: KubernetesObject): string {
  const ns = o.metadata?.namespace;
  return `${o.kind ?? "object"} ${ns ? `${ns}/` : ""}${o.metadata?.name ?? ""}`;
}
