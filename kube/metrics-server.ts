import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer } from "node:https";
import type { Logger as PinoLogger } from "pino";
import { type ServingCertificates, servingTls } from "../certs/serving-tls.ts";
import { type Clock, systemClock } from "./clock.ts";
import { listen, listenOnEveryFamily, reportLaterErrors, trackConnections } from "./listen.ts";
import {
  type AccessCacheOptions,
  type Authenticator,
  type Authorizer,
  bearerToken,
  createAccessCheck,
  guardRequest,
  type Refusal,
  TooManyReviewsError,
} from "./metrics-auth.ts";

export type Logger = Pick<PinoLogger, "info" | "warn" | "error">;

export interface MetricsSource {
  text(): Promise<string>;
  readonly contentType: string;
}

export interface MetricsServerOptions {
  metrics: MetricsSource;
  certificates: ServingCertificates;
  authenticator: Authenticator;
  authorizer: Authorizer;
  logger: Logger;
  clock?: Clock;
  cache?: AccessCacheOptions;
  /** Time to receive a whole request. Default 10 s. */
  requestTimeoutMs?: number;
  /** How long close() lets requests in flight finish before cutting their connections. Default 5 s. */
  closeGraceMs?: number;
}

export interface MetricsServer {
  /** Listens on `host:port` (port 0: any free port) and resolves to the actual address. */
  listen(host: string, port: number): Promise<{ host: string; port: number }>;
  /** A serving certificate is loaded and the server is not closing. */
  isReady(): boolean;
  /** Stops accepting connections, lets requests in flight finish (up to the grace period), then closes. */
  close(): Promise<void>;
}

export const metricsPath = "/metrics";

/**
 * GET /metrics in the Prometheus text format over HTTPS (HTTP/1.1 only), for callers whose bearer token the
 * API server accepts and whose user may `get` the non-resource URL /metrics (bind the ClusterRole
 * napwake-metrics-reader). 401 without a valid token, 403 without the permission, 503 when the API server
 * cannot be asked.
 */
export function createMetricsServer(options: MetricsServerOptions): MetricsServer {
  const { logger } = options;
  const clock = options.clock ?? systemClock;
  const access = createAccessCheck({
    authenticator: options.authenticator,
    authorizer: options.authorizer,
    attributes: { path: metricsPath, verb: "get" },
    clock,
    ...options.cache,
  });
  const tls = servingTls(options.certificates, logger, "metrics server");
  let closing = false;

  const server = createServer(
    {
      ...tls.serverOptions,
      requestTimeout: options.requestTimeoutMs ?? 10_000,
      headersTimeout: Math.min(options.requestTimeoutMs ?? 10_000, 10_000),
    },
    (req, res) => void handle(req, res),
  );
  server.on("tlsClientError", () => {
    // Probes and scrapers with the wrong CA: nothing to answer, and not worth a log line each.
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const answer = (await decide(req)) ?? (await collect());
    // Asked as the answer is written, after every wait: a close that began meanwhile ends a kept-alive connection
    // with this answer, rather than waiting out its grace for a request that will not come.
    if (closing) res.setHeader("connection", "close");
    if ("body" in answer) {
      res.writeHead(200, {
        "content-type": options.metrics.contentType,
        "content-length": Buffer.byteLength(answer.body),
      });
      res.end(answer.body);
    } else reply(res, answer);
  }

  async function collect(): Promise<{ body: string } | Refusal> {
    try {
      return { body: await options.metrics.text() };
    } catch (error) {
      logger.error({ err: error }, "metrics server: collecting metrics failed");
      return { status: 500, message: "collecting metrics failed" };
    }
  }

  async function decide(req: IncomingMessage): Promise<Refusal | null> {
    const bad = guardRequest(req, metricsPath);
    if (bad) return { ...bad, headers: { ...bad.headers, connection: "close" } };
    const token = bearerToken(req.headers.authorization);
    if (!token) return unauthorized("an Authorization: Bearer <token> header is required");
    try {
      const verdict = await access(token);
      if (verdict === "unauthenticated") return unauthorized("the token is not valid");
      if (verdict === "forbidden")
        return { status: 403, message: `forbidden: get ${metricsPath} is not allowed` };
      return null;
    } catch (error) {
      if (error instanceof TooManyReviewsError) return { status: 503, message: error.message };
      logger.warn({ err: error }, "metrics server: could not review a token with the API server");
      return { status: 503, message: "could not check the token with the API server" };
    }
  }

  const unsubscribe = tls.follow(server);
  const connections = trackConnections(server);

  return {
    async listen(host, port) {
      const address = await listenOnEveryFamily(host, (on) => listen(server, port, on));
      reportLaterErrors(server, (err) => logger.error({ err }, "metrics server: cannot accept connections"));
      return { host: address.address, port: address.port };
    },
    isReady: () => tls.loaded() && !closing,
    async close() {
      closing = true;
      unsubscribe();
      if (!server.listening) return;
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      server.closeIdleConnections();
      const timer = clock.setTimeout(() => connections.destroyAll(), options.closeGraceMs ?? 5_000);
      await closed;
      clock.clearTimeout(timer);
    },
  };
}

function unauthorized(message: string): Refusal {
  return { status: 401, message, headers: { "www-authenticate": 'Bearer realm="napwake-metrics"' } };
}

function reply(res: ServerResponse, refusal: Refusal): void {
  const body = `${refusal.message}\n`;
  res.writeHead(refusal.status, {
    ...refusal.headers,
    "content-type": "text/plain; charset=utf-8",
    "content-length": Buffer.byteLength(body),
  });
  res.end(body);
}
