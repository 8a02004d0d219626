import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { afterAll, describe, expect, it } from "vitest";
import { repoRoot } from "../cluster/paths.ts";
import { eventually, freePort } from "./cluster.ts";

/**
 * The sandbox's lifecycle as the README's first command drives it: `up`, `status` and `down`, on a state
 * directory and ports of the test's own. The sandbox runs its own cluster in a network namespace of its own.
 */
const sandboxScript = join(repoRoot, "test/cluster/sandbox.ts");

type Run = { code: number; stdout: string; stderr: string };

function sandbox(
  stateDir: string,
  command: string | string[],
  ports: { api: number; demo: number },
): Promise<Run> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [
        sandboxScript,
        ...[command].flat(),
        `--state=${stateDir}`,
        `--api-port=${ports.api}`,
        `--demo-port=${ports.demo}`,
      ],
      { cwd: repoRoot, timeout: 300_000 },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** Processes whose command line names `stateDir`: the sandbox's own and its cluster's. */
async function processesOf(stateDir: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "");
    if (cmdline.includes(stateDir)) pids.push(Number(entry));
  }
  return pids;
}

describe("the sandbox", () => {
  const started: { stateDir: string; ports: { api: number; demo: number } }[] = [];
  const fresh = async () => {
    const one = {
      stateDir: await mkdtemp(join(tmpdir(), "napwake-sandbox-test-")),
      ports: { api: await freePort(), demo: await freePort() },
    };
    started.push(one);
    return one;
  };

  afterAll(async () => {
    for (const { stateDir, ports } of started) {
      await sandbox(stateDir, "down", ports);
      await rm(stateDir, { recursive: true, force: true });
    }
  });

  it("answers --help with its usage, and an unknown command with the fix and no stack trace", async () => {
    const { stateDir, ports } = await fresh();
    const help = await sandbox(stateDir, "--help", ports);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^usage: \.\/scripts\/sandbox\.sh \[up\|down\|status\]/);
    const bogus = await sandbox(stateDir, "bogus", ports);
    expect(bogus.code).toBe(2);
    expect(bogus.stderr).toMatch(/^napwake sandbox: unknown command "bogus": use up, down or status/);
    expect(bogus.stderr).not.toMatch(/\n\s+at /);
  });

  it("refuses two commands, and a state directory holding files no sandbox wrote, which it leaves as they are", async () => {
    const { stateDir, ports } = await fresh();
    const two = await sandbox(stateDir, ["up", "down"], ports);
    expect(two.code).not.toBe(0);
    expect(two.stderr).toMatch(/one command at a time, got up and down/);
    await writeFile(join(stateDir, "notes.txt"), "mine");
    const foreign = await sandbox(stateDir, "up", ports);
    expect(foreign.code).not.toBe(0);
    expect(foreign.stderr).toMatch(
      /holds files no sandbox wrote \(notes\.txt\): name an empty or new directory/,
    );
    expect(await readFile(join(stateDir, "notes.txt"), "utf8")).toBe("mine");
    const file = await sandbox(join(stateDir, "notes.txt"), "up", ports);
    expect(file.stderr).toMatch(
      /notes\.txt cannot be the sandbox's directory \(ENOTDIR\): name a new directory/,
    );
    expect(await readFile(join(stateDir, "notes.txt"), "utf8")).toBe("mine");
  });

  it("starts, says how to reach it, serves its cluster, and stops with nothing left behind", async () => {
    const { stateDir, ports } = await fresh();
    expect(await sandbox(stateDir, "status", ports)).toMatchObject({
      code: 3,
      stdout: expect.stringContaining("not running"),
    });
    const up = await sandbox(stateDir, "up", ports);
    expect(up.code, up.stderr).toBe(0);
    expect(up.stdout).toContain("Napwake sandbox is running");
    expect(up.stdout).toContain(`source ${join(stateDir, "env.sh")}`);
    // Ready: nothing says "starting" any more, even once that pid is another process's.
    expect(existsSync(join(stateDir, "starting.pid"))).toBe(false);
    expect((await sandbox(stateDir, "status", ports)).stdout).toContain("Napwake sandbox is running");

    const kc = new KubeConfig();
    kc.loadFromFile(join(stateDir, "kubeconfig"));
    const nodes = await kc.makeApiClient(CoreV1Api).listNode();
    expect(nodes.items.length).toBeGreaterThan(0);

    const down = await sandbox(stateDir, "down", ports);
    expect(down.stdout).toContain("napwake sandbox: stopped");
    await eventually("every process of the sandbox to be gone", async () =>
      (await processesOf(stateDir)).length === 0 ? true : undefined,
    );
    expect(existsSync(join(stateDir, "kubeconfig"))).toBe(false);
    expect(existsSync(join(stateDir, "env.sh"))).toBe(false);
    expect((await sandbox(stateDir, "status", ports)).stdout).toContain("not running");
  });

  it("says it is starting while it starts, and down stops it then; up reports the stop at once", async () => {
    const { stateDir, ports } = await fresh();
    const up = sandbox(stateDir, "up", ports);
    await eventually("the sandbox to be starting", async () =>
      existsSync(join(stateDir, "starting.pid")) ? true : undefined,
    );
    const status = await sandbox(stateDir, "status", ports);
    // It may already be up on a fast machine; what it must never say is "not running".
    expect(status.stdout).toMatch(/napwake sandbox: starting \(pid \d+|Napwake sandbox is running/);
    expect((await sandbox(stateDir, "down", ports)).stdout).toContain("napwake sandbox: stopped");
    const ended = await up;
    if (ended.code !== 0) expect(ended.stderr).toContain("the sandbox exited");
    await eventually("every process of the sandbox to be gone", async () =>
      (await processesOf(stateDir)).length === 0 ? true : undefined,
    );
    expect((await sandbox(stateDir, "status", ports)).stdout).toContain("not running");
  });
});
