/**
 * The status a controller last wrote for each key, the resourceVersion it was decided from and the one the
 * write made. Informer caches lag behind our own writes: while the cache still shows the version we decided
 * from, decide from what we wrote instead. Status writes are conditional on the version decided from
 * (applyStatusIfUnchanged), so a cache that lags in any other way fails with a conflict and is retried.
 */
type Versioned<S> = { metadata: { resourceVersion?: string }; status?: S };

export class OwnStatusMemory<S> {
  readonly #written = new Map<string, { basedOn: string; written: string; status: S }>();

  /** The cached object, or the same object with our newer status while the cache has not caught up. */
  view<T extends Versioned<S>>(key: string, cached: T): T {
    const own = this.#written.get(key);
    if (own && own.basedOn === (cached.metadata.resourceVersion ?? "")) {
      return {
        ...cached,
        metadata: { ...cached.metadata, resourceVersion: own.written },
        status: own.status,
      };
    }
    this.#written.delete(key);
    return cached;
  }

  remember(key: string, decidedFrom: Versioned<S>, written: string, status: S): void {
    this.#written.set(key, { basedOn: decidedFrom.metadata.resourceVersion ?? "", written, status });
  }

  forget(key: string): void {
    this.#written.delete(key);
  }
}
