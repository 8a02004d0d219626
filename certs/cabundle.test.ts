import { describe, expect, it } from "vitest";
import {
  applyCaBundles,
  type CaBundleSource,
  caBundleOf,
  caBundlePatch,
  caBundleStale,
  type JsonPatchOperation,
  publishCaBundle,
  publishedCas,
  publishRetryDelayMs,
  readWebhookConfigurations,
  trustedByEveryWebhook,
  type WebhookConfigurationLike,
  type WebhookConfigurationRef,
  type WebhookConfigurations,
} from "./cabundle.ts";

const bundle = caBundleOf("PEM");
const service = { namespace: "napwake-system", name: "napwake-webhook" };

describe("caBundleStale", () => {
  it.each<{ name: string; webhooks: WebhookConfigurationLike["webhooks"]; want: boolean }>([
    {
      name: "stale when a webhook has no caBundle",
      webhooks: [{ name: "a", clientConfig: { service } }],
      want: true,
    },
    {
      name: "stale when one of several has another CA",
      webhooks: [
        { name: "a", clientConfig: { service, caBundle: bundle } },
        { name: "b", clientConfig: { service, caBundle: caBundleOf("OLD") } },
      ],
      want: true,
    },
    {
      name: "up to date when every webhook has the CA",
      webhooks: [{ name: "a", clientConfig: { service, caBundle: bundle } }],
      want: false,
    },
    {
      name: "blind to URL webhooks, which are not ours",
      webhooks: [{ name: "u", clientConfig: { url: "https://x" } }],
      want: false,
    },
    { name: "up to date with no webhooks", webhooks: undefined, want: false },
  ])("is $name", ({ webhooks, want }) => {
    expect(caBundleStale({ webhooks }, bundle)).toBe(want);
  });
});

describe("caBundlePatch", () => {
  it("sets only the caBundle of each Service-backed webhook, each at its place, checked by name", () => {
    const config: WebhookConfigurationLike = {
      webhooks: [
        { name: "a", clientConfig: { service } },
        { name: "u", clientConfig: { url: "https://x" } },
        { name: "b", clientConfig: { service, caBundle: caBundleOf("OLD") } },
      ],
    };
    expect(caBundlePatch(config, bundle)).toEqual([
      { op: "test", path: "/webhooks/0/name", value: "a" },
      { op: "test", path: "/webhooks/0/clientConfig/service", value: service },
      { op: "add", path: "/webhooks/0/clientConfig/caBundle", value: bundle },
      { op: "test", path: "/webhooks/2/name", value: "b" },
      { op: "test", path: "/webhooks/2/clientConfig/service", value: service },
      { op: "add", path: "/webhooks/2/clientConfig/caBundle", value: bundle },
    ]);
  });

  it("drops the server-side apply record Napwake kept from releases that applied caBundle, and only that", () => {
    const config: WebhookConfigurationLike = {
      metadata: {
        managedFields: [
          { manager: "napwake", operation: "Apply" },
          { manager: "kubectl", operation: "Apply" },
          { manager: "napwake", operation: "Update" },
        ],
      },
      webhooks: [{ name: "a", clientConfig: { service } }],
    };
    expect(caBundlePatch(config, bundle).slice(3)).toEqual([
      { op: "test", path: "/metadata/managedFields/0/manager", value: "napwake" },
      { op: "test", path: "/metadata/managedFields/0/operation", value: "Apply" },
      { op: "remove", path: "/metadata/managedFields/0" },
    ]);
  });
});

const pem = (name: string) => `-----BEGIN CERTIFICATE-----\n${name}\n-----END CERTIFICATE-----`;
const webhook = (name: string, caBundle?: string) => ({ name, clientConfig: { service, caBundle } });

