import { describe, expect, it } from "vitest";
import {
  caBundleApply,
  caBundleOf,
  caBundleUpdate,
  publishedCas,
  type WebhookConfigurationLike,
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
