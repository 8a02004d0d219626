import { X509Certificate } from "node:crypto";
import { Agent, request as httpsRequest } from "node:https";
import { connect as netConnect } from "node:net";
import { connect } from "node:tls";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { createCertificateAuthority, defaultPkiDeps, issueCertificate, type KeyPair } from "../certs/pki.ts";
import type { ServingCertificates } from "../certs/serving-tls.ts";
import type { Authenticator, Authorizer } from "./metrics-auth.ts";
import { createMetricsServer, type MetricsServer } from "./metrics-server.ts";

const ca = createCertificateAuthority(
  { commonName: "ca", notBefore: new Date(), validForMs: 3600_000 },
  defaultPkiDeps,
);
const issue = () =>
  issueCertificate(ca, {
    commonName: "napwake-metrics",
    dnsNames: ["napwake-metrics.napwake-system.svc"],
    ipAddresses: ["127.0.0.1"],
    usage: "server",
    notBefore: new Date(),
    validForMs: 3600_000,
  });
const first = issue();

function certificateSource(initial?: KeyPair) {
  let current = initial;
  const listeners = new Set<() => void>();
  const source: ServingCertificates = {
    current: () => current,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
  return {
    source,
    set(pair: KeyPair) {
      current = pair;
      for (const l of listeners) l();
    },
  };
}

const calls = { reviews: 0 };
const authenticator: Authenticator = {
  async authenticate(token) {
    calls.reviews++;
    if (token === "down") throw new Error("connect ECONNREFUSED");
    return { reader: { username: "prometheus" }, nobody: { username: "someone" } }[token] ?? null;
  },
};
const authorizer: Authorizer = { allowed: async (user) => user.username === "prometheus" };
const metrics = { text: async () => "napwake_pauses_total 3\n", contentType: "text/plain; version=0.0.4" };

let server: MetricsServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function start(certs = certificateSource(first).source) {
  server = createMetricsServer({
    metrics,
    certificates: certs,
    authenticator,
    authorizer,
    logger: pino({ level: "silent" }),
  });
  return (await server.listen("127.0.0.1", 0)).port;
}

interface Reply {
  status: number;
  body: string;
  headers: Record<string, string | string[] | undefined>;
}

function get(port: number, opts: { path?: string; method?: string; token?: string; body?: string } = {}) {
  return new Promise<Reply>((resolve, reject) => {
    const req = httpsRequest(
      {
        host: "127.0.0.1",
        port,
        path: opts.path ?? "/metrics",
        method: opts.method ?? "GET",
        ca: ca.certPem,
        agent: false,
        headers: {
          ...(opts.token === undefined ? {} : { authorization: `Bearer ${opts.token}` }),
          ...(opts.body === undefined ? {} : { "content-length": Buffer.byteLength(opts.body) }),
        },
      },
      (res) => {
        let body = "";
        res.on("data", (c) => {
          body += c;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body, headers: res.headers }));
      },
    );
    req.on("error", reject);
    req.end(opts.body);
  });
}

