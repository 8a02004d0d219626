import {
  type ConfigurationOptions,
  type CoordinationV1Api,
  type V1Lease,
  type V1LeaseSpec,
  V1MicroTime,
} from "@kubernetes/client-node";
import { withinDeadline } from "./abort.ts";
import { type Clock, sleep, steadyClock } from "./clock.ts";
import { httpCode } from "./errors.ts";

/**
 * Leader election on a coordination.k8s.io/v1 Lease, as client-go's leaderelection does it.
 *
 * Why a leader stops acting before anyone else can take over: a candidate measures a lease's expiry on its
 * own clock, from the moment it first saw the lease's current version (never by comparing its clock with the
 * holder's renewTime, so clock skew between nodes does not matter). That moment is after the holder sent
 * the renewal that produced that version. The holder steps down (aborts the leading signal) when
 * `renewDeadline` has passed since it sent its last successful renewal, and a candidate acquires no earlier
 * than `leaseDuration` after it saw that renewal. With leaseDuration > renewDeadline, the old leader has
 * stopped at least `leaseDuration - renewDeadline` (5 s by default) before a new one starts: time for the
 * leader's work to notice its aborted signal. This assumes clocks that tick at the same rate, not that agree.
 */

export type LeaseClient = Pick<
  CoordinationV1Api,
  "readNamespacedLease" | "createNamespacedLease" | "replaceNamespacedLease"
>;

export interface LeaderElectionTimings {
  /** How long candidates wait after the last renewal they saw before taking the lease. Default 15 s. */
  leaseDurationMs: number;
  /** The leader steps down when it has not renewed for this long. Default 10 s. */
  renewDeadlineMs: number;
  /** Between attempts to acquire or renew. Default 2 s. */
  retryPeriodMs: number;
}

export const defaultTimings: LeaderElectionTimings = {
  leaseDurationMs: 15_000,
  renewDeadlineMs: 10_000,
  retryPeriodMs: 2_000,
};

export function validateTimings(t: LeaderElectionTimings): void {
  if (t.leaseDurationMs < 1_000) throw new Error("leader election: the lease duration must be at least 1 s");
  if (!(t.leaseDurationMs > t.renewDeadlineMs)) {
    throw new Error("leader election: the lease duration must be longer than the renew deadline");
  }
  if (!(t.renewDeadlineMs > t.retryPeriodMs && t.retryPeriodMs > 0)) {
    throw new Error("leader election: the renew deadline must be longer than the retry period (> 0)");
  }
}

/** When a candidate first saw the lease's current version (its resourceVersion), on its own clock. */
export interface Observation {
  resourceVersion: string;
  atMs: number;
}

/** Keeps the time of an unchanged lease; a new version restarts the count. */
export function observe(
  previous: Observation | undefined,
  resourceVersion: string,
  nowMs: number,
): Observation {
  return previous?.resourceVersion === resourceVersion ? previous : { resourceVersion, atMs: nowMs };
}

export type LeaseDecision =
  | { action: "create" }
  | { action: "renew" }
  | { action: "acquire"; because: "released" | "expired" }
  | { action: "wait"; holder: string; expiresAtMs: number };

/**
 * Who may hold the lease now, as seen by `identity`. `spec` undefined: no Lease exists. The holder renews
 * whatever the times say (the write carries the read resourceVersion, so it fails if anyone else wrote).
 */
export function decideLease(input: {
  identity: string;
  spec: V1LeaseSpec | undefined;
  observedAtMs: number;
  nowMs: number;
}): LeaseDecision {
  const { identity, spec, observedAtMs, nowMs } = input;
  if (!spec) return { action: "create" };
  const holder = spec.holderIdentity ?? "";
  if (holder === identity) return { action: "renew" };
  if (holder === "") return { action: "acquire", because: "released" };
  const expiresAtMs = observedAtMs + (spec.leaseDurationSeconds ?? 0) * 1000;
  if (nowMs >= expiresAtMs) return { action: "acquire", because: "expired" };
  return { action: "wait", holder, expiresAtMs };
}

/** The spec `identity` writes to create, renew or acquire the lease. */
export function leaseSpecFor(
  decision: { action: "create" | "renew" | "acquire" },
  current: V1LeaseSpec | undefined,
  identity: string,
  nowMs: number,
  leaseDurationSeconds: number,
): V1LeaseSpec {
  const now = new V1MicroTime(nowMs);
  const transitions = current?.leaseTransitions ?? 0;
  if (decision.action === "renew") {
    return { ...current, holderIdentity: identity, leaseDurationSeconds, renewTime: now };
  }
  return {
    ...current,
    holderIdentity: identity,
    leaseDurationSeconds,
    acquireTime: now,
    renewTime: now,
    // A transition is a change of holder; taking a released lease back is one too.
    leaseTransitions: decision.action === "create" ? 0 : transitions + 1,
  };
}

