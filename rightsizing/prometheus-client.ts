// A small client for the Prometheus HTTP API (/api/v1/query_range, /api/v1/query), which Prometheus,
// VictoriaMetrics, Thanos and Mimir all serve. Queries go as POST forms (long batched selectors do not fit
// a URL). Each request has a timeout; 5xx, 429 and network errors are retried with exponential backoff and
// full jitter; a response larger than the bound is refused. Failures are values, never throws, and carry the
// query and the HTTP status. Transport, clock and randomness are injected.

export type PrometheusErrorKind =
  /** The request did not finish within the timeout. */
  | "timeout"
  /** No HTTP response: connection refused, reset, DNS. */
  | "network"
  /** An HTTP error status that is not a query error. */
  | "http"
  /** The query was refused or failed to evaluate (bad PromQL, execution error). */
  | "query"
  /** The response (or the samples the query would load) exceeds a bound: ask for less. */
  | "too-large"
  /** The body is not the JSON the API promises. */
  | "bad-response"
  /**
   * The answer came with warnings that it may be incomplete (a store or shard that did not answer): what it
   * left out would read as no usage or no activity, so it is not used, and asked again like an overloaded
   * server.
   */
  | "partial";

export type PrometheusError = {
  readonly kind: PrometheusErrorKind;
  readonly message: string;
  readonly query: string;
  readonly status?: number;
  readonly attempts: number;
};

export type PromResult<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly error: PrometheusError };

/** How long a warning may run in a message: Thanos names every store that did not answer. */
const WARNING_CHARS = 200;

/**
 * What an answer's warnings say, for a message: that it may be partial (Thanos and Mimir warn when a store or
 * a shard did not answer, and answer with what the others had). Null when there are none.
 */
export function partialAnswerNote(warnings: unknown): string | null {
  const texts = [...new Set((Array.isArray(warnings) ? warnings : []).map(String))];
  const [first] = texts;
  if (first === undefined) return null;
  const shown = first.length > WARNING_CHARS ? `${first.slice(0, WARNING_CHARS)}…` : first;
  const more = texts.length > 1 ? ` (and ${texts.length - 1} more)` : "";
  return `Prometheus warned its answer may be incomplete: ${shown}${more}`;
}

/** One series of a range query: times in epoch ms, values as numbers (NaN dropped, `+Inf` and `-Inf` kept). */
export type RangeSeries = {
  readonly metric: Readonly<Record<string, string>>;
  readonly points: readonly (readonly [t: number, value: number])[];
};

export type InstantSample = { readonly metric: Readonly<Record<string, string>>; readonly value: number };

export type PrometheusClientOptions = {
  /** Base URL of the API, e.g. http://prometheus:9090 or http://mimir/prometheus. */
  readonly url: string;
  readonly fetch?: typeof fetch;
  readonly bearerToken?: string;
  /** Sent with every request, e.g. X-Scope-OrgID for Mimir tenants. */
  readonly headers?: Readonly<Record<string, string>>;
  /** Per attempt. Default 30 s. */
  readonly timeoutMs?: number;
  /** Attempts after the first. Default 3. */
  readonly retries?: number;
  /** Backoff before retry n is random() x min(maxBackoffMs, initialBackoffMs x 2^n). */
  readonly initialBackoffMs?: number;
  readonly maxBackoffMs?: number;
  /** Largest response body accepted. Default 32 MiB. */
  readonly maxResponseBytes?: number;
  readonly random?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
};

export type PrometheusClient = {
  queryRange(
    query: string,
    range: { readonly start: number; readonly end: number; readonly stepMs: number },
  ): Promise<PromResult<RangeSeries[]>>;
  query(query: string, time?: number): Promise<PromResult<InstantSample[]>>;
};

type ApiBody = {
  status?: string;
  errorType?: string;
  error?: string;
  warnings?: unknown;
  data?: { resultType?: string; result?: unknown };
};

