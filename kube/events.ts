import { type EventsV1Api, type EventsV1Event, V1MicroTime } from "@kubernetes/client-node";
import type { EventReason } from "../api/keys.ts";
import { endAlphanumeric } from "../api/names.ts";
import { withinDeadline } from "./abort.ts";
import { type Clock, systemClock } from "./clock.ts";

/**
 * Events as the audit log (events.k8s.io/v1): every action is one Event; a skip or block is sent once per
 * (object uid, type, reason) until its note (or what it reads the same by) or proposed values change, so a
 * periodic check that keeps skipping for the same reason does not flood the API server.
 */

export const reportingController = "napwake.dev/operator";

export type EventsClient = Pick<EventsV1Api, "createNamespacedEvent">;

export interface ObjectRef {
  apiVersion: string;
  kind: string;
  name: string;
  /** Empty for cluster-scoped objects (a Namespace): their Events go to `default`. */
  namespace?: string;
  uid: string;
  resourceVersion?: string;
}

export type EventType = "Normal" | "Warning";

export interface EventInput {
  regarding: ObjectRef;
  type: EventType;
  reason: EventReason;
  /** What was done or would have been done, e.g. `Pause`, `Resume`, `LetGo`. */
  action: string;
  /** For people: what happened and why. */
  note: string;
  related?: ObjectRef;
}

export interface SkipInput extends EventInput {
  /**
   * The values the skipped step proposed (e.g. `replicas=0`), as one string: a change sends the skip again
   * even when the note reads the same.
   */
  fingerprint?: string;
  /**
   * What a repeat reads the same by, in place of the note, when the note carries details that vary from check to
   * check (an error's wording): the skip is sent again only when this or the fingerprint changes.
   */
  sameAs?: string;
}

export interface ActionInput extends EventInput {
  /**
   * The note of the skip that tells the same situation once the action is done (a let-go's reason, once the
   * workload it resumed is up): remembered as sent, so the reconcile after the action does not tell it again.
   */
  settledAs?: string;
}

export type RecordResult = "sent" | "suppressed" | "failed";

/** One key per (object uid, type, reason). */
export function dedupKey(e: Pick<EventInput, "regarding" | "type" | "reason">): string {
  return `${e.regarding.uid}\u0000${e.type}\u0000${e.reason}`;
}

/** What identifies a repeat of the same skip: its note (or what it reads the same by) and proposed values. */
export function dedupValue(e: Pick<SkipInput, "note" | "fingerprint" | "sameAs">): string {
  return `${e.sameAs ?? e.note}\u0000${e.fingerprint ?? ""}`;
}

/** Whether a skip is sent, given the value last sent under its key (undefined: never, or forgotten). */
export function shouldSendSkip(lastSent: string | undefined, e: SkipInput): boolean {
  return lastSent !== dedupValue(e);
}

/** A Map bounded to `capacity` entries that forgets the least recently used one first. */
export class Lru<K, V> {
  readonly #capacity: number;
  readonly #map = new Map<K, V>();

  constructor(capacity: number) {
    if (!(capacity >= 1)) throw new Error("Lru: capacity must be at least 1");
    this.#capacity = capacity;
  }

  get size(): number {
    return this.#map.size;
  }

