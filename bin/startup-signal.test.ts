import { spawn } from "node:child_process";
import { mkdtemp, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

const entry = join(import.meta.dirname, "napwake.ts");

/** A kubeconfig for an API server nobody answers at: the caches retry their lists for ever. */
async function unreachableKubeconfig(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "napwake-startup-"));
  const path = join(dir, "kubeconfig");
  await writeFile(
    path,
    [
      "apiVersion: v1",
      "kind: Config",
      "clusters: [{ name: c, cluster: { server: 'https://127.0.0.1:1', insecure-skip-tls-verify: true } }]",
      "users: [{ name: u, user: { token: t } }]",
      "contexts: [{ name: x, context: { cluster: c, user: u } }]",
      "current-context: x",
    ].join("\n"),
  );
  return path;
}

describe("the operator process while it is still starting", () => {
  it("stops on SIGTERM at once, by its own handler (as PID 1 a signal without one is dropped)", async () => {
    const kubeconfig = await unreachableKubeconfig();
    const child = spawn(
      process.execPath,
      [
        entry,
        "operator",
        `--kubeconfig=${kubeconfig}`,
        "--webhook-port=0",
        "--metrics-port=0",
        "--health-port=0",
        "--no-rightsizing",
      ],
      { stdio: ["ignore", "pipe", "pipe"] },
    );
    let output = "";
    child.stdout.on("data", (chunk) => {
      output += String(chunk);
    });
    const exited = new Promise<{ code: number | null; signal: string | null }>((resolve) =>
      child.once("exit", (code, signal) => resolve({ code, signal })),
    );
    // Starting: its caches are retrying lists against a server that never answers.
    for (let i = 0; i < 100 && !output.includes("cannot list or watch"); i++) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    expect(output).toContain("cannot list or watch");
    child.kill("SIGTERM");
    expect(await exited).toEqual({ code: 0, signal: null });
    expect(output).toContain("stopped while starting");
  }, 20_000);
});

describe("the operator process at start", () => {
  it("names --health-port when its port is taken, rather than crashing with a stack trace", async () => {
    const busy = createServer();
    await new Promise<void>((listening) => busy.listen(0, listening));
    const { port } = busy.address() as { port: number };
    try {
      const child = spawn(
        process.execPath,
        [
          entry,
          "operator",
          `--kubeconfig=${await unreachableKubeconfig()}`,
          "--webhook-port=0",
          "--metrics-port=0",
          `--health-port=${port}`,
          "--no-rightsizing",
        ],
        { stdio: ["ignore", "ignore", "pipe"] },
      );
      let stderr = "";
      child.stderr.on("data", (chunk) => {
        stderr += String(chunk);
      });
      const code = await new Promise<number | null>((exited) => child.once("exit", exited));
      expect(code).toBe(1);
      expect(stderr).toMatch(
        new RegExp(`^napwake operator: --health-port=${port}: cannot listen: .*EADDRINUSE`),
      );
    } finally {
      busy.close();
    }
  });
});
