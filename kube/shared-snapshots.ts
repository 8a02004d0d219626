/**
 * Values read at most once per `maxAgeMs` per key and shared by every reader: concurrent readers of a key wait
 * for the one read in flight. A failed read is not kept, so the next reader tries again.
 */
export class SharedSnapshots<T> {
  readonly #maxAgeMs: number;
  readonly #entries = new Map<string, { atMs: number; value: Promise<T> }>();

  constructor(maxAgeMs: number) {
    this.#maxAgeMs = maxAgeMs;
  }

  get(key: string, nowMs: number, read: () => Promise<T>): Promise<T> {
    const entry = this.#entries.get(key);
    if (entry && nowMs - entry.atMs < this.#maxAgeMs && nowMs >= entry.atMs) return entry.value;
    const value = read();
    const fresh = { atMs: nowMs, value };
    this.#entries.set(key, fresh);
    value.catch(() => {
      if (this.#entries.get(key) === fresh) this.#entries.delete(key);
    });
    return value;
  }
}
