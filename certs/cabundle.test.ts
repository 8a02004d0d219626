import type { KubernetesObject, KubernetesObjectApi } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import {
  type CaBundleSource,
  caBundleApply,
  caBundleOf,
  caBundleUpdate,
  publishCaBundle,
  publishedCas,
  type WebhookConfigurationLike,
  type WebhookConfigurationRef,
} from "./cabundle.ts";

const bundle = caBundleOf("PEM");
const service = { namespace: "napwake-system", name: "napwake-webhook" };

describe("caBundleUpdate", () => {
  it.each<{ name: string; webhooks: WebhookConfigurationLike["webhooks"]; want: object }>([
    {
      name: "stale when a webhook has no caBundle",
      webhooks: [{ name: "a", clientConfig: { service } }],
      want: { webhooks: ["a"], stale: true },
    },
    {
      name: "stale when one of several has another CA",
      webhooks: [
        { name: "a", clientConfig: { service, caBundle: bundle } },
        { name: "b", clientConfig: { service, caBundle: caBundleOf("OLD") } },
      ],
      want: { webhooks: ["a", "b"], stale: true },
    },
    {
      name: "up to date when every webhook has the CA",
      webhooks: [{ name: "a", clientConfig: { service, caBundle: bundle } }],
      want: { webhooks: ["a"], stale: false },
    },
    {
      name: "blind to URL webhooks, which are not ours",
      webhooks: [{ name: "u", clientConfig: { url: "https://x" } }],
      want: { webhooks: [], stale: false },
    },
    { name: "up to date with no webhooks", webhooks: undefined, want: { webhooks: [], stale: false } },
  ])("is $name", ({ webhooks, want }) => {
    expect(caBundleUpdate({ webhooks }, bundle)).toEqual(want);
  });
});

it("applies only the caBundle of each webhook", () => {
  expect(
    caBundleApply({ kind: "MutatingWebhookConfiguration", name: "napwake" }, ["a", "b"], bundle),
  ).toEqual({
    apiVersion: "admissionregistration.k8s.io/v1",
    kind: "MutatingWebhookConfiguration",
    metadata: { name: "napwake" },
    webhooks: [
      { name: "a", clientConfig: { caBundle: bundle } },
      { name: "b", clientConfig: { caBundle: bundle } },
    ],
  });
});

describe("publishedCas", () => {
  const pem = (name: string) => `-----BEGIN CERTIFICATE-----\n${name}\n-----END CERTIFICATE-----`;
  const webhook = (name: string, caBundle?: string) => ({ name, clientConfig: { service, caBundle } });
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

describe("publishCaBundle", () => {
  const refs: WebhookConfigurationRef[] = [
    { kind: "MutatingWebhookConfiguration", name: "napwake" },
    { kind: "ValidatingWebhookConfiguration", name: "napwake" },
  ];
  const published = "-----BEGIN CERTIFICATE-----\nPUBLISHED\n-----END CERTIFICATE-----";
  const config = { webhooks: [{ name: "a", clientConfig: { service, caBundle: caBundleOf(published) } }] };

  /** Our two configurations as the API server holds them; `failReads` makes every read fail. */
  function fakeApi(failReads = false) {
    const patched: KubernetesObject[] = [];
    const api = {
      async read() {
        if (failReads) throw Object.assign(new Error("service unavailable"), { code: 503 });
        return structuredClone(config);
      },
      async patch(object: KubernetesObject) {
        patched.push(object);
        return object;
      },
    } as unknown as KubernetesObjectApi;
    return { api, patched };
  }

  /** A certificate manager whose refresh reads the CA Secret, or cannot (`fresh` false). */
  function source(fresh: boolean) {
    const refreshed: (readonly string[] | undefined)[] = [];
    const s: CaBundleSource = {
      async refresh(cas) {
        refreshed.push(cas);
        return fresh;
      },
      caBundlePem: () => "NEW",
    };
    return { source: s, refreshed };
  }

  it("lets the manager record the published CAs, then publishes its bundle", async () => {
    const { api, patched } = fakeApi();
    const m = source(true);
    const results = await publishCaBundle(api, refs, m.source);
    expect(m.refreshed).toEqual([[published]]);
    expect(results.map((r) => r.outcome)).toEqual(["updated", "updated"]);
    expect(patched).toHaveLength(2);
  });

  it("publishes nothing when the manager could not read the CA Secret: its bundle may hold a replaced CA", async () => {
    const { api, patched } = fakeApi();
    const results = await publishCaBundle(api, refs, source(false).source);
    expect(results.map((r) => r.outcome)).toEqual(["skipped", "skipped"]);
    expect(patched).toEqual([]);
  });

  it("lets the manager follow the CA when the configurations cannot be read, then says why it published nothing", async () => {
    const { api, patched } = fakeApi(true);
    const m = source(true);
    await expect(publishCaBundle(api, refs, m.source)).rejects.toThrow("service unavailable");
    expect(m.refreshed).toEqual([[]]);
    expect(patched).toEqual([]);
  });
});