describe("the metrics server", () => {
  it.each<[string, number, Parameters<typeof get>[1]]>([
    ["an allowed token", 200, { token: "reader" }],
    ["no token", 401, {}],
    ["an unknown token", 401, { token: "garbage" }],
    ["a token whose user may not read /metrics", 403, { token: "nobody" }],
    ["the API server unreachable", 503, { token: "down" }],
    ["another path", 404, { token: "reader", path: "/debug" }],
    ["another method", 405, { token: "reader", method: "POST" }],
    ["a body", 413, { token: "reader", body: "x" }],
  ])("answers %s with %i", async (_what, status, opts) => {
    const port = await start();
    expect((await get(port, opts)).status).toBe(status);
  });

  it("serves the metrics text with its content type", async () => {
    const reply = await get(await start(), { token: "reader" });
    expect(reply.body).toBe("napwake_pauses_total 3\n");
    expect(reply.headers["content-type"]).toBe("text/plain; version=0.0.4");
  });

  it("asks a Bearer challenge on 401", async () => {
    const reply = await get(await start());
    expect(reply.headers["www-authenticate"]).toBe('Bearer realm="napwake-metrics"');
  });

  it("reviews a token once across scrapes", async () => {
    const port = await start();
    const before = calls.reviews;
    for (let i = 0; i < 3; i++) expect((await get(port, { token: "reader" })).status).toBe(200);
    expect(calls.reviews - before).toBe(1);
  });

  it("offers only HTTP/1.1 over ALPN", async () => {
    const port = await start();
    const protocol = await new Promise<string | false | null>((resolve, reject) => {
      const socket = connect(
        { host: "127.0.0.1", port, ca: ca.certPem, ALPNProtocols: ["h2", "http/1.1"] },
        () => {
          resolve(socket.alpnProtocol);
          socket.end();
        },
      );
      socket.on("error", reject);
    });
    expect(protocol).toBe("http/1.1");
  });

  it("hot-reloads a renewed certificate", async () => {
    const certs = certificateSource(first);
    const port = await start(certs.source);
    const serialOf = () =>
      new Promise<string>((resolve, reject) => {
        const socket = connect({ host: "127.0.0.1", port, ca: ca.certPem }, () => {
          resolve(socket.getPeerX509Certificate()?.serialNumber ?? "");
          socket.end();
        });
        socket.on("error", reject);
      });
    expect(await serialOf()).toBe(new X509Certificate(first.certPem).serialNumber);
    const renewed = issue();
    certs.set(renewed);
    expect(await serialOf()).toBe(new X509Certificate(renewed.certPem).serialNumber);
  });

  it("is ready only with a certificate, and not once closing", async () => {
    const certs = certificateSource();
    server = createMetricsServer({
      metrics,
      certificates: certs.source,
      authenticator,
      authorizer,
      logger: pino({ level: "silent" }),
    });
    expect(server.isReady()).toBe(false);
    certs.set(first);
    expect(server.isReady()).toBe(true);
    await server.close();
    expect(server.isReady()).toBe(false);
  });

  it("closes, by its grace, a connection that never began its TLS handshake", async () => {
    server = createMetricsServer({
      metrics,
      certificates: certificateSource(first).source,
      authenticator,
      authorizer,
      logger: pino({ level: "silent" }),
      closeGraceMs: 200,
    });
    const { port } = await server.listen("127.0.0.1", 0);
    const silent = await new Promise<{ destroy(): void }>((resolve, reject) => {
      const socket = netConnect({ host: "127.0.0.1", port }, () => resolve(socket));
      socket.on("error", () => undefined);
      socket.once("error", reject);
    });
    const closed = await Promise.race([
      server.close().then(() => "closed"),
      new Promise((resolve) => setTimeout(() => resolve("still open"), 5_000)),
    ]);
    silent.destroy();
    expect(closed).toBe("closed");
  });

  it("ends a kept-alive connection with the scrape in flight when closing began, rather than waiting out its grace", async () => {
    let answer: ((text: string) => void) | undefined;
    server = createMetricsServer({
      metrics: {
        ...metrics,
        text: () =>
          new Promise<string>((resolve) => {
            answer = resolve;
          }),
      },
      certificates: certificateSource(first).source,
      authenticator,
      authorizer,
      logger: pino({ level: "silent" }),
    });
    const { port } = await server.listen("127.0.0.1", 0);
    const agent = new Agent({ keepAlive: true });
    const reply = new Promise<string | undefined>((resolve, reject) => {
      const req = httpsRequest(
        {
          host: "127.0.0.1",
          port,
          path: "/metrics",
          ca: ca.certPem,
          agent,
          headers: { authorization: "Bearer reader" },
        },
        (res) => {
          res.resume();
          res.on("end", () => resolve(res.headers.connection));
        },
      );
      req.on("error", reject);
      req.end();
    });
    // The scrape is in: its token reviewed, it waits for the metrics.
    while (!answer) await new Promise((resolve) => setImmediate(resolve));
    const closed = server.close();
    answer("napwake_pauses_total 3\n");
    expect(await reply).toBe("close");
    await closed;
    agent.destroy();
  });

  it("closes while a kept-alive connection is idle", async () => {
    const port = await start();
    expect((await get(port, { token: "reader" })).status).toBe(200);
    await server?.close();
    await expect(get(port, { token: "reader" })).rejects.toThrow(/ECONNREFUSED/);
  });
});
