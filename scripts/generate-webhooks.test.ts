import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parseAllDocuments } from "yaml";
import { install, webhooksYaml } from "./generate-webhooks.ts";

const checkedIn = join(import.meta.dirname, "../manifests/base/webhooks.yaml");

describe("manifests/base/webhooks.yaml", () => {
  it("is exactly what the registry generates (regenerate: node scripts/generate-webhooks.ts > manifests/base/webhooks.yaml)", () => {
    expect(readFileSync(checkedIn, "utf8")).toBe(webhooksYaml());
  });

  const webhooks = parseAllDocuments(webhooksYaml()).flatMap(
    (doc) => (doc.toJS() as { webhooks: Record<string, unknown>[] }).webhooks,
  );

  it("points every webhook at our Service and leaves the caBundle to the operator or cert-manager", () => {
    for (const webhook of webhooks) {
      const clientConfig = webhook.clientConfig as { service: Record<string, unknown>; caBundle?: string };
      expect(clientConfig.service).toMatchObject({
        namespace: install.namespace,
        name: install.webhookService,
        port: 443,
      });
      expect(clientConfig.caBundle).toBeUndefined();
    }
  });

  it("never calls the webhooks for kube-system or the operator's own namespace", () => {
    for (const webhook of webhooks) {
      expect(webhook.namespaceSelector).toEqual({
        matchExpressions: [
          {
            key: "kubernetes.io/metadata.name",
            operator: "NotIn",
            values: ["kube-system", install.namespace],
          },
        ],
      });
    }
  });
});
