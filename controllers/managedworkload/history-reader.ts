/**
 * Reads a workload's activity history from Prometheus for its new forecast engine (see history.ts), a few
 * workloads at a time: an operator installed into a cluster with thousands of opted-in workloads asks for
 * their histories one after another, not all at once.
 */
import { type ManagedWorkload, prewakeLeadMs } from "../../api/managedworkload.ts";
import { type GridPoint, slotStartMs } from "../../forecast/index.ts";
import type { PrometheusClient, PrometheusError, RangeSeries } from "../../rightsizing/prometheus-client.ts";
import type { PromQLConfig } from "../../rightsizing/promql.ts";
import { cpuThresholdCores } from "./activity-rules.ts";
import { HISTORY_STEP_MS, historyPoints, historyQueries } from "./history.ts";

export interface ActivityHistoryReader {
  /**
   * The workload's activity per slot from `fromSlot` up to `toSlot` (excluded); throws with the reason (a
   * `HistoryReadError` says whether asking again later may succeed).
   */
  read(mw: ManagedWorkload, fromSlot: number, toSlot: number): Promise<GridPoint[]>;
}

/** A read that failed; `retryable` when Prometheus could not be reached or was overloaded, not when refused. */
export class HistoryReadError extends Error {
  readonly retryable: boolean;

  constructor(message: string, retryable: boolean) {
    super(message);
    this.name = "HistoryReadError";
    this.retryable = retryable;
  }
}

/**
 * Whether a failed query may succeed if asked again later: no answer, a 5xx or 429 one, or a partial one (a
 * partial history reads the slots it left out as idle, and an engine that learned them would pause where
 * traffic comes).
 */
export function isRetryable(error: Pick<PrometheusError, "kind" | "status">): boolean {
  if (error.kind === "timeout" || error.kind === "network" || error.kind === "partial") return true;
  return error.kind === "http" && (error.status === undefined || error.status >= 500 || error.status === 429);
}

/**
 * Evaluation times of a range over the slots `fromSlot` to `toSlot` (excluded), in steps within them. A CPU
 * rate covers the step before its time, so it is asked for at the ends of the steps (the last at the start
 * of `toSlot`, which is not after now); an activity query is an instant reading, asked for at their starts.
 */
export function historyRange(
  fromSlot: number,
  toSlot: number,
  at: "step-ends" | "step-starts",
): { start: number; end: number; stepMs: number } {
  const shift = at === "step-ends" ? HISTORY_STEP_MS : 0;
  return {
    start: slotStartMs(fromSlot) + shift,
    end: slotStartMs(toSlot) - HISTORY_STEP_MS + shift,
    stepMs: HISTORY_STEP_MS,
  };
}

export function activityHistoryReader(deps: {
  prometheus: PrometheusClient;
  promql: PromQLConfig;
}): ActivityHistoryReader {
  const range = async (
    query: string,
    window: { start: number; end: number; stepMs: number },
  ): Promise<RangeSeries[]> => {
    const result = await deps.prometheus.queryRange(query, window);
    if (!result.ok) {
      const { error } = result;
      throw new HistoryReadError(`${error.message} (query: ${error.query})`, isRetryable(error));
    }
    return [...result.value];
  };
  return {
    async read(mw, fromSlot, toSlot) {
      const queries = historyQueries(mw, deps.promql);
      const cpu = await range(queries.cpu, historyRange(fromSlot, toSlot, "step-ends"));
      const replicas = await range(queries.replicas, historyRange(fromSlot, toSlot, "step-starts"));
      const activity = [];
      for (const query of queries.activity) {
        activity.push({
          query,
          series: await range(query.query, historyRange(fromSlot, toSlot, "step-starts")),
        });
      }
      const reading = {
        cpuThresholdCores: cpuThresholdCores(mw),
        startupMs: prewakeLeadMs(mw.spec),
      };
      return historyPoints({ cpu, replicas, activity }, reading, fromSlot, toSlot);
    },
  };
}

export type HistoryResult =
  | { key: string; mw: ManagedWorkload; points: GridPoint[] }
  | { key: string; mw: ManagedWorkload; error: string; retryable: boolean };

type Job = { mw: ManagedWorkload; fromSlot: number; toSlot: number };

/**
 * Runs reads at most `concurrency` at a time, one per key (a key asked for again while queued or reading is
 * not read twice), and hands each result to `done`. A queued key that `wanted` no longer wants when its turn
 * comes (the workload deleted, its forecast turned off) is not read. Stopped, it starts no more reads and
 * drops results.
 */
export class HistoryLoader {
  readonly #queue = new Map<string, Job>();
  readonly #reading = new Set<string>();
  #stopped = false;

  readonly #reader: ActivityHistoryReader;
  readonly #concurrency: number;
  readonly #done: (result: HistoryResult) => void;
  readonly #wanted: (key: string) => boolean;
  readonly #failed: (key: string, err: unknown) => void;

  constructor(
    reader: ActivityHistoryReader,
    concurrency: number,
    done: (result: HistoryResult) => void,
    options: {
      wanted?: (key: string) => boolean;
      /** `done` threw: told here, and the loader goes on with the next key. */
      failed?: (key: string, err: unknown) => void;
    } = {},
  ) {
    this.#reader = reader;
    this.#concurrency = concurrency;
    this.#done = done;
    this.#wanted = options.wanted ?? (() => true);
    this.#failed = options.failed ?? (() => {});
  }

  request(key: string, mw: ManagedWorkload, fromSlot: number, toSlot: number): void {
    if (this.#stopped || this.#reading.has(key)) return;
    this.#queue.set(key, { mw, fromSlot, toSlot });
    this.#next();
  }

  stop(): void {
    this.#stopped = true;
    this.#queue.clear();
  }

  #next(): void {
    while (!this.#stopped && this.#reading.size < this.#concurrency) {
      const [key, job] = this.#queue.entries().next().value ?? [];
      if (key === undefined || job === undefined) return;
      this.#queue.delete(key);
      if (this.#wanted(key)) this.#start(key, job);
    }
  }

  /** Says a result could not be handed over; one that cannot even be said is dropped, not left unhandled. */
  #tellFailed(key: string, err: unknown): void {
    try {
      this.#failed(key, err);
    } catch {
      // Nobody left to tell.
    }
  }

  /** A reader that throws rather than rejects fails this read, not the reconcile that asked for it. */
  #read(job: Job): Promise<GridPoint[]> {
    try {
      return this.#reader.read(job.mw, job.fromSlot, job.toSlot);
    } catch (error) {
      return Promise.reject(error);
    }
  }

  #start(key: string, job: Job): void {
    this.#reading.add(key);
    void this.#read(job)
      .then(
        (points): HistoryResult => ({ key, mw: job.mw, points }),
        (error: unknown): HistoryResult => ({
          key,
          mw: job.mw,
          error: error instanceof Error ? error.message : String(error),
          retryable: error instanceof HistoryReadError && error.retryable,
        }),
      )
      .then((result) => {
        this.#reading.delete(key);
        try {
          if (!this.#stopped) this.#done(result);
        } catch (err) {
          this.#tellFailed(key, err);
        } finally {
          // The next read starts whatever befell this one's handlers.
          this.#next();
        }
      });
  }
}