/** A released lease: no holder, so a candidate takes it at once (client-go writes the same). */
export function releasedSpec(current: V1LeaseSpec, nowMs: number): V1LeaseSpec {
  const now = new V1MicroTime(nowMs);
  return { ...current, holderIdentity: "", leaseDurationSeconds: 1, acquireTime: now, renewTime: now };
}

export interface ElectionLogger {
  info(obj: object, msg: string): void;
  warn(obj: object, msg: string): void;
}

export interface LeaderElectorOptions extends Partial<LeaderElectionTimings> {
  client: LeaseClient;
  namespace: string;
  /** The Lease's name. */
  name: string;
  /** This replica, unique among candidates: the pod name. */
  identity: string;
  /** Runs when this replica becomes leader. Stop acting when `signal` aborts; return when stopped. */
  onStartedLeading(signal: AbortSignal): void | Promise<void>;
  /** Runs when this replica stops leading (renew deadline passed, lease lost, or stop()). */
  onStoppedLeading?(reason: string): void;
  /** Bound on one API request. Default half the renew deadline. */
  requestTimeoutMs?: number;
  clock?: Clock;
  log?: ElectionLogger;
}

export class LeadershipLostError extends Error {
  override name = "LeadershipLostError";
  /**
   * How long the leader's work may still run: 0 when the lease may already be another's (stop at once); when
   * this replica stops on its own, the time left before a standby may take the lease (its renew deadline).
   */
  readonly drainMs: number;
  constructor(reason: string, drainMs = 0) {
    super(reason);
    this.drainMs = Math.max(0, drainMs);
  }
  /** Whether the work may finish what it is doing rather than stop at once. */
  get graceful(): boolean {
    return this.drainMs > 0;
  }
}

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export class LeaderElector {
  readonly #opts: LeaderElectorOptions;
  readonly #timings: LeaderElectionTimings;
  readonly #leaseDurationSeconds: number;
  readonly #requestTimeoutMs: number;
  readonly #clock: Clock;
  readonly #stopping = new AbortController();
  #observation: Observation | undefined;
  /** The lease as this replica last wrote it. */
  #written: V1Lease | undefined;
  #leading: AbortController | undefined;
  #deadline: unknown;
  /** The leading work, settled once it has stopped. */
  #work: Promise<void> = Promise.resolve();
  #loop: Promise<void> | undefined;
  #stopped: Promise<void> | undefined;
  /** When the last successful renewal (or acquisition) was sent. */
  #lastRenewalSentAt = Number.NEGATIVE_INFINITY;

  constructor(opts: LeaderElectorOptions) {
    this.#opts = opts;
    this.#timings = {
      leaseDurationMs: opts.leaseDurationMs ?? defaultTimings.leaseDurationMs,
      renewDeadlineMs: opts.renewDeadlineMs ?? defaultTimings.renewDeadlineMs,
      retryPeriodMs: opts.retryPeriodMs ?? defaultTimings.retryPeriodMs,
    };
    validateTimings(this.#timings);
    this.#leaseDurationSeconds = Math.ceil(this.#timings.leaseDurationMs / 1000);
    this.#requestTimeoutMs = opts.requestTimeoutMs ?? this.#timings.renewDeadlineMs / 2;
    // Durations here must not jump with the wall clock: a step forward would take a live lease, a step back
    // would keep leading past the lease.
    this.#clock = opts.clock ?? steadyClock;
  }

  get isLeader(): boolean {
    return this.#leading !== undefined;
  }

  /** Starts campaigning in the background. */
  start(): void {
    this.#loop ??= this.#run();
  }

  /**
   * Stops campaigning. If leading: aborts the leading signal, waits for onStartedLeading's work to return,
   * then (unless `release: false`, which simulates a crash) releases the lease so a standby takes over at once.
   */
  stop(opts: { release?: boolean } = {}): Promise<void> {
    // Once: the elector may stop itself (its work ended) while its owner stops it too.
    this.#stopped ??= this.#stop(opts);
    return this.#stopped;
  }

  async #stop(opts: { release?: boolean }): Promise<void> {
    this.#stopping.abort();
    await this.#loop;
    // No renewal follows from here: the work may drain only until the renew deadline of the last one.
    this.#stepDown("stopping", this.#renewDeadlineLeftMs());
    await this.#work;
    const written = this.#written;
    if (opts.release === false || !written?.spec || written.spec.holderIdentity !== this.#opts.identity)
      return;
    try {
      const body = { ...written, spec: releasedSpec(written.spec, this.#clock.now()) };
      await this.#request((options) =>
        this.#opts.client.replaceNamespacedLease(
          { name: this.#opts.name, namespace: this.#opts.namespace, body },
          options,
        ),
      );
      this.#opts.log?.info({ lease: this.#opts.name }, "released the leader lease");
    } catch (err) {
      // A conflict: another replica already holds it. Otherwise the lease simply expires.
      this.#opts.log?.warn(
        { lease: this.#opts.name, err: errorText(err) },
        "could not release the leader lease",
      );
    }
  }

  async #run(): Promise<void> {
    while (!this.#stopping.signal.aborted) {
      // Never campaign again while the previous term's work is still winding down.
      if (!this.#leading) await this.#work;
      if (this.#stopping.signal.aborted) return;
      await this.#tryAcquireOrRenew();
      await sleep(this.#clock, this.#timings.retryPeriodMs, this.#stopping.signal);
    }
  }

  async #tryAcquireOrRenew(): Promise<void> {
    const { client, name, namespace, identity } = this.#opts;
    const sentAt = this.#clock.now();
    const term = this.#leading;
    let lease: V1Lease | undefined;
    try {
      lease = await this.#request((options) => client.readNamespacedLease({ name, namespace }, options));
    } catch (err) {
      if (httpCode(err) !== 404) return this.#failed("read", err);
    }
    if (lease) {
      this.#observation = observe(
        this.#observation,
        lease.metadata?.resourceVersion ?? "",
        this.#clock.now(),
      );
    }
    const decision = decideLease({
      identity,
      spec: lease?.spec,
      observedAtMs: this.#observation?.atMs ?? sentAt,
      nowMs: this.#clock.now(),
    });
    if (decision.action === "wait") {
      this.#stepDown(`the lease is held by ${decision.holder}`);
      return;
    }
    const spec = leaseSpecFor(decision, lease?.spec, identity, this.#clock.now(), this.#leaseDurationSeconds);
    let written: V1Lease;
    try {
      written = await this.#request((options) =>
        lease
          ? client.replaceNamespacedLease({ name, namespace, body: { ...lease, spec } }, options)
          : client.createNamespacedLease(
              {
                namespace,
                body: {
                  apiVersion: "coordination.k8s.io/v1",
                  kind: "Lease",
                  metadata: { name, namespace },
                  spec,
                },
              },
              options,
            ),
      );
    } catch (err) {
      // 409: someone wrote the lease between our read and write. Whoever it was won; step down at once.
      if (httpCode(err) === 409) return this.#stepDown("another replica wrote the lease first");
      return this.#failed(decision.action, err);
    }
    this.#written = written;
    this.#observation = { resourceVersion: written.metadata?.resourceVersion ?? "", atMs: sentAt };
    if (this.#stopping.signal.aborted && !this.#leading) return;
    // The term this renewal was for ended while it was in flight (its deadline passed): a new term starts from a
    // later attempt, once the old term's work has settled, so two terms never run at once.
    if (term !== undefined && this.#leading !== term) return;
    this.#renewed(sentAt);
  }

  #failed(what: string, err: unknown): void {
    this.#opts.log?.warn(
      { lease: this.#opts.name, leading: this.isLeader, err: errorText(err) },
      `leader election: ${what} failed`,
    );
  }

  /** A write that made us holder succeeded: lead, and step down if no renewal follows in time. */
  #renewed(sentAt: number): void {
    this.#lastRenewalSentAt = sentAt;
    this.#clock.clearTimeout(this.#deadline);
    const left = this.#renewDeadlineLeftMs();
    if (left <= 0) {
      this.#stepDown("the renew deadline passed");
      return;
    }
    this.#deadline = this.#clock.setTimeout(() => this.#stepDown("the renew deadline passed"), left);
    if (this.#leading) return;
    const leading = new AbortController();
    this.#leading = leading;
    this.#opts.log?.info({ lease: this.#opts.name, identity: this.#opts.identity }, "started leading");
    this.#work = Promise.resolve()
      .then(() => this.#opts.onStartedLeading(leading.signal))
      .catch((err) => this.#opts.log?.warn({ err: errorText(err) }, "leading work failed"))
      .then(() => {
        // The work ended (or failed to start) while this replica still leads: holding the lease without doing
        // the work would keep every standby out, so stop campaigning and release it.
        if (this.#leading === leading) void this.stop();
      });
  }

  /** Time left before the renew deadline of the last successful renewal (negative once it has passed). */
  #renewDeadlineLeftMs(): number {
    return this.#lastRenewalSentAt + this.#timings.renewDeadlineMs - this.#clock.now();
  }

  #stepDown(reason: string, drainMs = 0): void {
    const leading = this.#leading;
    if (!leading) return;
    this.#leading = undefined;
    this.#clock.clearTimeout(this.#deadline);
    leading.abort(new LeadershipLostError(reason, drainMs));
    this.#opts.log?.warn(
      { lease: this.#opts.name, identity: this.#opts.identity, reason },
      "stopped leading",
    );
    this.#opts.onStoppedLeading?.(reason);
  }

  /**
   * Bounds a request so that a hung connection cannot stall the loop past the renew deadline; the request is
   * aborted then too, so its connection is closed rather than left open until the client's own timeout.
   */
  #request<T>(send: (options: ConfigurationOptions) => Promise<T>): Promise<T> {
    const ms = this.#requestTimeoutMs;
    return withinDeadline(ms, `no answer within ${ms} ms`, send, this.#clock);
  }
}
