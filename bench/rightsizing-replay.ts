// Replay benchmark for the rightsizing recommender: `npx node bench/rightsizing-replay.ts [days]`.
// Each synthetic trace is replayed minute by minute; every method's recommendation is re-applied at the
// start of each day. A container whose demand exceeds its memory limit is OOM-killed (again every 10
// minutes while the demand stays above), and its observed memory is capped at the limit, which is all
// any recommender gets to see. Requested resources are counted only while the workload has pods.

import { krrRecommend } from "../rightsizing/baselines/krr.ts";
import type { VpaState } from "../rightsizing/baselines/vpa.ts";
import { vpaEmptyState, vpaFold, vpaRecommend } from "../rightsizing/baselines/vpa.ts";
import { isEmpty } from "../rightsizing/histogram.ts";
import type { OomEvent, RestartEvent, UsageSample } from "../rightsizing/index.ts";
import {
  defaultConfig,
  emptyState,
  foldHistory,
  parseCheckpoint,
  recommend,
  serializeCheckpoint,
} from "../rightsizing/index.ts";
import type { Trace } from "./rightsizing-traces.ts";
import { allTraces, DAY_MS, GIB, MINUTE_MS } from "./rightsizing-traces.ts";

const KILL_REPEAT_MINUTES = 10;

type Applied = { readonly cpu: number; readonly memoryRequest: number; readonly memoryLimit: number };
type ObservedDay = { samples: UsageSample[]; ooms: OomEvent[]; restarts: RestartEvent[]; endMs: number };
type Method = {
  readonly name: string;
  observe(day: ObservedDay, applied: Applied): void;
  /** The resources to apply from now on; null keeps what is applied. */
  decide(nowMs: number): Applied | null;
};
type Totals = {
  cpuCoreHours: number;
  memoryGiBHours: number;
  cpuMinutesAbove: number;
  memoryMinutesAbove: number;
  oomKills: number;
};

const zeroTotals = (): Totals => ({
  cpuCoreHours: 0,
  memoryGiBHours: 0,
  cpuMinutesAbove: 0,
  memoryMinutesAbove: 0,
  oomKills: 0,
});

function currentMethod(): Method {
  return { name: "current", observe: () => {}, decide: () => null };
}

function vpaMethod(trace: Trace): Method {
  let state: VpaState = vpaEmptyState();
  const limitRatio = trace.current.memoryLimitBytes / trace.current.memoryRequestBytes;
  return {
    name: "vpa",
    observe(day, applied) {
      state = vpaFold(state, day.samples, day.ooms, {
        cpuCores: applied.cpu,
        memoryBytes: applied.memoryRequest,
      });
    },
    decide() {
      if (isEmpty(state.cpu)) return null; // VPA has no recommendation before its first sample
      const rec = vpaRecommend(state);
      // VPA keeps the limit:request ratio of the pod spec (controlledValues: RequestsAndLimits).
      return { cpu: rec.cpuCores, memoryRequest: rec.memoryBytes, memoryLimit: rec.memoryBytes * limitRatio };
    },
  };
}

function krrMethod(): Method {
  const seen: UsageSample[] = [];
  return {
    name: "krr-simple",
    observe(day) {
      seen.push(...day.samples);
    },
    decide(nowMs) {
      const rec = krrRecommend(seen, nowMs);
      return rec && { cpu: rec.cpuCores, memoryRequest: rec.memoryBytes, memoryLimit: rec.memoryBytes };
    },
  };
}

/** Napwake's recommender, resuming from its serialised checkpoint every day as a restarted operator would. */
function napwakeMethod(checkpointSizes: number[]): Method {
  let checkpoint = serializeCheckpoint(emptyState(defaultConfig), defaultConfig);
  const load = () => {
    const restored = parseCheckpoint(checkpoint, defaultConfig);
    if (!restored.ok) throw new Error(`checkpoint did not round-trip: ${restored.error}`);
    return restored.value;
  };
  return {
    name: "napwake",
    observe(day) {
      const state = foldHistory(load(), { stepMs: MINUTE_MS, ...day }, defaultConfig);
      checkpoint = serializeCheckpoint(state, defaultConfig);
      checkpointSizes.push(Buffer.byteLength(checkpoint));
    },
    decide() {
      const rec = recommend(load(), defaultConfig);
      if (rec.status !== "ok") return null;
      return {
        cpu: rec.cpuRequestCores.target,
        memoryRequest: rec.memoryRequestBytes.target,
        memoryLimit: rec.memoryLimitBytes.target,
      };
    },
  };
}

