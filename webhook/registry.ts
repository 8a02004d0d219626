import type {
  V1LabelSelector,
  V1MatchCondition,
  V1MutatingWebhook,
  V1MutatingWebhookConfiguration,
  V1RuleWithOperations,
  V1ValidatingWebhook,
  V1ValidatingWebhookConfiguration,
} from "@kubernetes/client-node";
import { group, version } from "../api/keys.ts";
import type { AdmissionDecision, AdmissionRequest } from "./admission.ts";
import { specTargetRef, type TargetOf, validateManagedWorkload } from "./managedworkloads.ts";
import { validateNamespace } from "./namespaces.ts";
import { type OwnerLookup, stampWorkload, validateWorkload } from "./workloads.ts";

/**
 * The one registry of admission handlers. The server routes from it and `webhookConfigurations` generates
 * the Mutating/ValidatingWebhookConfiguration from it, so the manifests and the server never disagree.
 */
export interface WebhookEntry {
  /** Fully qualified webhook name, unique in its configuration: `<what>.<verb>.napwake.dev`. */
  name: string;
  /** The HTTPS path the server serves it on. */
  path: string;
  kind: "mutating" | "validating";
  rules: V1RuleWithOperations[];
  /**
   * What the API server does when it cannot get an answer. The server answers a handler exception the same
   * way (Ignore: allowed with a warning; Fail: refused with code 500), instead of an HTTP 500.
   */
  failurePolicy: "Ignore" | "Fail";
  timeoutSeconds: number;
  matchConditions?: V1MatchCondition[];
  handle(request: AdmissionRequest): AdmissionDecision;
}

export interface NapwakeWebhookDeps {
  lookup: OwnerLookup;
  operatorUsername: string;
  targetOf?: TargetOf;
  /** The cluster's time in ms, which stamps in annotations are checked against. */
  now: () => number;
}

const workloadRules: V1RuleWithOperations[] = [
  {
    apiGroups: ["apps"],
    apiVersions: ["v1"],
    resources: ["deployments", "statefulsets"],
    operations: ["CREATE", "UPDATE"],
    scope: "Namespaced",
  },
];

// Only workloads carrying napwake metadata need validating; the API server skips the call for the rest.
const hasNapwakeMetadata: V1MatchCondition = {
  name: "has-napwake-metadata",
  expression:
    "(has(object.metadata.annotations) && object.metadata.annotations.exists(k, k.startsWith('napwake.dev/'))) || " +
    "(has(object.metadata.labels) && object.metadata.labels.exists(k, k.startsWith('napwake.dev/')))",
};

export function napwakeWebhooks(deps: NapwakeWebhookDeps): WebhookEntry[] {
  const targetOf = deps.targetOf ?? specTargetRef;
  return [
    {
      name: "workloads.mutate.napwake.dev",
      path: "/mutate/workloads",
      kind: "mutating",
      rules: workloadRules,
      failurePolicy: "Ignore",
      timeoutSeconds: 5,
      handle: (request) => stampWorkload(request, deps.lookup, { operatorUsername: deps.operatorUsername }),
    },
    {
      name: "workloads.validate.napwake.dev",
      path: "/validate/workloads",
      kind: "validating",
      rules: workloadRules,
      failurePolicy: "Ignore",
      timeoutSeconds: 5,
      matchConditions: [hasNapwakeMetadata],
      handle: (request) => validateWorkload(request, deps.now()),
    },
    {
      name: "namespaces.validate.napwake.dev",
      path: "/validate/namespaces",
      kind: "validating",
      rules: [
        {
          apiGroups: [""],
          apiVersions: ["v1"],
          resources: ["namespaces"],
          operations: ["CREATE", "UPDATE"],
          scope: "Cluster",
        },
      ],
      // As for workloads: a Namespace write never waits on Napwake being up.
      failurePolicy: "Ignore",
      timeoutSeconds: 5,
      matchConditions: [hasNapwakeMetadata],
      handle: validateNamespace,
    },
    {
      name: "managedworkloads.validate.napwake.dev",
      path: "/validate/managedworkloads",
      kind: "validating",
      rules: [
        {
          apiGroups: [group],
          apiVersions: [version],
          resources: ["managedworkloads"],
          operations: ["CREATE", "UPDATE"],
          scope: "Namespaced",
        },
      ],
      // Our own objects: a second owner would corrupt state, and no workload write depends on this call.
      failurePolicy: "Fail",
      timeoutSeconds: 5,
      handle: (request) => validateManagedWorkload(request, deps.lookup, targetOf, deps.now()),
    },
  ];
}

