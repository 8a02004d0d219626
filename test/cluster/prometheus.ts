import { execFile } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { prometheusCommand } from "./components.ts";
import { ports } from "./layout.ts";
import { type RunningProcess, startProcess, waitFor } from "./process.ts";
import { prometheusConfigYaml } from "./prometheus-config.ts";

const run = promisify(execFile);

export const prometheusUrl = `http://127.0.0.1:${ports.prometheus}`;

export interface PrometheusHandle {
  url: string;
  process(): RunningProcess;
  /** Loads OpenMetrics history as TSDB blocks, then restarts Prometheus so it serves them. */
  loadHistory(openMetrics: string): Promise<void>;
  query(promql: string, time?: Date): Promise<PromVectorSample[]>;
  stop(): Promise<void>;
}

export interface PromVectorSample {
  metric: Record<string, string>;
  value: number;
}

export async function startPrometheus(opts: { dataDir: string; configDir: string; logDir: string }) {
  await mkdir(opts.dataDir, { recursive: true });
  const configFile = join(opts.configDir, "prometheus.yml");
  await writeFile(configFile, prometheusConfigYaml());
  const cmd = prometheusCommand(configFile, opts.dataDir);
  const launch = async () => {
    const proc = startProcess({ ...cmd, logDir: opts.logDir });
    await waitFor(() => ready(), { what: "prometheus /-/ready", timeoutMs: 60_000, process: proc });
    return proc;
  };
  let current = await launch();
  const handle: PrometheusHandle = {
    url: prometheusUrl,
    process: () => current,
    async loadHistory(openMetrics) {
      const input = join(opts.configDir, `history-${Date.now()}.om`);
      await writeFile(input, openMetrics);
      await withPrometheusStopped(
        {
          stop: () => current.stop(),
          start: async () => {
            current = await launch();
          },
        },
        () =>
          run("promtool", ["tsdb", "create-blocks-from", "openmetrics", input, opts.dataDir], {
            maxBuffer: 64 * 1024 * 1024,
          }),
      );
    },
    query: (promql, time) => instantQuery(promql, time),
    stop: () => current.stop(),
  };
  return handle;
}

/**
 * Runs `work` on the data directory while Prometheus is stopped, then starts it again (it reads new blocks
 * when it starts). promtool reads every block already there: a running Prometheus may be compacting, and a
 * block it is deleting (a directory left without its meta.json) makes promtool fail.
 */
export async function withPrometheusStopped(
  prometheus: { stop(): Promise<void>; start(): Promise<void> },
  work: () => Promise<unknown>,
): Promise<void> {
  await prometheus.stop();
  try {
    await work();
  } finally {
    await prometheus.start();
  }
}

async function ready(): Promise<true | undefined> {
  const res = await fetch(`${prometheusUrl}/-/ready`);
  return res.ok ? true : undefined;
}

export async function instantQuery(promql: string, time?: Date): Promise<PromVectorSample[]> {
  const params = new URLSearchParams({ query: promql });
  if (time) params.set("time", String(time.getTime() / 1000));
  const res = await fetch(`${prometheusUrl}/api/v1/query?${params}`);
  const body = (await res.json()) as {
    status: string;
    error?: string;
    data?: { resultType: string; result: { metric: Record<string, string>; value: [number, string] }[] };
  };
  if (body.status !== "success" || !body.data) throw new Error(`query ${promql} failed: ${body.error}`);
  if (body.data.resultType !== "vector") throw new Error(`query ${promql} gave ${body.data.resultType}`);
  return body.data.result.map((r) => ({ metric: r.metric, value: Number(r.value[1]) }));
}