function replay(trace: Trace, method: Method): Totals {
  const totals = zeroTotals();
  const start = trace.current;
  let applied: Applied = {
    cpu: start.cpuRequestCores,
    memoryRequest: start.memoryRequestBytes,
    memoryLimit: start.memoryLimitBytes,
  };
  let lastKillMinute = Number.NEGATIVE_INFINITY;
  let day: ObservedDay = { samples: [], ooms: [], restarts: [], endMs: 0 };
  trace.samples.forEach((sample, minute) => {
    if (minute > 0 && minute % 1440 === 0) {
      method.observe(day, applied);
      applied = method.decide(sample.t) ?? applied;
      day = { samples: [], ooms: [], restarts: [], endMs: 0 };
    }
    if (!sample.present) {
      day.samples.push(sample);
      return;
    }
    totals.cpuCoreHours += applied.cpu / 60;
    totals.memoryGiBHours += applied.memoryRequest / GIB / 60;
    if (sample.cpuCores > applied.cpu) totals.cpuMinutesAbove += 1;
    if (sample.memoryBytes > applied.memoryRequest) totals.memoryMinutesAbove += 1;
    const overLimit = sample.memoryBytes > applied.memoryLimit;
    if (overLimit && minute - lastKillMinute >= KILL_REPEAT_MINUTES) {
      totals.oomKills += 1;
      lastKillMinute = minute;
      day.ooms.push({ t: sample.t, memoryBytes: applied.memoryLimit, limitBytes: applied.memoryLimit });
      day.restarts.push({ t: sample.t });
    }
    day.samples.push(overLimit ? { ...sample, memoryBytes: applied.memoryLimit } : sample);
  });
  return totals;
}

function addInto(sum: Totals, t: Totals): void {
  sum.cpuCoreHours += t.cpuCoreHours;
  sum.memoryGiBHours += t.memoryGiBHours;
  sum.cpuMinutesAbove += t.cpuMinutesAbove;
  sum.memoryMinutesAbove += t.memoryMinutesAbove;
  sum.oomKills += t.oomKills;
}

const HEADER = ["trace", "method", "CPU core-h", "mem GiB-h", "CPU min>req", "mem min>req", "OOM kills"];

function row(trace: string, method: string, t: Totals): string[] {
  return [
    trace,
    method,
    t.cpuCoreHours.toFixed(1),
    t.memoryGiBHours.toFixed(1),
    String(t.cpuMinutesAbove),
    String(t.memoryMinutesAbove),
    String(t.oomKills),
  ];
}

function table(rows: string[][]): string {
  const widths = HEADER.map((_, i) => Math.max(...[HEADER, ...rows].map((r) => (r[i] ?? "").length)));
  const line = (r: string[]) =>
    r.map((cell, i) => (i < 2 ? cell.padEnd(widths[i] ?? 0) : cell.padStart(widths[i] ?? 0))).join("  ");
  return [line(HEADER), ...rows.map(line)].join("\n");
}

function main(): void {
  const days = Number(process.argv[2] ?? 28);
  const checkpointSizes: number[] = [];
  const methodNames = ["current", "vpa", "krr-simple", "napwake"];
  const sums = new Map(methodNames.map((name) => [name, zeroTotals()]));
  const rows: string[][] = [];
  for (const trace of allTraces(days)) {
    const methods = [currentMethod(), vpaMethod(trace), krrMethod(), napwakeMethod(checkpointSizes)];
    for (const method of methods) {
      const totals = replay(trace, method);
      rows.push(row(trace.name, method.name, totals));
      const sum = sums.get(method.name);
      if (sum) addInto(sum, totals);
    }
  }
  for (const [name, sum] of sums) rows.push(row("TOTAL", name, sum));
  const out = process.stdout;
  out.write(
    `Rightsizing replay: ${days} days, 1-minute samples, recommendations re-applied daily (${DAY_MS / 3_600_000} h)\n\n`,
  );
  out.write(`${table(rows)}\n\n`);
  const current = sums.get("current");
  for (const [name, sum] of sums) {
    if (!current || name === "current") continue;
    const cpu = (1 - sum.cpuCoreHours / current.cpuCoreHours) * 100;
    const mem = (1 - sum.memoryGiBHours / current.memoryGiBHours) * 100;
    out.write(
      `${name.padEnd(10)} saves ${cpu.toFixed(1)}% CPU and ${mem.toFixed(1)}% memory vs current requests\n`,
    );
  }
  const vpa = sums.get("vpa");
  const ours = sums.get("napwake");
  if (vpa && ours) {
    // The product requirement: no more memory-limit breaches than the VPA-style baseline, at least its savings.
    const holds =
      ours.oomKills <= vpa.oomKills &&
      ours.cpuCoreHours <= vpa.cpuCoreHours &&
      ours.memoryGiBHours <= vpa.memoryGiBHours;
    const versus = (label: string, key: keyof Totals) => `${label} ${ours[key]} vs ${vpa[key]}`;
    const compared = [
      versus("OOM kills", "oomKills"),
      versus("CPU min>req", "cpuMinutesAbove"),
      versus("mem min>req", "memoryMinutesAbove"),
    ];
    out.write(
      `\nnapwake vs vpa: ${compared.join(", ")}; no more kills and at least its savings: ${holds ? "yes" : "NO"}\n`,
    );
  }
  const maxSize = Math.max(...checkpointSizes);
  const meanSize = checkpointSizes.reduce((s, x) => s + x, 0) / checkpointSizes.length;
  out.write(
    `\nnapwake checkpoint size per container: mean ${meanSize.toFixed(0)} B, max ${maxSize} B (JSON)\n`,
  );
}

main();
