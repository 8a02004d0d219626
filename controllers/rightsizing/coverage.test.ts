import { describe, expect, it } from "vitest";
import { annotations } from "../../api/keys.ts";
import { type CoverageInput, coverage, type Workload } from "./coverage.ts";

const ready = { metricsSourceHealthy: true, enoughHistory: true, inPlaceResizeAvailable: true };
function input(namespace: string, workloadAnnotations: Record<string, string> = {}): CoverageInput {
  const workload: Workload = {
    metadata: { name: "web", namespace, uid: "u1", annotations: workloadAnnotations },
    spec: {
      replicas: 3,
      selector: {},
      template: {
        spec: {
          containers: [
            {
              name: "app",
              resources: { requests: { cpu: "250m", memory: "128Mi" }, limits: { memory: "1Gi" } },
            },
            { name: "sidecar" },
          ],
        },
      },
    },
  };
  return {
    workload,
    kind: "Deployment",
    namespaceLabels: { "kubernetes.io/metadata.name": namespace },
    policies: [],
    clusterDefault: {},
    operatorNamespace: "napwake-system",
    readiness: ready,
  };
}

describe("which workloads rightsizing covers", () => {
  it.each([
    { what: "a workload at the global default (audit) is covered", input: input("shop"), covered: true },
    { what: "kube-system is never covered", input: input("kube-system"), covered: false },
    { what: "Napwake's own namespace is never covered", input: input("napwake-system"), covered: false },
    {
      what: "off for both resources by annotation is not covered",
      input: input("shop", { [annotations.cpuMode]: "off", [annotations.memoryMode]: "off" }),
      covered: false,
    },
    {
      what: "off for one resource only is still covered",
      input: input("shop", { [annotations.cpuMode]: "off" }),
      covered: true,
    },
    {
      what: "a cluster default of off is not covered",
      input: { ...input("shop"), clusterDefault: { cpu: "off", memory: "off" } },
      covered: false,
    },
  ] as const)("$what", ({ input: i, covered }) => {
    expect("covered" in coverage(i)).toBe(covered);
  });

  it("reads each container's requests and memory limit, leaving out what is not set", () => {
    const result = coverage(input("shop"));
    if (!("covered" in result)) throw new Error(result.notCovered);
    expect(result.covered).toMatchObject({ kind: "Deployment", namespace: "shop", name: "web", replicas: 3 });
    expect(result.covered.containers).toEqual([
      { name: "app", cpuRequestCores: 0.25, memoryRequestBytes: 128 * 2 ** 20, memoryLimitBytes: 2 ** 30 },
      { name: "sidecar" },
    ]);
  });

  it("reads native sidecars (init containers that keep running) and leaves out init containers that finish", () => {
    const i = input("shop");
    const spec = i.workload.spec?.template.spec;
    if (spec) {
      spec.containers = [{ name: "app" }];
      spec.initContainers = [{ name: "migrate" }, { name: "proxy", restartPolicy: "Always" }];
    }
    const result = coverage(i);
    if (!("covered" in result)) throw new Error(result.notCovered);
    expect(result.covered.containers.map((c) => c.name)).toEqual(["app", "proxy"]);
  });

  it("takes a request left out as its limit, as the API server sets it on the pods", () => {
    const i = input("shop");
    const spec = i.workload.spec?.template.spec;
    if (spec) spec.containers = [{ name: "app", resources: { limits: { cpu: "2", memory: "2Gi" } } }];
    const result = coverage(i);
    if (!("covered" in result)) throw new Error(result.notCovered);
    expect(result.covered.containers).toEqual([
      {
        name: "app",
        cpuRequestCores: 2,
        cpuLimitCores: 2,
        memoryRequestBytes: 2 * 2 ** 30,
        memoryLimitBytes: 2 * 2 ** 30,
      },
    ]);
  });
});
