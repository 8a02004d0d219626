import { describe, expect, it } from "vitest";
import { checkRegistry, napwakeWebhooks, type WebhookEntry, webhookConfigurations } from "./registry.ts";
import { managedWorkloadRequest, workloadRequest } from "./test-requests.ts";

const entries = napwakeWebhooks({
  lookup: { ownerOf: () => undefined },
  operatorUsername: "op",
  now: Date.now,
});
const options = {
  name: "napwake",
  service: { namespace: "napwake-system", name: "napwake-webhook" },
  excludeNamespaces: ["napwake-system"],
};

describe("webhookConfigurations", () => {
  const { mutating, validating } = webhookConfigurations(entries, { ...options, caPem: "PEM" });

  it("puts each entry in the configuration of its kind, with the path it is served on", () => {
    expect(mutating.webhooks?.map((w) => [w.name, w.clientConfig.service?.path])).toEqual([
      ["workloads.mutate.napwake.dev", "/mutate/workloads"],
    ]);
    expect(validating.webhooks?.map((w) => [w.name, w.clientConfig.service?.path])).toEqual([
      ["workloads.validate.napwake.dev", "/validate/workloads"],
      ["namespaces.validate.napwake.dev", "/validate/namespaces"],
      ["managedworkloads.validate.napwake.dev", "/validate/managedworkloads"],
    ]);
  });

  it("fails open for workloads, closed for ManagedWorkloads, with short timeouts and no side effects", () => {
    const all = [...(mutating.webhooks ?? []), ...(validating.webhooks ?? [])];
    expect(Object.fromEntries(all.map((w) => [w.name, w.failurePolicy]))).toEqual({
      "workloads.mutate.napwake.dev": "Ignore",
      "workloads.validate.napwake.dev": "Ignore",
      "namespaces.validate.napwake.dev": "Ignore",
      "managedworkloads.validate.napwake.dev": "Fail",
    });
    for (const w of all) {
      expect(w.sideEffects).toBe("None");
      expect(w.timeoutSeconds).toBe(5);
      expect(w.admissionReviewVersions).toEqual(["v1"]);
    }
  });

  it("targets workloads' main resource only, never the scale subresource", () => {
    expect(mutating.webhooks?.[0]?.rules).toEqual([
      {
        apiGroups: ["apps"],
        apiVersions: ["v1"],
        resources: ["deployments", "statefulsets"],
        operations: ["CREATE", "UPDATE"],
        scope: "Namespaced",
      },
    ]);
  });

  it("excludes kube-system and our own namespace", () => {
    expect(mutating.webhooks?.[0]?.namespaceSelector).toEqual({
      matchExpressions: [
        { key: "kubernetes.io/metadata.name", operator: "NotIn", values: ["kube-system", "napwake-system"] },
      ],
    });
  });

  it("can be scoped to some namespaces", () => {
    const scoped = webhookConfigurations(entries, { ...options, onlyNamespaces: ["t-1"] });
    expect(scoped.validating.webhooks?.[0]?.namespaceSelector?.matchExpressions).toContainEqual({
      key: "kubernetes.io/metadata.name",
      operator: "In",
      values: ["t-1"],
    });
  });

  it("references the Service on 443 with the CA as caBundle, or leaves caBundle to the reconcile", () => {
    expect(mutating.webhooks?.[0]?.clientConfig).toEqual({
      service: { namespace: "napwake-system", name: "napwake-webhook", port: 443, path: "/mutate/workloads" },
      caBundle: Buffer.from("PEM").toString("base64"),
    });
    const withoutCa = webhookConfigurations(entries, options);
    expect(withoutCa.mutating.webhooks?.[0]?.clientConfig.caBundle).toBeUndefined();
  });

  it("only calls the workload validator for workloads with napwake metadata", () => {
    expect(validating.webhooks?.[0]?.matchConditions?.[0]?.expression).toContain("napwake.dev/");
  });
});

describe("checkRegistry", () => {
  const base = entries[0] as WebhookEntry;
  it.each([
    { name: "duplicate names", list: [base, { ...base, path: "/other" }], error: /registered twice/ },
    {
      name: "duplicate paths",
      list: [base, { ...base, name: "other.mutate.napwake.dev" }],
      error: /registered twice/,
    },
    { name: "unqualified names", list: [{ ...base, name: "workloads" }], error: /fully qualified/ },
    { name: "relative paths", list: [{ ...base, path: "mutate" }], error: /start with \// },
    { name: "long timeouts", list: [{ ...base, timeoutSeconds: 60 }], error: /timeoutSeconds/ },
  ])("refuses $name", ({ list, error }) => {
    expect(() => checkRegistry(list)).toThrow(error);
  });

  it("accepts the napwake registry", () => expect(() => checkRegistry(entries)).not.toThrow());
});

describe("the validating webhooks' clock", () => {
  const now = Date.parse("2026-11-30T18:22:00Z");
  const withClock = napwakeWebhooks({
    lookup: { ownerOf: () => undefined },
    operatorUsername: "op",
    now: () => now,
  });
  const handler = (name: string) => withClock.find((entry) => entry.name === name) as WebhookEntry;
  const future = "2026-11-30T19:00:00Z";

  it.each([
    {
      name: "workloads.validate.napwake.dev",
      request: workloadRequest({
        metadata: { name: "web", annotations: { "napwake.dev/activity": future } },
      }),
    },
    {
      name: "managedworkloads.validate.napwake.dev",
      request: managedWorkloadRequest({
        apiVersion: "napwake.dev/v1alpha1",
        kind: "ManagedWorkload",
        metadata: { name: "web.deployment", annotations: { "napwake.dev/resume-requested": future } },
        spec: { targetRef: { kind: "Deployment", name: "web" } },
      }),
    },
  ])(
    "is the one the entries were given: $name refuses a stamp 38 minutes ahead of it",
    ({ name, request }) => {
      expect(handler(name).handle(request)).toMatchObject({
        allowed: false,
        message: expect.stringMatching(
          /more than 5 minutes ahead of the cluster's clock \(2026-11-30T18:22:00Z\)/,
        ),
      });
    },
  );
});
