import { spawn } from "node:child_process";
import { readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { eventually } from "./cluster.ts";

const netnsRun = join(import.meta.dirname, "../cluster/netns-run.sh");

/** PIDs (as this namespace sees them) of processes whose command line contains `marker`. */
async function processesWith(marker: string): Promise<number[]> {
  const pids: number[] = [];
  for (const entry of await readdir("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const cmdline = await readFile(`/proc/${entry}/cmdline`, "utf8").catch(() => "");
    if (cmdline.split("\0").includes(marker)) pids.push(Number(entry));
  }
  return pids;
}

describe("netns-run.sh", () => {
  it.each(["SIGKILL", "SIGTERM"] as const)(
    "leaves no process behind when the run is stopped with %s",
    async (signal) => {
      const marker = `31415.${signal === "SIGKILL" ? 9 : 15}`;
      // Two grandchildren that would outlive a plain parent.
      const run = spawn(netnsRun, ["bash", "-c", `sleep ${marker} & sleep ${marker} & wait`], {
        stdio: "ignore",
      });
      const exited = new Promise((resolve) => run.once("exit", resolve));
      await eventually("the sleeps to start", async () =>
        (await processesWith(marker)).length === 2 ? true : undefined,
      );
      run.kill(signal);
      await exited;
      await eventually("every process of the run to be gone", async () =>
        (await processesWith(marker)).length === 0 ? true : undefined,
      );
      expect(await processesWith(marker)).toEqual([]);
    },
  );

  it("gives the command loopback and the locally routed test range", async () => {
    const out = await new Promise<string>((resolve) => {
      const run = spawn(netnsRun, ["ip", "route", "show", "table", "local"], {
        stdio: ["ignore", "pipe", "ignore"],
      });
      let text = "";
      run.stdout.on("data", (c) => {
        text += c;
      });
      run.once("exit", () => resolve(text));
    });
    expect(out).toContain("local 198.18.0.0/15 dev lo");
  });
});