describe("publishedCas", () => {
  it.each<{ name: string; configs: (WebhookConfigurationLike | undefined)[]; want: string[] }>([
    {
      name: "every CA our webhooks trust, each once",
      configs: [
        {
          webhooks: [
            webhook("a", caBundleOf(`${pem("NEW")}\n${pem("OLD")}\n`)),
            webhook("b", caBundleOf(pem("NEW"))),
          ],
        },
        { webhooks: [webhook("c", caBundleOf(pem("OLDER")))] },
      ],
      want: [pem("NEW"), pem("OLD"), pem("OLDER")],
    },
    {
      name: "none from URL webhooks, which are not ours",
      configs: [
        { webhooks: [{ name: "u", clientConfig: { url: "https://x", caBundle: caBundleOf(pem("X")) } }] },
      ],
      want: [],
    },
    {
      name: "none from an empty caBundle or a missing configuration",
      configs: [{ webhooks: [webhook("a"), webhook("b", "")] }, undefined],
      want: [],
    },
  ])("lists $name", ({ configs, want }) => {
    expect(publishedCas(configs)).toEqual(want);
  });
});

describe("trustedByEveryWebhook", () => {
  const both = caBundleOf(`${pem("NEW")}\n${pem("OLD")}\n`);
  it.each<{ name: string; configs: (WebhookConfigurationLike | undefined)[]; want: string[] }>([
    {
      name: "the CAs every caBundle holds, each once",
      configs: [
        { webhooks: [webhook("a", both), webhook("b", caBundleOf(`${pem("OLD")}\n${pem("NEW")}\n`))] },
        { webhooks: [webhook("c", both)] },
      ],
      want: [pem("NEW"), pem("OLD")],
    },
    {
      name: "not a CA one configuration's caBundle lacks (its publish failed)",
      configs: [{ webhooks: [webhook("a", both)] }, { webhooks: [webhook("c", caBundleOf(pem("OLD")))] }],
      want: [pem("OLD")],
    },
    {
      name: "none when a webhook of ours has no caBundle",
      configs: [{ webhooks: [webhook("a", both), webhook("b")] }],
      want: [],
    },
    {
      name: "blind to URL webhooks and missing configurations",
      configs: [
        { webhooks: [webhook("a", both), { name: "u", clientConfig: { url: "https://x", caBundle: "" } }] },
        undefined,
      ],
      want: [pem("NEW"), pem("OLD")],
    },
    { name: "none without a webhook of ours", configs: [undefined, { webhooks: [] }], want: [] },
  ])("gives $name", ({ configs, want }) => {
    expect(trustedByEveryWebhook(configs)).toEqual(want);
  });
});

