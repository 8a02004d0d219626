// The rightsizing controller on caches and clients made of plain data, for its unit tests.
import { systemClock } from "../../kube/clock.ts";
import { defaultConfig } from "../../rightsizing/index.ts";
import type { PrometheusClient } from "../../rightsizing/prometheus-client.ts";
import { defaultUsageSourceConfig } from "../../rightsizing/usage-source.ts";
import type { Caches } from "../caches.ts";
import { type RightsizingControllerDeps, startRightsizingController } from "./controller.ts";

/** A cache holding `objects`, told of no changes. */
export const cached = (objects: object[] = []) => ({
  cache: {
    list: () => objects,
    get: (name: string, namespace?: string) =>
      objects.find((o) => {
        const m = (o as { metadata: { name: string; namespace?: string } }).metadata;
        return m.name === name && (namespace === undefined || m.namespace === namespace);
      }),
  },
  onChange: () => () => undefined,
});

/** The controller on `workloads` (Deployments in the caches), `prometheus` and `writes`; it records what it exports. */
export function startOn(opts: {
  workloads?: object[];
  prometheus: PrometheusClient;
  writes?: RightsizingControllerDeps["writes"];
}) {
  const exported: string[] = [];
  const warnings: string[] = [];
  const controller = startRightsizingController({
    caches: {
      deployments: cached(opts.workloads),
      statefulSets: cached(),
      namespaces: cached([{ metadata: { name: "shop", labels: {} } }]),
      rightsizingPolicies: cached(),
      rightsizings: cached(),
    } as unknown as Caches,
    prometheus: opts.prometheus,
    writes: opts.writes ?? ({} as never),
    events: { action: async () => undefined } as never,
    clock: systemClock,
    settings: {
      operatorNamespace: "napwake-system",
      intervalMs: 3_600_000,
      clusterDefault: {},
      inPlaceResize: false,
      recommender: defaultConfig,
      usage: defaultUsageSourceConfig,
    },
    metrics: {
      run: () => undefined,
      recommendation: () => void exported.push("recommendation"),
      forget: () => undefined,
      forgetAll: () => void exported.push("forgetAll"),
    },
    log: { info: () => undefined, warn: (_o, msg) => void warnings.push(msg), error: () => undefined },
  });
  return { controller, exported, warnings };
}
