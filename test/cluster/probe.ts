import { readFile } from "node:fs/promises";
import { request } from "node:https";

export interface ClientTls {
  ca: string;
  cert?: string;
  key?: string;
}

/** Reads PEM files once, for repeated probes. */
export async function loadTls(files: { ca: string; cert?: string; key?: string }): Promise<ClientTls> {
  return {
    ca: await readFile(files.ca, "utf8"),
    ...(files.cert ? { cert: await readFile(files.cert, "utf8") } : {}),
    ...(files.key ? { key: await readFile(files.key, "utf8") } : {}),
  };
}

/**
 * GETs an HTTPS URL; resolves with status and body, rejects on connection errors. `servername` is the name the
 * certificate is checked against when the URL dials an IP address the certificate does not name.
 */
export function httpsGet(
  url: string,
  tls: ClientTls,
  opts: { timeoutMs?: number; headers?: Record<string, string>; servername?: string } = {},
): Promise<{ status: number; body: string }> {
  const { timeoutMs = 5_000, headers = {}, servername } = opts;
  return new Promise((resolve, reject) => {
    const options = {
      ...tls,
      method: "GET",
      timeout: timeoutMs,
      headers,
      ...(servername ? { servername } : {}),
    };
    const req = request(url, options, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (chunk) => {
        body += chunk;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("timeout", () => req.destroy(new Error(`GET ${url} timed out`)));
    req.on("error", reject);
    req.end();
  });
}

/** Resolves when `url` answers 200; for readyz-style endpoints. */
export async function isHealthy(url: string, tls: ClientTls): Promise<true | undefined> {
  const res = await httpsGet(url, tls);
  if (res.status === 200) return true;
  throw new Error(`${url} answered ${res.status}: ${res.body.slice(0, 300)}`);
}
