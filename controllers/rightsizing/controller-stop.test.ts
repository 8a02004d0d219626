import { expect, it } from "vitest";
import type { PrometheusClient } from "../../rightsizing/prometheus-client.ts";
import { startOn } from "./controller-testing.ts";

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
  const { controller, exported, warnings } = startOn({ prometheus: silent });
  await inFlight;
  const outcome = await Promise.race([
    controller.stop({ deadlineMs: 100 }).then(() => "stopped"),
    new Promise((resolve) => setTimeout(() => resolve("still waiting on the run"), 5_000)),
  ]);
  expect(outcome).toBe("stopped");
  expect(warnings).toEqual(["stopped with a recommender run still waiting on Prometheus; it is dropped"]);
  // No longer leading: the per-workload series are the next leader's to export.
  expect(exported).toEqual(["forgetAll"]);
});

it("exports no per-workload series once stopped, even from a reconcile whose write outlives the stop", async () => {
  let release!: () => void;
  const slowWrite = new Promise<void>((resolve) => {
    release = resolve;
  });
  let creating!: () => void;
  const created = new Promise<void>((resolve) => {
    creating = resolve;
  });
  const down = {
    ok: false as const,
    error: { kind: "network" as const, message: "down", query: "", attempts: 1 },
  };
  const { controller, exported } = startOn({
    workloads: [
      {
        metadata: { name: "web", namespace: "shop", uid: "u1" },
        spec: { replicas: 1, template: { spec: { containers: [{ name: "app" }] } } },
      },
    ],
    prometheus: { query: async () => down, queryRange: async () => down },
    writes: {
      create: async () => {
        creating();
        await slowWrite;
        return {
          apiVersion: "napwake.dev/v1alpha1",
          kind: "Rightsizing",
          metadata: {
            name: "web.deployment",
            namespace: "shop",
            uid: "r1",
            resourceVersion: "1",
            generation: 1,
          },
          spec: { targetRef: { kind: "Deployment", name: "web" } },
        };
      },
      writeStatus: async () => "2",
    } as never,
  });
  await created;
  // The queue gives up on the reconcile after its settle time; the write it waits on finishes after that.
  await controller.stop({ deadlineMs: 50 });
  release();
  await new Promise((resolve) => setTimeout(resolve, 200));
  expect(exported).toEqual(["forgetAll"]);
}, 20_000);
