import { expect, it } from "vitest";
import type { RightsizingStatus } from "../../api/rightsizing.ts";
import type { PrometheusClient } from "../../rightsizing/prometheus-client.ts";
import { deploymentPodName } from "../../rightsizing/testing.ts";
import { defaultUsageSourceConfig } from "../../rightsizing/usage-source.ts";
import { startOn } from "./controller-testing.ts";

const deployment = (name: string, annotations: Record<string, string> = {}) => ({
  metadata: { name, namespace: "shop", uid: name, annotations },
  spec: {
    replicas: 1,
    template: {
      spec: { containers: [{ name: "app", resources: { requests: { cpu: "100m", memory: "128Mi" } } }] },
    },
  },
});

it("learns nothing for a covered Deployment from pods a namesake with rightsizing off could have", async () => {
  // Both cut by the API server to `<57 a>-` and five random characters; only the off one's pod has usage.
  const covered = "a".repeat(57);
  const off = `${"a".repeat(57)}-x`;
  const prometheus: PrometheusClient = {
    query: async () => ({ ok: true, value: [] }),
    queryRange: async (query, range) => {
      if (!/cpu_usage|working_set/.test(query)) return { ok: true, value: [] };
      const points: [number, number][] = [];
      for (let t = range.start; t <= range.end; t += defaultUsageSourceConfig.stepMs) {
        points.push([t, query.includes("working_set") ? 4 * 2 ** 30 : 3]);
      }
      const metric = { namespace: "shop", pod: deploymentPodName(off), container: "app" };
      return { ok: true, value: [{ metric, points }] };
    },
  };
  const statuses = new Map<string, RightsizingStatus>();
  const { controller } = startOn({
    workloads: [
      deployment(covered),
      deployment(off, { "napwake.dev/cpu-mode": "off", "napwake.dev/memory-mode": "off" }),
    ],
    prometheus,
    writes: {
      create: async (w: { name: string }) => ({
        apiVersion: "napwake.dev/v1alpha1",
        kind: "Rightsizing",
        metadata: { name: w.name, namespace: "shop", uid: w.name, resourceVersion: "1", generation: 1 },
        spec: {},
      }),
      writeStatus: async (o: { metadata: { name: string } }, status: RightsizingStatus) => {
        statuses.set(o.metadata.name, status);
        return "2";
      },
      writePolicyStatus: async () => "1",
      remove: async () => undefined,
    } as never,
  });
  await controller.runNow();
  for (let i = 0; i < 50 && !statuses.has(covered); i++) await new Promise((r) => setTimeout(r, 20));
  await controller.stop({ deadlineMs: 100 });
  const status = statuses.get(covered);
  expect(status?.containers?.[0]?.name).toBe("app");
  expect(status?.containers?.[0]?.target).toBeUndefined();
  expect(status?.conditions?.find((c) => c.type === "RecommendationReady")?.message).toContain(
    `shop/Deployment/${off}`,
  );
  expect(statuses.has(off)).toBe(false);
}, 20_000);
