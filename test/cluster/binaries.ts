import { spawn } from "node:child_process";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const buildScript = join(dirname(fileURLToPath(import.meta.url)), "build-binaries.sh");

/**
 * Builds (once, cached outside the repo) and locates the control-plane binaries. Progress goes to stderr;
 * a cold build takes minutes.
 */
export function ensureBinaries(): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn("bash", [buildScript], { stdio: ["ignore", "pipe", "inherit"] });
    let out = "";
    child.stdout.setEncoding("utf8");
    child.stdout.on("data", (chunk) => {
      out += chunk;
    });
    child.on("error", reject);
    child.on("exit", (code) => {
      const dir = out.trim().split("\n").pop();
      if (code === 0 && dir) resolve(dir);
      else reject(new Error(`${buildScript} failed with exit code ${code}`));
    });
  });
}
