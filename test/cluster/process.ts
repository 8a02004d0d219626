import { type ChildProcess, spawn } from "node:child_process";
import { createWriteStream } from "node:fs";
import { join } from "node:path";

export interface ProcessSpec {
  name: string;
  command: string;
  args: string[];
  logDir: string;
  env?: NodeJS.ProcessEnv;
}

export interface RunningProcess {
  name: string;
  pid: number;
  logFile: string;
  /** Resolves with the exit code (or the signal) once the process has ended. */
  exited: Promise<string>;
  isRunning(): boolean;
  stop(graceMs?: number): Promise<void>;
}

/** Starts a component with its output in `<logDir>/<name>.log`. */
export function startProcess(spec: ProcessSpec): RunningProcess {
  const logFile = join(spec.logDir, `${spec.name}.log`);
  const log = createWriteStream(logFile, { flags: "a" });
  const child = spawn(spec.command, spec.args, {
    env: spec.env ?? process.env,
    stdio: ["ignore", "pipe", "pipe"],
  });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  let running = true;
  const exited = new Promise<string>((resolve) => {
    child.once("exit", (code, signal) => {
      running = false;
      resolve(signal ?? String(code));
    });
    child.once("error", (err) => {
      running = false;
      resolve(`failed to start: ${err.message}`);
    });
  });
  return {
    name: spec.name,
    pid: child.pid ?? -1,
    logFile,
    exited,
    isRunning: () => running,
    stop: (graceMs = 10_000) => stopChild(child, exited, () => running, graceMs),
  };
}

async function stopChild(
  child: ChildProcess,
  exited: Promise<string>,
  isRunning: () => boolean,
  graceMs: number,
): Promise<void> {
  if (!isRunning()) return;
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), graceMs);
  await exited;
  clearTimeout(timer);
}

export interface WaitOptions {
  what: string;
  timeoutMs: number;
  intervalMs?: number;
  /** Stop waiting early when this process dies: its log says why. */
  process?: RunningProcess;
}

/** Polls `check` until it returns a value other than undefined; the last error is kept for the message. */
export async function waitFor<T>(check: () => Promise<T | undefined>, opts: WaitOptions): Promise<T> {
  const deadline = Date.now() + opts.timeoutMs;
  let lastError = "";
  for (;;) {
    if (opts.process && !opts.process.isRunning()) {
      throw new Error(
        `${opts.what}: ${opts.process.name} exited (${await opts.process.exited}); see ${opts.process.logFile}`,
      );
    }
    try {
      const value = await check();
      if (value !== undefined) return value;
    } catch (err) {
      lastError = err instanceof Error ? err.message : String(err);
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${opts.timeoutMs} ms waiting for ${opts.what}${lastError ? `: ${lastError}` : ""}`,
      );
    }
    await new Promise((r) => setTimeout(r, opts.intervalMs ?? 200));
  }
}
