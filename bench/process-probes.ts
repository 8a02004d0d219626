// What a benchmark reads about a running cluster: a process's memory and CPU from /proc, and API request
// counters from a Kubernetes API server's /metrics (kube-apiserver and aggregated servers alike).
import { execFileSync } from "node:child_process";
import { readFile } from "node:fs/promises";
import { type ClientTls, httpsGet } from "../test/cluster/probe.ts";

const clockTicks = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }).trim()) || 100;

export async function rssKiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
}

/** User plus system CPU seconds the process has used so far. */
export async function cpuSeconds(pid: number): Promise<number> {
  const stat = await readFile(`/proc/${pid}/stat`, "utf8");
  // Fields after the command name, which is in parentheses and may contain spaces.
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // utime and stime are fields 14 and 15 of the whole line: 12 and 13 after "pid (comm)".
  return (Number(fields[11]) + Number(fields[12])) / clockTicks;
}

export type Counters = Map<string, number>;

/** Labels of one Prometheus text-format sample line, e.g. `name{a="1",b="2"} 3`. */
function parseSample(line: string): { name: string; labels: Record<string, string>; value: number } | null {
  const match = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})?\s+(\S+)/.exec(line);
  if (!match) return null;
  const labels: Record<string, string> = {};
  for (const [, key, value] of (match[2] ?? "").matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
    if (key !== undefined) labels[key] = value ?? "";
  }
  return { name: match[1] ?? "", labels, value: Number(match[3]) };
}

/**
 * Sums the samples of the named metrics into buckets chosen by `bucketOf` (null drops a sample). The API
 * server does not label requests by client, so callers compare two windows rather than filter.
 */
export async function scrapeCounters(
  url: string,
  tls: ClientTls,
  bucketOf: (name: string, labels: Record<string, string>) => string | null,
): Promise<Counters> {
  const res = await httpsGet(url, tls, { timeoutMs: 30_000 });
  if (res.status !== 200) throw new Error(`${url} answered ${res.status}: ${res.body.slice(0, 200)}`);
  const counters: Counters = new Map();
  for (const line of res.body.split("\n")) {
    if (line.startsWith("#")) continue;
    const sample = parseSample(line);
    if (!sample) continue;
    const bucket = bucketOf(sample.name, sample.labels);
    if (bucket !== null) counters.set(bucket, (counters.get(bucket) ?? 0) + sample.value);
  }
  return counters;
}

export function mergeCounters(...all: Counters[]): Counters {
  const merged: Counters = new Map();
  for (const counters of all) for (const [k, v] of counters) merged.set(k, (merged.get(k) ?? 0) + v);
  return merged;
}

/** Per-second rate of each counter between two scrapes `seconds` apart. */
export function rates(before: Counters, after: Counters, seconds: number): Counters {
  const out: Counters = new Map();
  for (const [k, v] of after) out.set(k, (v - (before.get(k) ?? 0)) / seconds);
  return out;
}
