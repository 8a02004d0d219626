// Which landed writes count as a pause or a wake (napwake_pauses_total, napwake_wakes_total). A wake is counted
// once, with what woke the workload, whichever write ends it: the resume's own scale from zero; a scale from an
// autoscaler's minimum when KEDA, released, brought the workload up first; or, failing both, forgetting the pause
// the resume ends (KEDA brought it to the very count it was paused from, or it was let go meanwhile). A resume
// interrupted after its scale is finished by a later reconcile, which must not count it again, and nor must one
// decided again, every write landed, from a cache that has not seen them (a retry after a failed status write). A
// pause is counted when its scale to zero lands, once: a pause decided again from a cache that has not seen that
// scale (a retry after a failed status write) finds the workload at zero already, and is the same pause.

import type { TargetState, Write } from "./observation.ts";

/** A resume decided: the pause it ends (status.pausedAt as the decision read it) and what woke the workload. */
export type WakeDue = { pausedAt: string | undefined; source: string };

/** What a decision read: a resume's `WakeDue`, and the workload's spec as `specSeen` names it. */
export type DecidedOn = WakeDue & { spec: string | undefined };

/**
 * The workload's spec as read (uid and metadata.generation), or undefined when its generation is unknown. Two
 * pauses never read the same one: a pause scales to zero, so the next one reads a spec scaled up since.
 */
export function specSeen(target: Pick<TargetState, "uid" | "generation">): string | undefined {
  return target.generation === undefined ? undefined : `${target.uid}/${target.generation}`;
}

export type Counted = { kind: "pause" } | { kind: "wake"; source: string } | null;

export class LifecycleLedger {
  /** Per ManagedWorkload key: the resume decided for a pause, and whether its wake was counted yet. */
  readonly #wakes = new Map<string, WakeDue & { counted: boolean }>();
  /** Per ManagedWorkload key: the spec the last pause counted was decided on. */
  readonly #pauses = new Map<string, string>();

  /**
   * A decision about to be written. One that scales from zero owes a wake until a write of it lands. One that
   * touches no pause (no scale, no paused-from) drops what was owed: the resume was not made after all.
   */
  decided(key: string, writes: readonly Write[], wake: WakeDue): void {
    const known = this.#wakes.get(key);
    if (writes.some((w) => w.kind === "scale" && w.from === 0 && w.to > 0)) {
      if (!(known?.counted && known.pausedAt === wake.pausedAt))
        this.#wakes.set(key, { ...wake, counted: false });
    } else if (!writes.some((w) => w.kind === "scale" || w.kind === "forget-paused-from")) {
      this.#wakes.delete(key);
    }
  }

  /**
   * What a write of `key`'s that landed counts: `decided` is the pause its decision was about, the source of a
   * wake as that decision reads it (used when none is owed: a resume decided before this operator started), and
   * the spec it read (a pause decided twice on one spec is one pause).
   */
  landed(key: string, write: Write, decided: DecidedOn): Counted {
    const known = this.#wakes.get(key);
    const same = known !== undefined && known.pausedAt === decided.pausedAt ? known : undefined;
    if (write.kind === "scale" && write.to === 0) {
      this.#wakes.delete(key);
      if (decided.spec !== undefined && this.#pauses.get(key) === decided.spec) return null;
      if (decided.spec === undefined) this.#pauses.delete(key);
      else this.#pauses.set(key, decided.spec);
      return { kind: "pause" };
    }
    if (write.kind === "scale" && (write.from === 0 || write.finishesWake)) {
      // Counted already: the resume's scale landed, and KEDA scaled down before its paused-from was forgotten.
      if (same?.counted) return null;
      const source = (same ?? decided).source;
      this.#wakes.set(key, { pausedAt: decided.pausedAt, source, counted: true });
      return { kind: "wake", source };
    }
    if (write.kind === "forget-paused-from") {
      if (!same) {
        this.#wakes.delete(key);
        return null;
      }
      // Kept as counted: a retry whose cache has not seen these writes decides the same resume again.
      this.#wakes.set(key, { ...same, counted: true });
      return same.counted ? null : { kind: "wake", source: same.source };
    }
    return null;
  }

  forget(key: string): void {
    this.#wakes.delete(key);
    this.#pauses.delete(key);
  }
}