type Attempt =
  | { readonly ok: true; readonly body: ApiBody }
  | {
      readonly ok: false;
      readonly retry: boolean;
      readonly kind: PrometheusErrorKind;
      readonly message: string;
      readonly status?: number;
    };

// What Prometheus, Thanos and Mimir answer when a query would read or return too much.
const tooLargePattern =
  /too many samples|exceeded maximum resolution|max(imum)? number of (series|samples|points)|limit.*exceeded|exceeded.*limit/i;

const defaultSleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

export function prometheusClient(options: PrometheusClientOptions): PrometheusClient {
  const doFetch = options.fetch ?? fetch;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const retries = options.retries ?? 3;
  const initialBackoffMs = options.initialBackoffMs ?? 500;
  const maxBackoffMs = options.maxBackoffMs ?? 10_000;
  const maxResponseBytes = options.maxResponseBytes ?? 32 * 1024 * 1024;
  const random = options.random ?? Math.random;
  const sleep = options.sleep ?? defaultSleep;
  const base = options.url.replace(/\/+$/, "");
  const headers: Record<string, string> = {
    accept: "application/json",
    "content-type": "application/x-www-form-urlencoded",
    ...options.headers,
    ...(options.bearerToken ? { authorization: `Bearer ${options.bearerToken}` } : {}),
  };

  async function attempt(path: string, form: URLSearchParams): Promise<Attempt> {
    let res: Response;
    try {
      res = await doFetch(`${base}${path}`, {
        method: "POST",
        headers,
        body: form.toString(),
        signal: AbortSignal.timeout(timeoutMs),
      });
    } catch (err) {
      const timedOut = err instanceof Error && (err.name === "TimeoutError" || err.name === "AbortError");
      return timedOut
        ? { ok: false, retry: true, kind: "timeout", message: `no response within ${timeoutMs} ms` }
        : { ok: false, retry: true, kind: "network", message: describe(err) };
    }
    const text = await readBounded(res, maxResponseBytes).catch((err: unknown) => ({
      failed: describe(err),
    }));
    if (typeof text !== "string") {
      const tooLarge = text.failed.startsWith("response larger");
      return {
        ok: false,
        retry: !tooLarge,
        kind: tooLarge ? "too-large" : "network",
        message: text.failed,
        status: res.status,
      };
    }
    return interpret(res.status, text);
  }

  async function call(path: string, form: URLSearchParams, query: string): Promise<PromResult<ApiBody>> {
    for (let n = 0; ; n++) {
      const result = await attempt(path, form);
      if (result.ok) return { ok: true, value: result.body };
      if (!result.retry || n >= retries) {
        const { kind, message, status } = result;
        return {
          ok: false,
          error: { kind, message, query, attempts: n + 1, ...(status !== undefined ? { status } : {}) },
        };
      }
      await sleep(random() * Math.min(maxBackoffMs, initialBackoffMs * 2 ** n));
    }
  }

  return {
    async queryRange(query, { start, end, stepMs }) {
      const form = new URLSearchParams({
        query,
        start: String(start / 1000),
        end: String(end / 1000),
        step: String(stepMs / 1000),
      });
      const result = await call("/api/v1/query_range", form, query);
      if (!result.ok) return result;
      const parsed = parseMatrix(result.value);
      return parsed === null
        ? {
            ok: false,
            error: {
              kind: "bad-response",
              message: "expected a matrix result of [time, value] pairs",
              query,
              attempts: 1,
            },
          }
        : { ok: true, value: parsed };
    },
    async query(query, time) {
      const form = new URLSearchParams({ query });
      if (time !== undefined) form.set("time", String(time / 1000));
      const result = await call("/api/v1/query", form, query);
      if (!result.ok) return result;
      const parsed = parseVector(result.value);
      return parsed === null
        ? {
            ok: false,
            error: { kind: "bad-response", message: "expected a vector result", query, attempts: 1 },
          }
        : { ok: true, value: parsed };
    },
  };
}

