import { expect, it } from "vitest";
import { systemClock } from "../../kube/clock.ts";
import { defaultConfig } from "../../rightsizing/index.ts";
import type { PrometheusClient } from "../../rightsizing/prometheus-client.ts";
import { defaultUsageSourceConfig } from "../../rightsizing/usage-source.ts";
import type { Caches } from "../caches.ts";
import { startRightsizingController } from "./controller.ts";

const empty = () => ({ cache: { list: () => [], get: () => undefined }, onChange: () => () => undefined });

it("stops at its deadline though a recommender run waits on a Prometheus that never answers", async () => {
  let asked!: () => void;
  const inFlight = new Promise<void>((resolve) => {
    asked = resolve;
  });
  // Takes the query and never answers (overloaded, or a proxy holding the connection).
  const silent: PrometheusClient = {
    query: () => {
      asked();
      return new Promise(() => undefined);
    },
    queryRange: () => new Promise(() => undefined),
  };
  const warnings: string[] = [];
  let forgotten = false;
  const controller = startRightsizingController({
    caches: {
      deployments: empty(),
      statefulSets: empty(),
      namespaces: empty(),
      rightsizingPolicies: empty(),
      rightsizings: empty(),
    } as unknown as Caches,
    prometheus: silent,
    writes: {} as never,
    events: {} as never,
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
      recommendation: () => undefined,
      forget: () => undefined,
      forgetAll: () => {
        forgotten = true;
      },
    },
    log: { info: () => undefined, warn: (_o, msg) => void warnings.push(msg), error: () => undefined },
  });
  await inFlight;
  const outcome = await Promise.race([
    controller.stop({ deadlineMs: 100 }).then(() => "stopped"),
    new Promise((resolve) => setTimeout(() => resolve("still waiting on the run"), 5_000)),
  ]);
  expect(outcome).toBe("stopped");
  expect(warnings).toEqual(["stopped with a recommender run still waiting on Prometheus; it is dropped"]);
  // No longer leading: the per-workload series are the next leader's to export.
  expect(forgotten).toBe(true);
});
