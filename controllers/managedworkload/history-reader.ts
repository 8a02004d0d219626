/**
 * Reads a workload's activity history from Prometheus for its new forecast engine (see history.ts), a few
 * workloads at a time: an operator installed into a cluster with thousands of opted-in workloads asks for
 * their histories one after another, not all at once.
 */
import type { ManagedWorkload } from "../../api/managedworkload.ts";
import { type GridPoint, slotStartMs } from "../../forecast/index.ts";
import type { PrometheusClient, RangeSeries } from "../../rightsizing/prometheus-client.ts";
import { alignDown, alignUp, type PromQLConfig } from "../../rightsizing/promql.ts";
import { cpuThresholdCores } from "./activity-rules.ts";
import { HISTORY_STEP_MS, historyPoints, historyQueries } from "./history.ts";

export interface ActivityHistoryReader {
  /** The workload's activity per slot from `fromSlot` up to `toSlot` (excluded); throws with the reason. */
  read(mw: ManagedWorkload, fromSlot: number, toSlot: number): Promise<GridPoint[]>;
}

export function activityHistoryReader(deps: {
  prometheus: PrometheusClient;
  promql: PromQLConfig;
}): ActivityHistoryReader {
  const range = async (query: string, fromSlot: number, toSlot: number): Promise<RangeSeries[]> => {
    const result = await deps.prometheus.queryRange(query, {
      start: alignUp(slotStartMs(fromSlot), HISTORY_STEP_MS),
      end: alignDown(slotStartMs(toSlot) - 1, HISTORY_STEP_MS),
      stepMs: HISTORY_STEP_MS,
    });
    if (!result.ok) throw new Error(`${result.error.message} (query: ${result.error.query})`);
    return [...result.value];
  };
  return {
    async read(mw, fromSlot, toSlot) {
      const queries = historyQueries(mw, deps.promql);
      const cpu = await range(queries.cpu, fromSlot, toSlot);
      const activity = [];
      for (const query of queries.activity) {
        activity.push({ query, series: await range(query.query, fromSlot, toSlot) });
      }
      return historyPoints({ cpu, activity }, cpuThresholdCores(mw), fromSlot, toSlot);
    },
  };
}

export type HistoryResult =
  | { key: string; mw: ManagedWorkload; points: GridPoint[] }
  | { key: string; mw: ManagedWorkload; error: string };

/**
 * Runs reads at most `concurrency` at a time, one per key (a key asked for again while queued or reading is
 * not read twice), and hands each result to `done`. Stopped, it starts no more reads and drops results.
 */
export class HistoryLoader {
  readonly #queue = new Map<string, { mw: ManagedWorkload; fromSlot: number; toSlot: number }>();
  readonly #reading = new Set<string>();
  #stopped = false;

  readonly #reader: ActivityHistoryReader;
  readonly #concurrency: number;
  readonly #done: (result: HistoryResult) => void;

  constructor(reader: ActivityHistoryReader, concurrency: number, done: (result: HistoryResult) => void) {
    this.#reader = reader;
    this.#concurrency = concurrency;
    this.#done = done;
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
      this.#reading.add(key);
      void this.#reader
        .read(job.mw, job.fromSlot, job.toSlot)
        .then(
          (points) => ({ key, mw: job.mw, points }),
          (error: unknown) => ({
            key,
            mw: job.mw,
            error: error instanceof Error ? error.message : String(error),
          }),
        )
        .then((result) => {
          this.#reading.delete(key);
          if (!this.#stopped) this.#done(result);
          this.#next();
        });
    }
  }
}
