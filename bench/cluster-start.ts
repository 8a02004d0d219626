/**
 * How long the local control plane takes to start from cached binaries (to nodes Ready and the metrics API
 * Available), and how much memory its processes use once settled. Run inside the network namespace:
 *
 *   test/cluster/netns-run.sh npx node bench/cluster-start.ts [runs=5] [settle-seconds=20]
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureBinaries } from "../test/cluster/binaries.ts";
import { startControlPlane } from "../test/cluster/control-plane.ts";
import { percentile, table } from "./format.ts";

const runs = Number(process.argv[2] ?? 5);
const settleSeconds = Number(process.argv[3] ?? 20);

async function rssKiB(pid: number): Promise<number> {
  const status = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
  return Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0);
}

const binDir = await ensureBinaries();
const startMs: number[] = [];
let memory: [string, number][] = [];
for (let i = 0; i < runs; i++) {
  const stateDir = await mkdtemp(join(tmpdir(), "napwake-bench-"));
  const began = performance.now();
  const cluster = await startControlPlane({ binDir, stateDir, log: () => {} });
  startMs.push(performance.now() - began);
  if (i === runs - 1) {
    await new Promise((r) => setTimeout(r, settleSeconds * 1000));
    const procs = [...cluster.processes, cluster.prometheus.process()];
    memory = await Promise.all(
      procs.map(async (p): Promise<[string, number]> => [p.name, await rssKiB(p.pid)]),
    );
  }
  await cluster.stop();
  await rm(stateDir, { recursive: true, force: true });
}

process.stdout.write(`control plane start (${runs} runs, cached binaries, fresh etcd each run)\n`);
process.stdout.write(
  table(
    ["p50 ms", "p90 ms", "min ms", "max ms"],
    [
      [percentile(startMs, 50), percentile(startMs, 90), Math.min(...startMs), Math.max(...startMs)].map(
        (v) => v.toFixed(0),
      ),
    ],
  ),
);
const total = memory.reduce((sum, [, kib]) => sum + kib, 0);
process.stdout.write(`\nresident memory after ${settleSeconds} s idle with 3 kwok nodes\n`);
process.stdout.write(
  table(
    ["process", "RSS MiB"],
    [...memory.map(([name, kib]) => [name, (kib / 1024).toFixed(0)]), ["total", (total / 1024).toFixed(0)]],
  ),
);
