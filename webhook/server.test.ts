import { X509Certificate } from "node:crypto";
import { Agent, request as httpsRequest } from "node:https";
import { connect as netConnect } from "node:net";
import { connect } from "node:tls";
import pino from "pino";
import { afterEach, describe, expect, it } from "vitest";
import { createCertificateAuthority, defaultPkiDeps, issueCertificate, type KeyPair } from "../certs/pki.ts";
import type { ServingCertificates } from "../certs/serving-tls.ts";
import { createMetrics, type NapwakeMetrics } from "../kube/metrics.ts";
import type { AdmissionDecision } from "./admission.ts";
import type { WebhookEntry } from "./registry.ts";
import { createWebhookServer, type WebhookServer } from "./server.ts";
import { deployment, workloadRequest } from "./test-requests.ts";

// OpenSSL refuses RSA keys under 2048 bits at its default security level.
const pki = defaultPkiDeps;
const ca = createCertificateAuthority({ commonName: "ca", notBefore: new Date(), validForMs: 3600_000 }, pki);
const servername = "napwake-webhook.napwake-system.svc";
const issue = () =>
  issueCertificate(
    ca,
    {
      commonName: servername,
      dnsNames: [servername],
      usage: "server",
      notBefore: new Date(),
      validForMs: 3600_000,
    },
    pki,
  );

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

function entry(
  name: string,
  path: string,
  handle: WebhookEntry["handle"],
  failurePolicy: "Ignore" | "Fail" = "Ignore",
) {
  return {
    name,
    path,
    kind: "validating",
    rules: [],
    failurePolicy,
    timeoutSeconds: 5,
    handle,
  } satisfies WebhookEntry;
}

const boom = () => {
  throw new Error("cache not synced");
};
const webhooks: WebhookEntry[] = [
  entry("allow.validate.test.dev", "/allow", (): AdmissionDecision => ({ allowed: true })),
  entry(
    "deny.validate.test.dev",
    "/deny",
    (): AdmissionDecision => ({ allowed: false, code: 403, message: "no" }),
  ),
  entry("boom.validate.test.dev", "/boom-open", boom),
  entry("boomclosed.validate.test.dev", "/boom-closed", boom, "Fail"),
  entry("slow.validate.test.dev", "/mutate", (r) => ({
    allowed: true,
    patch: [{ op: "add", path: "/metadata/labels", value: { uid: r.uid } }],
  })),
];

interface Reply {
  status: number;
  body: Record<string, unknown>;
}

function post(
  port: number,
  path: string,
  body: string,
  headers: Record<string, string> = {},
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: "127.0.0.1",
        port,
        path,
        method: "POST",
        ca: ca.certPem,
        servername,
        agent: false,
        headers: { "content-type": "application/json", ...headers },
      },
      (res) => {
        let data = "";
        res.on("data", (c) => {
          data += c;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: data ? JSON.parse(data) : {} }));
      },
    );
    req.on("error", reject);
    req.end(body);
  });
}

function get(port: number, path: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      { host: "127.0.0.1", port, path, ca: ca.certPem, servername, agent: false },
      (res) => {
        let data = "";
        res.on("data", (c) => {
          data += c;
        });
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(data) }));
      },
    );
    req.on("error", reject);
    req.end();
  });
}

/**
 * POSTs a review to /allow on `agent` (none: a connection of its own). With `whileSending`, the body goes in two
 * parts, and `whileSending` runs between them, once the server has the request's head: the request is in flight.
 */
function postOn(
  port: number,
  body: string,
  opts: { agent?: Agent; whileSending?: () => void },
): Promise<{ status: number; body: Record<string, unknown>; connection: unknown }> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      {
        host: "127.0.0.1",
        port,
        path: "/allow",
        method: "POST",
        ca: ca.certPem,
        servername,
        agent: opts.agent ?? false,
        headers: { "content-type": "application/json", "content-length": Buffer.byteLength(body) },
      },
      (res) => {
        let data = "";
        res.on("data", (c) => {
          data += c;
        });
        res.on("end", () =>
          resolve({
            status: res.statusCode ?? 0,
            body: data ? JSON.parse(data) : {},
            connection: res.headers.connection,
          }),
        );
      },
    );
    req.on("error", reject);
    const { whileSending } = opts;
    if (!whileSending) return void req.end(body);
    req.write(body.slice(0, 10));
    setTimeout(() => {
      whileSending();
      setTimeout(() => req.end(body.slice(10)), 50);
    }, 50);
  });
}