describe("publishCaBundle", () => {
  const refs: WebhookConfigurationRef[] = [
    { kind: "MutatingWebhookConfiguration", name: "napwake" },
    { kind: "ValidatingWebhookConfiguration", name: "napwake" },
  ];
  const published = "-----BEGIN CERTIFICATE-----\nPUBLISHED\n-----END CERTIFICATE-----";
  const config = { webhooks: [{ name: "a", clientConfig: { service, caBundle: caBundleOf(published) } }] };

  /**
   * Our two configurations as the API server holds them; `failReads` makes every read fail, and every apply
   * fails once `applies.failAfter` went through.
   */
  function fakeApi(failReads = false, applies = { failAfter: Number.POSITIVE_INFINITY }) {
    const calls: string[] = [];
    const patched: (readonly JsonPatchOperation[])[] = [];
    const api: WebhookConfigurations = {
      async read() {
        if (failReads) throw Object.assign(new Error("service unavailable"), { code: 503 });
        return structuredClone(config);
      },
      async patch(ref, operations) {
        if (patched.length >= applies.failAfter) {
          calls.push("apply failed");
          throw Object.assign(new Error("etcd timeout"), { code: 504 });
        }
        calls.push(`applied ${ref.kind}`);
        patched.push(operations);
      },
    };
    return { api, patched, calls };
  }

  /** A certificate manager whose refresh reads the CA Secret, or cannot (`fresh` false). */
  function source(fresh: boolean, calls: string[] = []) {
    const refreshed: (readonly string[] | undefined)[] = [];
    const s: CaBundleSource = {
      async refresh(cas) {
        refreshed.push(cas);
        return fresh;
      },
      caBundlePem: () => "NEW",
      bundlePublished: (pem) => {
        calls.push(`told ${pem} is published`);
      },
    };
    return { source: s, refreshed, calls };
  }

  it("patches a configuration whose caBundle is current when an earlier release left its apply record", async () => {
    const current = caBundleOf("NEW");
    const leftover: WebhookConfigurationLike = {
      metadata: { managedFields: [{ manager: "napwake", operation: "Apply" }] },
      webhooks: [{ name: "a", clientConfig: { service, caBundle: current } }],
    };
    const patched: (readonly JsonPatchOperation[])[] = [];
    const api: WebhookConfigurations = {
      read: async (ref) => (ref.kind === "MutatingWebhookConfiguration" ? structuredClone(leftover) : config),
      patch: async (_ref, operations) => void patched.push(operations),
    };
    const results = await applyCaBundles(api, await readWebhookConfigurations(api, refs), "NEW");
    expect(results.map((r) => r.outcome)).toEqual(["updated", "updated"]);
    expect(patched[0]).toContainEqual({ op: "remove", path: "/metadata/managedFields/0" });
    // Without a record left, a current caBundle is not written again.
    const clean = { ...leftover, metadata: {} };
    const again = await applyCaBundles(
      api,
      [{ ref: refs[0] as WebhookConfigurationRef, config: clean }],
      "NEW",
    );
    expect(again.map((r) => r.outcome)).toEqual(["unchanged"]);
  });

  it("lets the manager record the published CAs, then publishes its bundle", async () => {
    const { api, patched } = fakeApi();
    const m = source(true);
    const results = await publishCaBundle(api, refs, m.source);
    expect(m.refreshed).toEqual([[published]]);
    expect(results.map((r) => r.outcome)).toEqual(["updated", "updated"]);
    expect(patched).toHaveLength(2);
  });

  it("tells the manager its bundle is published only once both configurations hold it, so it may switch CA", async () => {
    const { api, calls } = fakeApi();
    await publishCaBundle(api, refs, source(true, calls).source);
    expect(calls).toEqual([
      "applied MutatingWebhookConfiguration",
      "applied ValidatingWebhookConfiguration",
      "told NEW is published",
    ]);
  });

  it("tells the manager nothing when an apply fails, so it keeps its CA, and tells it once a retry succeeds", async () => {
    const applies = { failAfter: 1 };
    const { api, calls } = fakeApi(false, applies);
    const m = source(true, calls);
    await expect(publishCaBundle(api, refs, m.source)).rejects.toThrow("etcd timeout");
    expect(calls).toEqual(["applied MutatingWebhookConfiguration", "apply failed"]);
    applies.failAfter = Number.POSITIVE_INFINITY;
    await publishCaBundle(api, refs, m.source);
    expect(calls.slice(2)).toEqual([
      "applied MutatingWebhookConfiguration",
      "applied ValidatingWebhookConfiguration",
      "told NEW is published",
    ]);
  });

  it("publishes nothing when the manager could not read the CA Secret: its bundle may hold a replaced CA", async () => {
    const { api, patched, calls } = fakeApi();
    const results = await publishCaBundle(api, refs, source(false, calls).source);
    expect(results.map((r) => r.outcome)).toEqual(["skipped", "skipped"]);
    expect(patched).toEqual([]);
    expect(calls).toEqual([]);
  });

  it("lets the manager follow the CA when the configurations cannot be read, then says why it published nothing", async () => {
    const { api, patched, calls } = fakeApi(true);
    const m = source(true, calls);
    await expect(publishCaBundle(api, refs, m.source)).rejects.toThrow("service unavailable");
    expect(m.refreshed).toEqual([[]]);
    expect(patched).toEqual([]);
    expect(calls).toEqual([]);
  });
});

describe("publishRetryDelayMs", () => {
  it.each<{ name: string; failures: number; want: number | undefined }>([
    { name: "leaves a reconcile that worked to the resync", failures: 0, want: undefined },
    { name: "retries a first failure after the base delay", failures: 1, want: 5_000 },
    { name: "doubles the delay at each further failure", failures: 3, want: 20_000 },
    { name: "waits no longer than the resync, which retries anyway", failures: 8, want: 300_000 },
    { name: "stays at the resync however long it keeps failing", failures: 10_000, want: 300_000 },
  ])("$name", ({ failures, want }) => {
    expect(publishRetryDelayMs(failures, 5_000, 300_000)).toBe(want);
  });
});
