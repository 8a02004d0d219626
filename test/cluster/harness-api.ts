import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { PrometheusHandle } from "./prometheus.ts";

const maxHistoryBytes = 512 * 1024 * 1024;

/**
 * A small HTTP API for what only the process owning the cluster can do, so test workers (other processes)
 * can ask for it: load Prometheus history (which restarts Prometheus). Listens on loopback inside the
 * cluster's network namespace only.
 */
export async function startHarnessApi(
  prometheus: PrometheusHandle,
): Promise<{ url: string; stop(): Promise<void> }> {
  let queue: Promise<unknown> = Promise.resolve();
  const server: Server = createServer((req, res) => {
    if (req.method !== "POST" || req.url !== "/prometheus/history") {
      res.writeHead(404).end("POST /prometheus/history with an OpenMetrics body\n");
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    req.on("data", (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxHistoryBytes) req.destroy(new Error("history too large"));
      else chunks.push(chunk);
    });
    req.on("end", () => {
      // One load at a time: each restarts Prometheus.
      const load = queue.then(() => prometheus.loadHistory(Buffer.concat(chunks).toString("utf8")));
      queue = load.catch(() => undefined);
      load.then(
        () => res.writeHead(204).end(),
        (err: Error) => res.writeHead(500).end(`${err.message}\n`),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    stop: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** Client side: load OpenMetrics history through the harness API. */
export async function loadPrometheusHistory(harnessUrl: string, openMetrics: string): Promise<void> {
  const res = await fetch(`${harnessUrl}/prometheus/history`, { method: "POST", body: openMetrics });
  if (res.status !== 204) throw new Error(`loading history failed: ${res.status} ${await res.text()}`);
}