export interface ConfigurationOptions {
  /** metadata.name of both configurations. */
  name: string;
  /** The Service in front of every replica's webhook server. */
  service: { namespace: string; name: string; port?: number };
  /** PEM of the CA that signs the serving certificates. Left out: the caBundle reconcile injects it. */
  caPem?: string;
  /** Never call the webhooks for these namespaces (kube-system is always added). Put our own namespace here. */
  excludeNamespaces: readonly string[];
  /** Only call them for these namespaces (tests scope the webhooks to their own namespace). */
  onlyNamespaces?: readonly string[];
  labels?: Record<string, string>;
}

export const namespaceNameLabel = "kubernetes.io/metadata.name";

/** The webhook configurations for `entries`: pure, so the manifests are generated from the same registry. */
export function webhookConfigurations(
  entries: readonly WebhookEntry[],
  options: ConfigurationOptions,
): { mutating: V1MutatingWebhookConfiguration; validating: V1ValidatingWebhookConfiguration } {
  checkRegistry(entries);
  const metadata = { name: options.name, ...(options.labels ? { labels: options.labels } : {}) };
  const webhook = (entry: WebhookEntry): V1ValidatingWebhook => ({
    name: entry.name,
    clientConfig: {
      service: {
        namespace: options.service.namespace,
        name: options.service.name,
        port: options.service.port ?? 443,
        path: entry.path,
      },
      ...(options.caPem ? { caBundle: Buffer.from(options.caPem).toString("base64") } : {}),
    },
    rules: entry.rules,
    failurePolicy: entry.failurePolicy,
    matchPolicy: "Equivalent",
    namespaceSelector: namespaceSelector(options),
    sideEffects: "None",
    timeoutSeconds: entry.timeoutSeconds,
    admissionReviewVersions: ["v1"],
    ...(entry.matchConditions ? { matchConditions: entry.matchConditions } : {}),
  });
  return {
    mutating: {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "MutatingWebhookConfiguration",
      metadata,
      webhooks: entries
        .filter((e) => e.kind === "mutating")
        .map((e): V1MutatingWebhook => ({ ...webhook(e), reinvocationPolicy: "Never" })),
    },
    validating: {
      apiVersion: "admissionregistration.k8s.io/v1",
      kind: "ValidatingWebhookConfiguration",
      metadata,
      webhooks: entries.filter((e) => e.kind === "validating").map(webhook),
    },
  };
}

export function namespaceSelector(
  options: Pick<ConfigurationOptions, "excludeNamespaces" | "onlyNamespaces">,
) {
  const excluded = [...new Set(["kube-system", ...options.excludeNamespaces])];
  const selector: V1LabelSelector = {
    matchExpressions: [{ key: namespaceNameLabel, operator: "NotIn", values: excluded }],
  };
  if (options.onlyNamespaces) {
    selector.matchExpressions?.push({
      key: namespaceNameLabel,
      operator: "In",
      values: [...options.onlyNamespaces],
    });
  }
  return selector;
}

/** Throws on a registry the API server or the router would reject: duplicate names or paths, bad names. */
export function checkRegistry(entries: readonly WebhookEntry[]): void {
  const names = new Set<string>();
  const paths = new Set<string>();
  for (const entry of entries) {
    if (names.has(entry.name)) throw new Error(`webhook name ${entry.name} is registered twice`);
    if (paths.has(entry.path)) throw new Error(`webhook path ${entry.path} is registered twice`);
    if (entry.name.split(".").length < 3) {
      throw new Error(`webhook name ${entry.name} must be fully qualified, like what.verb.napwake.dev`);
    }
    if (!entry.path.startsWith("/")) throw new Error(`webhook path ${entry.path} must start with /`);
    if (entry.timeoutSeconds < 1 || entry.timeoutSeconds > 30) {
      throw new Error(`webhook ${entry.name}: timeoutSeconds must be between 1 and 30`);
    }
    names.add(entry.name);
    paths.add(entry.path);
  }
}
