import type { Server as HttpsServer } from "node:https";
import type { AddressInfo } from "node:net";
import fastify, { type FastifyError } from "fastify";
import type { Logger as PinoLogger } from "pino";
import { type ServingCertificates, servingTls } from "../certs/serving-tls.ts";
import { listenOnEveryFamily, reportLaterErrors, trackConnections } from "../kube/listen.ts";
import type { AdmissionMetrics, AdmissionResult } from "../kube/metrics.ts";
import { type AdmissionDecision, admissionReview, parseAdmissionReview } from "./admission.ts";
import { checkRegistry, type WebhookEntry } from "./registry.ts";

export type Logger = Pick<PinoLogger, "info" | "warn" | "error">;

export interface WebhookServerOptions {
  webhooks: readonly WebhookEntry[];
  certificates: ServingCertificates;
  logger: Logger;
  /** Larger bodies are refused with 413. The API server sends objects up to ~1.5 MiB (etcd's limit). */
  bodyLimitBytes?: number;
  /** An extra readiness gate, e.g. "the informer caches the lookups read have synced". */
  ready?: () => boolean;
  /** Time to receive a whole request; protects against slow clients. */
  requestTimeoutMs?: number;
  /**
   * How long an idle kept-alive connection stays open. Default 120 s: longer than the API server keeps an idle
   * connection (90 s), so it is the API server that closes one, never this server just as a call is sent on it
   * (which fails that call, and the ManagedWorkload webhook fails closed).
   */
  keepAliveTimeoutMs?: number;
  /**
   * How long close() waits for connections to go before it closes them. Default 10 s, well within the pod's
   * grace period: a connection still in its TLS handshake, or one that finished it but sent no request, is
   * neither busy nor idle to the server, and would hold close() until the pod is killed.
   */
  closeDeadlineMs?: number;
  metrics?: AdmissionMetrics;
}

/** At most one warning a minute about failed TLS handshakes: every call fails so when the caBundle is wrong. */
const handshakeWarningEveryMs = 60_000;

export interface WebhookServer {
  /** Listens on `host:port` (port 0: any free port) and resolves to the actual address. */
  listen(host: string, port: number): Promise<{ host: string; port: number }>;
  /** Ready: a serving certificate is loaded, the extra gate passes and the server is not shutting down. */
  isReady(): boolean;
  /** Stops accepting connections, lets requests in flight finish, then closes. */
  close(): Promise<void>;
}

/**
 * Large enough for any AdmissionReview the API server sends: an UPDATE carries the object and its old version,
 * each up to the API server's 3 MiB request limit (etcd keeps objects to 1.5 MiB). A tighter cap would refuse
 * big objects, and under failurePolicy Ignore they would then go through without their stamps, unreported.
 */
export const defaultBodyLimitBytes = 8 * 1024 * 1024;

/**
 * The admission server: HTTPS (HTTP/1.1 only), one POST route per registry entry, `/healthz` and `/readyz`.
 *
 * Failure handling, decided once for every handler: a handler that throws is answered as its entry's
 * failurePolicy says the API server would treat an unreachable webhook (Ignore: allowed, with a warning;
 * Fail: refused with code 500 and a message naming the webhook), and logged. The server never answers an
 * admission request with HTTP 500; 4xx is only for requests that are not AdmissionReviews at all.
 */