  get(key: K): V | undefined {
    if (!this.#map.has(key)) return undefined;
    const value = this.#map.get(key) as V;
    this.#map.delete(key);
    this.#map.set(key, value);
    return value;
  }

  set(key: K, value: V): void {
    this.#map.delete(key);
    this.#map.set(key, value);
    if (this.#map.size > this.#capacity) {
      const oldest = this.#map.keys().next();
      if (!oldest.done) this.#map.delete(oldest.value);
    }
  }

  delete(key: K): void {
    this.#map.delete(key);
  }
}

const maxNoteBytes = 1024;
const maxReportingInstance = 128;
const maxNamePrefix = 200;

/** Cuts a note to the API's 1 kB limit, between characters: never inside a surrogate pair or a UTF-8 sequence. */
export function truncateNote(note: string): string {
  if (Buffer.byteLength(note) <= maxNoteBytes) return note;
  const room = maxNoteBytes - Buffer.byteLength("…");
  let bytes = 0;
  let end = 0;
  for (const character of note) {
    bytes += Buffer.byteLength(character);
    if (bytes > room) break;
    end += character.length;
  }
  return `${note.slice(0, end)}…`;
}

/**
 * An Event name as client-go makes them: `<object name>.<hex nanoseconds>`. `seq` (a per-recorder counter)
 * stands in for the nanoseconds a millisecond clock lacks, so two Events in one millisecond differ.
 */
export function eventName(objectName: string, nowMs: number, seq: number): string {
  const nanos = BigInt(Math.floor(nowMs)) * 1_000_000n + BigInt(seq % 1_000_000);
  // A cut name must still end in an alphanumeric, or `<name>.<hex>` is no DNS subdomain and is refused.
  const prefix = endAlphanumeric(objectName.slice(0, maxNamePrefix));
  return `${prefix}.${nanos.toString(16)}`;
}

/** The Event object for one occurrence. */
export function buildEvent(
  e: EventInput,
  opts: { reportingInstance: string; nowMs: number; seq?: number; controller?: string },
): EventsV1Event {
  const namespace = e.regarding.namespace || "default";
  return {
    apiVersion: "events.k8s.io/v1",
    kind: "Event",
    metadata: { name: eventName(e.regarding.name, opts.nowMs, opts.seq ?? 0), namespace },
    eventTime: new V1MicroTime(opts.nowMs),
    reportingController: opts.controller ?? reportingController,
    // events.k8s.io/v1 takes at most 128 characters; a pod name may have 253, and all Events would be refused.
    reportingInstance: opts.reportingInstance.slice(0, maxReportingInstance),
    action: e.action,
    reason: e.reason,
    type: e.type,
    note: truncateNote(e.note),
    regarding: { ...e.regarding },
    ...(e.related ? { related: { ...e.related } } : {}),
  };
}

export interface EventRecorderOptions {
  client: EventsClient;
  /** This replica: the pod name. */
  reportingInstance: string;
  /**
   * How many objects to remember the sent skips of, for de-duplication. Default 100,000: more objects skipping
   * than it remembers would have every check send their skips again (each check goes through them all, so the
   * least recently used is always the next one); an entry is a few hundred bytes.
   */
  dedupCapacity?: number;
  /**
   * How long one Event may take to write. Default 5 s: reconciles wait for their Events, and a slow events
   * endpoint (event storms are when it is slow) must not hold a pause's status write for minutes.
   */
  timeoutMs?: number;
  clock?: Clock;
  log?: { warn(obj: object, msg: string): void };
}

/** Writes Events; never throws (a lost Event must not fail a reconcile), returns what happened. */
export class EventRecorder {
  readonly #opts: EventRecorderOptions;
  readonly #clock: Clock;
  /** Per object uid: the skips sent about it, by (type, reason). */
  readonly #sent: Lru<string, Map<string, string>>;
  #seq = 0;

  constructor(opts: EventRecorderOptions) {
    this.#opts = opts;
    this.#clock = opts.clock ?? systemClock;
    this.#sent = new Lru(opts.dedupCapacity ?? 100_000);
  }

  /**
   * An action taken (a pause, a resume, a let-go): always one Event. It also forgets the skips sent about the
   * same object: after an action the situation is a new one, and a skip that comes back is news again.
   */
  async action({ settledAs, ...e }: ActionInput): Promise<RecordResult> {
    const uid = e.regarding.uid;
    this.#sent.delete(uid);
    const settled = settledAs === undefined ? undefined : dedupValue({ note: settledAs });
    if (settled !== undefined) this.#sent.set(uid, new Map([[dedupKey(e), settled]]));
    const result = await this.#send(e);
    // Not told, the situation is news for the skip after it.
    if (result === "failed" && settled !== undefined) this.#sent.get(uid)?.delete(dedupKey(e));
    return result;
  }

  /** Something observed, not done (a forecast phase change, an anomaly): always one Event, skips remembered. */
  notice(e: EventInput): Promise<RecordResult> {
    return this.#send(e);
  }

  /** A skip or block: sent once until its note (or `sameAs`) or fingerprint changes. */
  async skip(e: SkipInput): Promise<RecordResult> {
    const uid = e.regarding.uid;
    const key = dedupKey(e);
    const sent = this.#sent.get(uid) ?? new Map<string, string>();
    if (!shouldSendSkip(sent.get(key), e)) return "suppressed";
    const value = dedupValue(e);
    // Remembered before sending so that two concurrent identical skips send one Event.
    sent.set(key, value);
    this.#sent.set(uid, sent);
    const result = await this.#send(e);
    if (result === "failed" && sent.get(key) === value) sent.delete(key);
    return result;
  }

  async #send(e: EventInput): Promise<RecordResult> {
    const body = buildEvent(e, {
      reportingInstance: this.#opts.reportingInstance,
      nowMs: this.#clock.now(),
      seq: this.#seq++,
    });
    const ms = this.#opts.timeoutMs ?? 5_000;
    try {
      await withinDeadline(
        ms,
        `no answer within ${ms} ms`,
        (options) =>
          this.#opts.client.createNamespacedEvent(
            { namespace: body.metadata?.namespace ?? "default", body },
            options,
          ),
        this.#clock,
      );
      return "sent";
    } catch (err) {
      this.#opts.log?.warn(
        {
          err: err instanceof Error ? err.message : String(err),
          reason: e.reason,
          regarding: `${e.regarding.kind} ${e.regarding.namespace ?? ""}/${e.regarding.name}`,
        },
        "could not record an Event",
      );
      return "failed";
    }
  }
}
