import { isDeepStrictEqual } from "node:util";
import { httpCode } from "../kube/errors.ts";

/**
 * The status a controller last wrote for each key, and the resourceVersions that predate it: the one it was
 * first decided from and every one this controller wrote since. Informer caches lag behind our own writes:
 * while the cache shows any of those older versions, decide from our latest write instead. Status writes are
 * conditional on the version decided from (applyStatusIfUnchanged), so a cache that lags in any other way
 * (someone else wrote) fails with a conflict and is retried, never written over a newer status.
 */
type Versioned<S> = { metadata: { resourceVersion?: string }; status?: S };

export class OwnStatusMemory<S> {
  readonly #written = new Map<string, { older: Set<string>; written: string; status: S }>();

  /** The cached object, or the same object with our newer status while the cache has not caught up. */
  view<T extends Versioned<S>>(key: string, cached: T): T {
    const own = this.#written.get(key);
    if (own?.older.has(cached.metadata.resourceVersion ?? "")) {
      return {
        ...cached,
        metadata: { ...cached.metadata, resourceVersion: own.written },
        status: own.status,
      };
    }
    this.#written.delete(key);
    return cached;
  }

  /** A status written at `written`, decided from `cached` (the cache's object, before any substitution). */
  remember(key: string, cached: Versioned<S>, written: string, status: S): void {
    const own = this.#written.get(key);
    const older = new Set(own?.older ?? []);
    older.add(cached.metadata.resourceVersion ?? "");
    if (own) older.add(own.written);
    this.#written.set(key, { older, written, status });
  }

  /**
   * Writes `status` through `write` (which returns the new resourceVersion) when it differs from what
   * `current` shows, and remembers it. "gone" when the object was deleted meanwhile: nothing left to report on.
   */
  async writeIfChanged<T extends Versioned<S>>(
    key: string,
    cached: Versioned<S>,
    current: T,
    status: S,
    write: (object: T, status: S) => Promise<string>,
  ): Promise<"unchanged" | "written" | "gone"> {
    if (!statusChanged(current.status, status)) return "unchanged";
    try {
      this.remember(key, cached, await write(current, status), status);
      return "written";
    } catch (err) {
      if (httpCode(err) === 404) return "gone";
      throw err;
    }
  }

  forget(key: string): void {
    this.#written.delete(key);
  }

  /** Forgets every key not in `keys` (objects deleted since). */
  retain(keys: ReadonlySet<string>): void {
    for (const key of this.#written.keys()) if (!keys.has(key)) this.#written.delete(key);
  }
}

/** Whether `next` differs from the status read back; what was read has no undefined members, so compare like with like. */
export function statusChanged(current: unknown, next: unknown): boolean {
  const plain = (v: unknown) => JSON.parse(JSON.stringify(v ?? {})) as unknown;
  return !isDeepStrictEqual(plain(current), plain(next));
}