/** The serial of the certificate the server presents, with or without SNI, and the ALPN protocol it picked. */
function handshake(port: number, sni: boolean): Promise<{ serial: string; alpn: string | false }> {
  return new Promise((resolve, reject) => {
    const socket = connect({
      host: "127.0.0.1",
      port,
      ca: ca.certPem,
      ...(sni ? { servername } : {}),
      checkServerIdentity: () => undefined,
      ALPNProtocols: ["h2", "http/1.1"],
    });
    socket.on("secureConnect", () => {
      const serial = socket.getPeerX509Certificate()?.serialNumber ?? "";
      resolve({ serial, alpn: socket.alpnProtocol ?? false });
      socket.end();
    });
    socket.on("error", reject);
  });
}

const review = (uid = "uid-1") =>
  JSON.stringify({
    apiVersion: "admission.k8s.io/v1",
    kind: "AdmissionReview",
    request: { ...workloadRequest(deployment("web")), uid },
  });

function logs() {
  const lines: Record<string, unknown>[] = [];
  const logger = pino({ level: "info" }, { write: (line: string) => lines.push(JSON.parse(line)) });
  return { logger, lines };
}

describe("webhook server", () => {
  let server: WebhookServer | undefined;
  afterEach(async () => {
    await server?.close();
    server = undefined;
  });

  async function start(
    opts: {
      pair?: KeyPair | null;
      bodyLimitBytes?: number;
      ready?: () => boolean;
      metrics?: NapwakeMetrics;
    } = {},
  ) {
    const certs = certificateSource(opts.pair === null ? undefined : (opts.pair ?? issue()));
    const log = logs();
    server = createWebhookServer({
      webhooks,
      certificates: certs.source,
      logger: log.logger,
      bodyLimitBytes: opts.bodyLimitBytes,
      ready: opts.ready,
      ...(opts.metrics ? { metrics: opts.metrics.admissionMetrics(webhooks.map((w) => w.name)) } : {}),
    });
    const { port } = await server.listen("127.0.0.1", 0);
    return { port, certs, log, server };
  }

  it("answers a review on its path, echoing the uid", async () => {
    const { port } = await start();
    const reply = await post(port, "/mutate", review("abc-123"));
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({
      apiVersion: "admission.k8s.io/v1",
      kind: "AdmissionReview",
      response: { uid: "abc-123", allowed: true, patchType: "JSONPatch" },
    });
  });

  it("answers a review of an UPDATE of two objects each at the API server's 1.5 MiB storage limit", async () => {
    const { port } = await start();
    const big = { metadata: { name: "big", annotations: { blob: "x".repeat(1_500_000) } } };
    const body = JSON.parse(review("big-1"));
    body.request = { ...body.request, operation: "UPDATE", object: big, oldObject: big };
    const reply = await post(port, "/mutate", JSON.stringify(body));
    expect(reply.status).toBe(200);
    expect(reply.body).toMatchObject({ response: { uid: "big-1" } });
  });

  it.each<{ name: string; body: string; headers: Record<string, string>; status: number; message: RegExp }>([
    {
      name: "a body over the limit",
      body: "x".repeat(2048),
      headers: {},
      status: 413,
      message: /larger than .* 1024 bytes/,
    },
    {
      name: "another content type",
      body: review(),
      headers: { "content-type": "text/plain" },
      status: 415,
      message: /content-type must be application\/json, got "text\/plain"/,
    },
    {
      name: "no content type",
      body: review(),
      headers: { "content-type": "" },
      status: 415,
      message: /content-type must be application\/json, got ""/,
    },
    {
      name: "a compressed body",
      body: review(),
      headers: { "content-encoding": "gzip" },
      status: 415,
      message: /content-encoding "gzip" is not supported: send the AdmissionReview uncompressed/,
    },
    { name: "invalid JSON", body: "{", headers: {}, status: 400, message: /malformed AdmissionReview/ },
    {
      name: "JSON that is not a review",
      body: JSON.stringify({ kind: "Pod" }),
      headers: {},
      status: 400,
      message: /malformed AdmissionReview: apiVersion must be admission.k8s.io\/v1/,
    },
  ])("refuses $name with $status and a clear message", async ({ body, headers, status, message }) => {
    const { port } = await start({ bodyLimitBytes: 1024 });
    const reply = await post(port, "/allow", body, headers);
    expect(reply.status).toBe(status);
    expect(reply.body.message).toMatch(message);
  });

  it("counts each review by webhook and what it came to, a failure answered by failurePolicy apart", async () => {
    const metrics = createMetrics({ processMetrics: false });
    const { port } = await start({ metrics });
    for (const path of ["/allow", "/allow", "/deny", "/boom-open", "/boom-closed"])
      await post(port, path, review());
    const text = await metrics.text();
    const count = (webhook: string, result: string) =>
      new RegExp(`napwake_webhook_requests_total\\{webhook="${webhook}",result="${result}"\\} (\\d+)`).exec(
        text,
      )?.[1];
    expect(count("allow.validate.test.dev", "allowed")).toBe("2");
    expect(count("deny.validate.test.dev", "refused")).toBe("1");
    expect(count("boom.validate.test.dev", "failed-open")).toBe("1");
    expect(count("boomclosed.validate.test.dev", "failed-closed")).toBe("1");
    // Every series is there before its first request, so rate() and absent() behave.
    expect(count("slow.validate.test.dev", "failed-closed")).toBe("0");
    expect(text).toMatch(
      /napwake_webhook_request_duration_seconds_count\{webhook="allow.validate.test.dev"\} 2/,
    );
  });

  it("warns, at most once a minute, and counts every TLS handshake a caller refused", async () => {
    const metrics = createMetrics({ processMetrics: false });
    const { port, log } = await start({ metrics });
    const other = createCertificateAuthority(
      { commonName: "other", notBefore: new Date(), validForMs: 3600_000 },
      pki,
    );
    // An API server whose caBundle holds another CA than the one the serving certificate chains to.
    const refuse = () =>
      new Promise<string>((resolve) => {
        const socket = connect({ host: "127.0.0.1", port, servername, ca: other.certPem });
        socket.on("secureConnect", () => resolve("connected"));
        socket.on("error", (err) => resolve((err as { code?: string }).code ?? err.message));
      });
    expect(await refuse()).toBe("UNABLE_TO_VERIFY_LEAF_SIGNATURE");
    expect(await refuse()).toBe("UNABLE_TO_VERIFY_LEAF_SIGNATURE");
    await new Promise((r) => setTimeout(r, 100));
    expect(await metrics.text()).toMatch(/napwake_webhook_tls_handshake_errors_total 2/);
    const warnings = log.lines.filter((l) => String(l.msg).includes("TLS handshake failed"));
    expect(warnings).toHaveLength(1);
    expect(warnings[0]?.msg).toMatch(/caBundle does not hold the CA of the serving certificate/);
  });

  it.each([
    { what: "finished its TLS handshake and sent no request", handshake: true },
    { what: "never began its TLS handshake", handshake: false },
  ])("closes, by its deadline, a connection that $what", async ({ handshake }) => {
    const certs = certificateSource(issue());
    const closing = createWebhookServer({
      webhooks,
      certificates: certs.source,
      logger: logs().logger,
      closeDeadlineMs: 200,
    });
    const { port } = await closing.listen("127.0.0.1", 0);
    const silent = await new Promise<{ destroy(): void }>((resolve, reject) => {
      const socket = handshake
        ? connect({ host: "127.0.0.1", port, servername, ca: ca.certPem }, () => resolve(socket))
        : netConnect({ host: "127.0.0.1", port }, () => resolve(socket));
      socket.on("error", () => undefined);
      socket.once("error", reject);
    });
    const closed = await Promise.race([
      closing.close().then(() => "closed"),
      new Promise((resolve) => setTimeout(() => resolve("still open"), 5_000)),
    ]);
    silent.destroy();
    expect(closed).toBe("closed");
  });

  it("keeps an idle connection longer than the API server does (90 s), so it is never closed under a call", async () => {
    const { port } = await start();
    const keepAlive = await new Promise<unknown>((resolve, reject) => {
      const req = httpsRequest(
        {
          host: "127.0.0.1",
          port,
          path: "/healthz",
          ca: ca.certPem,
          servername,
          agent: new Agent({ keepAlive: true }),
        },
        (res) => {
          res.resume();
          resolve(res.headers["keep-alive"]);
          req.destroy();
        },
      );
      req.on("error", reject);
      req.end();
    });
    expect(keepAlive).toBe("timeout=120");
  });

  it("answers a failing fail-open handler with allowed, a warning and a log line", async () => {
    const { port, log } = await start();
    const reply = await post(port, "/boom-open", review("u-open"));
    expect(reply.status).toBe(200);
    expect(reply.body.response).toEqual({
      uid: "u-open",
      allowed: true,
      warnings: ["napwake webhook boom.validate.test.dev failed and let this write through"],
    });
    expect(log.lines).toContainEqual(
      expect.objectContaining({ level: 50, webhook: "boom.validate.test.dev", uid: "u-open" }),
    );
  });

  it("answers a failing fail-closed handler with a refusal naming the webhook, not an HTTP 500", async () => {
    const { port } = await start();
    const reply = await post(port, "/boom-closed", review("u-closed"));
    expect(reply.status).toBe(200);
    expect(reply.body.response).toMatchObject({
      uid: "u-closed",
      allowed: false,
      status: {
        code: 500,
        message: expect.stringMatching(/boomclosed.validate.test.dev failed internally: cache not synced/),
      },
    });
  });

  it("is live at once and ready only once a certificate is loaded", async () => {
    let depsReady = false;
    const { port, certs, server } = await start({ pair: null, ready: () => depsReady });
    expect(server.isReady()).toBe(false);
    await expect(handshake(port, true)).rejects.toThrow();
    certs.set(issue());
    expect((await get(port, "/healthz")).status).toBe(200);
    expect(await get(port, "/readyz")).toEqual({
      status: 503,
      body: { status: "not ready", reason: "dependencies not ready" },
    });
    depsReady = true;
    expect((await get(port, "/readyz")).status).toBe(200);
  });

  it("serves a rotated certificate to new connections without a restart, with and without SNI", async () => {
    const first = issue();
    const { port, certs } = await start({ pair: first });
    const firstSerial = new X509Certificate(first.certPem).serialNumber;
    expect((await handshake(port, true)).serial).toBe(firstSerial);
    const second = issue();
    certs.set(second);
    const secondSerial = new X509Certificate(second.certPem).serialNumber;
    expect((await handshake(port, true)).serial).toBe(secondSerial);
    expect((await handshake(port, false)).serial).toBe(secondSerial);
  });

  it("keeps the previous certificate when a new one is unusable", async () => {
    const first = issue();
    const { port, certs, log } = await start({ pair: first });
    certs.set({ certPem: "garbage", keyPem: "garbage" });
    expect((await handshake(port, true)).serial).toBe(new X509Certificate(first.certPem).serialNumber);
    expect(log.lines).toContainEqual(expect.objectContaining({ level: 50 }));
  });

  it("speaks HTTP/1.1 only, even to a client offering h2", async () => {
    const { port } = await start();
    expect((await handshake(port, true)).alpn).toBe("http/1.1");
  });

  it("parses a review whose object has a __proto__ key, legal in a free-form map, as an ordinary key", async () => {
    const { port } = await start();
    const body = review("proto").replace('"metadata":{', '"metadata":{"labels":{"__proto__":"x"},');
    expect(body).toContain('"__proto__"');
    expect(await post(port, "/allow", body)).toMatchObject({
      status: 200,
      body: { response: { uid: "proto", allowed: true } },
    });
  });

  it("ends a kept-alive connection with the answer it gives while closing, so closing does not wait out the keep-alive", async () => {
    const { port, server } = await start();
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    try {
      expect((await postOn(port, review("first"), { agent })).connection).toBe("keep-alive");
      let closed: Promise<void> | undefined;
      const reply = await postOn(port, review("second"), {
        agent,
        whileSending: () => {
          closed = server.close();
        },
      });
      expect(reply).toMatchObject({ status: 200, connection: "close" });
      // Without the header the API server's connection stays open and this waits for the keep-alive timeout.
      await closed;
    } finally {
      agent.destroy();
    }
  });

  it("finishes a request in flight when closed, then refuses new connections", async () => {
    const { port, server } = await start();
    let closed: Promise<void> | undefined;
    const reply = await postOn(port, review("in-flight"), {
      whileSending: () => {
        closed = server.close();
      },
    });
    expect(reply).toMatchObject({
      status: 200,
      body: { response: { uid: "in-flight", allowed: true } },
    });
    await closed;
    expect(server.isReady()).toBe(false);
    await expect(post(port, "/allow", review())).rejects.toThrow(/ECONNREFUSED/);
  });
});
