// Which landed writes count as a pause or a wake (napwake_pauses_total, napwake_wakes_total). A wake is counted
// once, with what woke the workload, whichever write ends it: the resume's own scale from zero; a scale from an
// autoscaler's minimum when KEDA, released, brought the workload up first; or, failing both, forgetting the pause
// the resume ends (KEDA brought it to the very count it was paused from, or it was let go meanwhile). A resume
// interrupted after its scale is finished by a later reconcile, which must not count it again.

import type { Write } from "./observation.ts";

/** A resume decided: the pause it ends (status.pausedAt as the decision read it) and what woke the workload. */
export type WakeDue = { pausedAt: string | undefined; source: string };

export type Counted = { kind: "pause" } | { kind: "wake"; source: string } | null;

export class LifecycleLedger {
  /** Resumes decided and not yet counted, by ManagedWorkload key. */
  readonly #due = new Map<string, WakeDue>();

  /** A decision about to be written: one that scales from zero owes a wake until a write of it lands. */
  decided(key: string, writes: readonly Write[], wake: WakeDue): void {
    if (writes.some((w) => w.kind === "scale" && w.from === 0 && w.to > 0)) this.#due.set(key, wake);
  }

  /**
   * What a write of `key`'s that landed counts: `decided` is the pause its decision was about and the source of a
   * wake as that decision reads it (used when no resume is owed: one decided before this operator started).
   */
  landed(key: string, write: Write, decided: WakeDue): Counted {
    const due = this.#due.get(key);
    const owed = due !== undefined && due.pausedAt === decided.pausedAt ? due : undefined;
    if (write.kind === "scale" && write.to === 0) {
      this.#due.delete(key);
      return { kind: "pause" };
    }
    if (write.kind === "scale" && (write.from === 0 || write.finishesWake)) {
      this.#due.delete(key);
      return { kind: "wake", source: (owed ?? decided).source };
    }
    if (write.kind === "forget-paused-from" && owed) {
      this.#due.delete(key);
      return { kind: "wake", source: owed.source };
    }
    return null;
  }

  forget(key: string): void {
    this.#due.delete(key);
  }
}
