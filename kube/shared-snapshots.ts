/**
 * Values read at most once per `maxAgeMs` per key and shared by every reader: concurrent readers of a key wait
 * for the one read in flight. A failed read is not kept, so the next reader tries again, and a value past its
 * age is let go within another `maxAgeMs`, so keys nobody reads any more (a deleted namespace) hold nothing.
 */
export class SharedSnapshots<T> {
  readonly #maxAgeMs: number;
  readonly #entries = new Map<string, { atMs: number; value: Promise<T> }>();
  #sweptAtMs = Number.NEGATIVE_INFINITY;

  constructor(maxAgeMs: number) {
    this.#maxAgeMs = maxAgeMs;
  }

  /** Keys with a value held. */
  get size(): number {
    return this.#entries.size;
  }

  get(key: string, nowMs: number, read: () => Promise<T>): Promise<T> {
    this.#sweep(nowMs);
    const entry = this.#entries.get(key);
    if (entry && this.#fresh(entry, nowMs)) return entry.value;
    const value = read();
    const fresh = { atMs: nowMs, value };
    this.#entries.set(key, fresh);
    value.catch(() => {
      if (this.#entries.get(key) === fresh) this.#entries.delete(key);
    });
    return value;
  }

  /** Lets go of values past their age, at most once per `maxAgeMs`: a reader pays for the sweep only then. */
  #sweep(nowMs: number) {
    if (nowMs >= this.#sweptAtMs && nowMs - this.#sweptAtMs < this.#maxAgeMs) return;
    this.#sweptAtMs = nowMs;
    for (const [key, entry] of this.#entries) {
      if (!this.#fresh(entry, nowMs)) this.#entries.delete(key);
    }
  }

  /** Read within `maxAgeMs` before `nowMs` (one read after it, by a clock stepped back, is not). */
  #fresh(entry: { atMs: number }, nowMs: number): boolean {
    return nowMs - entry.atMs < this.#maxAgeMs && nowMs >= entry.atMs;
  }
}
