import { describe, expect, it } from "vitest";
import type { PrometheusClientOptions } from "./prometheus-client.ts";
import { prometheusClient } from "./prometheus-client.ts";

const matrix = JSON.stringify({
  status: "success",
  data: {
    resultType: "matrix",
    result: [
      {
        metric: { pod: "a" },
        values: [
          [1700000000, "0.5"],
          [1700000300, "NaN"],
        ],
      },
    ],
  },
});

type Reply = { status: number; body: string } | Error;

function scripted(replies: Reply[]) {
  const requests: { url: string; init: RequestInit | undefined }[] = [];
  const sleeps: number[] = [];
  const options: PrometheusClientOptions = {
    url: "http://prom:9090/",
    fetch: async (url, init) => {
      requests.push({ url: String(url), init });
      const reply = replies.shift() ?? new Error("no more replies");
      if (reply instanceof Error) throw reply;
      return new Response(reply.body, { status: reply.status });
    },
    random: () => 0.5,
    sleep: async (ms) => {
      sleeps.push(ms);
    },
    retries: 2,
    initialBackoffMs: 100,
  };
  return { options, requests, sleeps };
}

const range = { start: 1_700_000_000_000, end: 1_700_000_300_000, stepMs: 300_000 };

describe("prometheusClient", () => {
  it("posts the query range as a form and parses the matrix, dropping NaN", async () => {
    const { options, requests } = scripted([{ status: 200, body: matrix }]);
    const result = await prometheusClient({
      ...options,
      bearerToken: "t0k",
      headers: { "X-Scope-OrgID": "eu" },
    }).queryRange("up", range);
    expect(result).toEqual({
      ok: true,
      value: [{ metric: { pod: "a" }, points: [[1_700_000_000_000, 0.5]] }],
    });
    expect(requests[0]?.url).toBe("http://prom:9090/api/v1/query_range");
    expect(String(requests[0]?.init?.body)).toBe("query=up&start=1700000000&end=1700000300&step=300");
    expect(requests[0]?.init?.headers).toMatchObject({ authorization: "Bearer t0k", "X-Scope-OrgID": "eu" });
  });

  it("keeps +Inf and -Inf as infinities: only NaN is no value", async () => {
    const infinite = JSON.stringify({
      status: "success",
      data: {
        resultType: "matrix",
        result: [
          {
            metric: {},
            values: [
              [1700000000, "+Inf"],
              [1700000300, "-Inf"],
              [1700000600, "NaN"],
            ],
          },
        ],
      },
    });
    const { options } = scripted([{ status: 200, body: infinite }]);
    const result = await prometheusClient(options).queryRange("sum(queue) / sum(replicas)", range);
    expect(result.ok && result.value[0]?.points).toEqual([
      [1_700_000_000_000, Number.POSITIVE_INFINITY],
      [1_700_000_300_000, Number.NEGATIVE_INFINITY],
    ]);
  });

  it.each<[string, Reply[], number, number[]]>([
    [
      "retries a 503 with growing, jittered backoff",
      [
        { status: 503, body: "busy" },
        { status: 503, body: "busy" },
        { status: 200, body: matrix },
      ],
      3,
      [50, 100],
    ],
    ["retries a network error", [new TypeError("fetch failed"), { status: 200, body: matrix }], 2, [50]],
    [
      "retries an answer Prometheus warned may be incomplete (a store or shard did not answer)",
      [
        {
          status: 200,
          body: JSON.stringify({ ...JSON.parse(matrix), warnings: ["store eu-2 did not reply"] }),
        },
        { status: 200, body: matrix },
      ],
      2,
      [50],
    ],
    [
      "retries a 429",
      [
        { status: 429, body: "slow down" },
        { status: 200, body: matrix },
      ],
      2,
      [50],
    ],
    [
      "retries a 429 whose words name a limit (a rate limit is not a query too large)",
      [
        { status: 429, body: "Rate limit exceeded" },
        { status: 200, body: matrix },
      ],
      2,
      [50],
    ],
  ])("%s", async (_, replies, attempts, sleeps) => {
    const script = scripted(replies);
    const result = await prometheusClient(script.options).queryRange("up", range);
    expect(result.ok).toBe(true);
    expect(script.requests).toHaveLength(attempts);
    expect(script.sleeps).toEqual(sleeps);
  });

  it.each<[string, Reply[], string, number | undefined, number]>([
    [
      "gives up after the retries, with the status",
      [503, 503, 503].map((status) => ({ status, body: "down" })),
      "http",
      503,
      3,
    ],
    [
      "does not retry a bad query",
      [
        {
          status: 400,
          body: JSON.stringify({ status: "error", errorType: "bad_data", error: "parse error" }),
        },
      ],
      "query",
      400,
      1,
    ],
    [
      "reports a query that loads too many samples as too large",
      [
        {
          status: 422,
          body: JSON.stringify({
            status: "error",
            errorType: "execution",
            error: "query processing would load too many samples into memory",
          }),
        },
      ],
      "too-large",
      422,
      1,
    ],
    [
      "reports a network failure after the retries",
      [1, 2, 3].map(() => new TypeError("fetch failed")),
      "network",
      undefined,
      3,
    ],
    ["refuses a body that is not the API's JSON", [{ status: 200, body: "<html>" }], "bad-response", 200, 1],
    ...[null, [1], ["noon", "1"], 7].map((point): [string, Reply[], string, number | undefined, number] => [
      `refuses a matrix whose point ${JSON.stringify(point)} is not a [time, value] pair, without throwing`,
      [
        {
          status: 200,
          body: JSON.stringify({
            status: "success",
            data: { resultType: "matrix", result: [{ metric: {}, values: [[1, "1"], point] }] },
          }),
        },
      ],
      "bad-response",
      undefined,
      1,
    ]),
    [
      "gives up on an answer still partial after the retries, rather than read what it left out as zero",
      [1, 2, 3].map(() => ({
        status: 200,
        body: JSON.stringify({ ...JSON.parse(matrix), warnings: ["store eu-2 did not reply"] }),
      })),
      "partial",
      200,
      3,
    ],
  ])("%s", async (_, replies, kind, status, attempts) => {
    const script = scripted(replies);
    const result = await prometheusClient(script.options).queryRange("sum(up)", range);
    expect(result.ok).toBe(false);
    if (result.ok) return;
    expect(result.error).toMatchObject({ kind, query: "sum(up)", attempts });
    expect(result.error.status).toBe(status);
  });

  it("says what Prometheus warned of in a partial answer", async () => {
    const warned = JSON.stringify({
      ...JSON.parse(matrix),
      warnings: ["store eu-2 did not reply", "shard 3"],
    });
    const script = scripted([{ status: 200, body: warned }]);
    const result = await prometheusClient({ ...script.options, retries: 0 }).queryRange("up", range);
    expect(result.ok === false && result.error.message).toBe(
      "Prometheus warned its answer may be incomplete: store eu-2 did not reply (and 1 more)",
    );
  });

  it("refuses a response larger than the bound without retrying", async () => {
    const script = scripted([{ status: 200, body: matrix }]);
    const result = await prometheusClient({ ...script.options, maxResponseBytes: 16 }).queryRange(
      "up",
      range,
    );
    expect(result.ok === false && result.error.kind).toBe("too-large");
    expect(script.requests).toHaveLength(1);
  });

  it("times out a request that does not answer", async () => {
    const result = await prometheusClient({
      url: "http://prom",
      timeoutMs: 20,
      retries: 0,
      fetch: (_url, init) =>
        new Promise((_, reject) =>
          init?.signal?.addEventListener("abort", () => reject(init.signal?.reason)),
        ),
    }).query("up");
    expect(result.ok === false && result.error.kind).toBe("timeout");
  });

  it("parses an instant vector", async () => {
    const body = JSON.stringify({
      status: "success",
      data: { resultType: "vector", result: [{ metric: {}, value: [1, "3"] }] },
    });
    const script = scripted([{ status: 200, body }]);
    expect(await prometheusClient(script.options).query("count(up)", 1_000)).toEqual({
      ok: true,
      value: [{ metric: {}, value: 3 }],
    });
    expect(String(script.requests[0]?.init?.body)).toBe("query=count%28up%29&time=1");
  });
});