export function createWebhookServer(options: WebhookServerOptions): WebhookServer {
  checkRegistry(options.webhooks);
  const { logger } = options;
  const bodyLimit = options.bodyLimitBytes ?? defaultBodyLimitBytes;
  // The API server sends SNI (the Service DNS name); probes by IP get the server's default context.
  const tls = servingTls(options.certificates, logger, "webhook server");
  let closing = false;

  const app = fastify({
    https: tls.serverOptions,
    bodyLimit,
    logger: false,
    // A request that arrives on a kept-alive connection while closing is still answered: a 503 would be
    // treated per failurePolicy, i.e. a missed stamp.
    return503OnClosing: false,
    forceCloseConnections: "idle",
    requestTimeout: options.requestTimeoutMs ?? 10_000,
    keepAliveTimeout: options.keepAliveTimeoutMs ?? 120_000,
  });

  const unsubscribe = tls.follow(app.server as HttpsServer);
  const connections = trackConnections(app.server);
  let handshakeWarnedAtMs = Number.NEGATIVE_INFINITY;
  app.server.on("tlsClientError", (err: Error) => {
    options.metrics?.handshakeFailed();
    // A duration: on the monotonic clock, which a wall clock stepped back does not hold up.
    const atMs = performance.now();
    if (atMs - handshakeWarnedAtMs < handshakeWarningEveryMs) return;
    handshakeWarnedAtMs = atMs;
    logger.warn(
      { err: err.message },
      "webhook server: a TLS handshake failed (if the API server's calls fail so, the webhook configurations' " +
        "caBundle does not hold the CA of the serving certificate); warned at most once a minute",
    );
  });

  const isReady = () => tls.loaded() && !closing && (options.ready?.() ?? true);

  app.removeAllContentTypeParsers();
  app.addContentTypeParser(
    "application/json",
    { parseAs: "string", bodyLimit },
    // A `__proto__` or `constructor` key is legal in a free-form map of a valid object (CSI volumeAttributes):
    // JSON.parse makes it an own property, which nothing here merges into a prototype.
    app.getDefaultJsonParser("ignore", "ignore"),
  );
  // The API server never compresses a review; a compressed body would otherwise be refused as "not valid JSON".
  app.addHook("onRequest", async (request, reply) => {
    const encoding = request.headers["content-encoding"];
    if (request.method !== "POST" || encoding === undefined || encoding.toLowerCase() === "identity") return;
    return reply.code(415).send({
      message: `content-encoding ${JSON.stringify(encoding)} is not supported: send the AdmissionReview uncompressed`,
    });
  });
  // Answers given while closing end their connection: the API server keeps connections alive, and close()
  // would otherwise wait out the keep-alive timeout, past the pod's grace period.
  app.addHook("onSend", async (_request, reply, payload) => {
    if (closing) reply.header("connection", "close");
    return payload;
  });
  app.setErrorHandler((error: FastifyError, request, reply) => {
    const status =
      error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    const message = clientErrorMessage(error, bodyLimit, request.headers["content-type"]);
    if (status === 500) logger.error({ err: error, url: request.url }, "webhook server: unexpected error");
    reply.code(status).send({ message });
  });

  app.get("/healthz", async () => ({ status: "ok" }));
  app.get("/readyz", async (_request, reply) => {
    if (isReady()) return { status: "ready" };
    const reason = closing
      ? "shutting down"
      : tls.loaded()
        ? "dependencies not ready"
        : "no serving certificate loaded";
    return reply.code(503).send({ status: "not ready", reason });
  });

  for (const entry of options.webhooks) {
    app.post(entry.path, async (request, reply) => {
      const parsed = parseAdmissionReview(request.body);
      if ("error" in parsed) {
        return reply.code(400).send({ message: `malformed AdmissionReview: ${parsed.error}` });
      }
      const started = performance.now();
      const { decision, result } = decide(entry, parsed.request, logger);
      const durationMs = performance.now() - started;
      options.metrics?.reviewed(entry.name, result, durationMs);
      const review = admissionReview(parsed.request.uid, decision);
      if (!decision.allowed) {
        logger.info(
          {
            webhook: entry.name,
            uid: parsed.request.uid,
            namespace: parsed.request.namespace,
            name: parsed.request.name,
            message: decision.message,
            durationMs,
          },
          "webhook: refused",
        );
      }
      return reply.code(200).type("application/json").send(review);
    });
  }

  return {
    async listen(host, port) {
      await listenOnEveryFamily(host, (on) => app.listen({ host: on, port }));
      reportLaterErrors(app.server, (err) =>
        logger.error({ err }, "webhook server: cannot accept connections"),
      );
      const address = app.server.address() as AddressInfo;
      return { host: address.address, port: address.port };
    },
    isReady,
    async close() {
      closing = true;
      unsubscribe();
      const deadline = setTimeout(() => connections.destroyAll(), options.closeDeadlineMs ?? 10_000);
      deadline.unref();
      try {
        await app.close();
      } finally {
        clearTimeout(deadline);
      }
    },
  };
}

function decide(
  entry: WebhookEntry,
  request: Parameters<WebhookEntry["handle"]>[0],
  logger: Logger,
): { decision: AdmissionDecision; result: AdmissionResult } {
  try {
    const decision = entry.handle(request);
    return { decision, result: decision.allowed ? "allowed" : "refused" };
  } catch (error) {
    logger.error(
      { err: error, webhook: entry.name, uid: request.uid, namespace: request.namespace, name: request.name },
      `webhook: handler failed, answering per failurePolicy ${entry.failurePolicy}`,
    );
    if (entry.failurePolicy === "Ignore") {
      const warnings = [`napwake webhook ${entry.name} failed and let this write through`];
      return { decision: { allowed: true, warnings }, result: "failed-open" };
    }
    const message = `napwake webhook ${entry.name} failed internally: ${errorMessage(error)}. Retry; if it persists, see the napwake logs.`;
    return { decision: { allowed: false, code: 500, message }, result: "failed-closed" };
  }
}

function clientErrorMessage(error: FastifyError, bodyLimit: number, contentType: string | undefined): string {
  switch (error.code) {
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return `request body is larger than the limit of ${bodyLimit} bytes`;
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return `content-type must be application/json, got ${JSON.stringify(contentType ?? "")}`;
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return "malformed AdmissionReview: the body is empty";
    default:
      return error.statusCode === 400 ? `malformed AdmissionReview: ${error.message}` : error.message;
  }
}

function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