function interpret(status: number, text: string): Attempt {
  let body: ApiBody | undefined;
  try {
    body = JSON.parse(text) as ApiBody;
  } catch {
    body = undefined;
  }
  if (status >= 200 && status < 300) {
    if (body?.status === "success") {
      const partial = partialAnswerNote(body.warnings);
      return partial
        ? { ok: false, retry: true, kind: "partial", message: partial, status }
        : { ok: true, body };
    }
    return { ok: false, retry: false, kind: "bad-response", message: snippet(text), status };
  }
  const message = body?.error
    ? `${body.errorType ?? "error"}: ${body.error}`
    : `HTTP ${status}: ${snippet(text)}`;
  // A rate limit ("rate limit exceeded") or an overloaded server is asked again, whatever its words; only a
  // refused query says it would read or return too much.
  if (status === 429 || status >= 500) {
    if (status !== 429 && tooLargePattern.test(message)) {
      return { ok: false, retry: false, kind: "too-large", message, status };
    }
    return { ok: false, retry: true, kind: "http", message, status };
  }
  if (tooLargePattern.test(message)) return { ok: false, retry: false, kind: "too-large", message, status };
  // 400 bad_data and 422 execution errors: the same query fails the same way again.
  const isQueryError = status === 400 || status === 422;
  return { ok: false, retry: false, kind: isQueryError ? "query" : "http", message, status };
}

async function readBounded(res: Response, maxBytes: number): Promise<string> {
  const declared = Number(res.headers.get("content-length") ?? Number.NaN);
  if (declared > maxBytes) {
    await res.body?.cancel();
    throw new Error(`response larger than ${maxBytes} bytes (content-length ${declared})`);
  }
  if (!res.body) return "";
  const reader = res.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      throw new Error(`response larger than ${maxBytes} bytes`);
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks).toString("utf8");
}

/**
 * A sample value as Prometheus writes it: a decimal, or `+Inf`, `-Inf`, `NaN` (which JavaScript's Number
 * reads as NaN for the infinities). Anything else is NaN.
 */
export function parseSampleValue(text: unknown): number {
  if (text === "+Inf" || text === "Inf") return Number.POSITIVE_INFINITY;
  if (text === "-Inf") return Number.NEGATIVE_INFINITY;
  return typeof text === "string" && text.trim() !== "" ? Number(text) : Number.NaN;
}

function parseMatrix(body: ApiBody): RangeSeries[] | null {
  if (body.data?.resultType !== "matrix" || !Array.isArray(body.data.result)) return null;
  const series: RangeSeries[] = [];
  for (const item of body.data.result as { metric?: Record<string, string>; values?: [number, string][] }[]) {
    if (!item || typeof item !== "object" || !Array.isArray(item.values)) return null;
    const points: [number, number][] = [];
    for (const point of item.values as unknown[]) {
      // Not a [time, value] pair: not the API's answer (a proxy's, another backend's), refused as a whole.
      if (!Array.isArray(point) || point.length !== 2 || !Number.isFinite(point[0])) return null;
      const [t, v] = point as [number, unknown];
      const value = parseSampleValue(v);
      if (!Number.isNaN(value)) points.push([Math.round(t * 1000), value]);
    }
    series.push({ metric: item.metric ?? {}, points });
  }
  return series;
}

function parseVector(body: ApiBody): InstantSample[] | null {
  if (body.data?.resultType !== "vector" || !Array.isArray(body.data.result)) return null;
  const samples: InstantSample[] = [];
  for (const item of body.data.result as { metric?: Record<string, string>; value?: [number, string] }[]) {
    if (!item || typeof item !== "object" || !Array.isArray(item.value)) return null;
    const value = parseSampleValue(item.value[1]);
    if (!Number.isNaN(value)) samples.push({ metric: item.metric ?? {}, value });
  }
  return samples;
}

function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const cause = (err as Error & { cause?: unknown }).cause;
  return cause instanceof Error ? `${err.message}: ${cause.message}` : err.message;
}

const snippet = (text: string): string => (text.length > 200 ? `${text.slice(0, 200)}...` : text);
