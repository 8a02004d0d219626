import { describe, expect, it } from "vitest";
import type { ClusterPki } from "./cluster-pki.ts";
import {
  apiServerCommand,
  type ComponentInputs,
  controllerManagerCommand,
  etcdCommand,
  kwokCommand,
  metricsServerCommand,
  schedulerCommand,
} from "./components.ts";
import { clusterPaths, network } from "./layout.ts";

const pkiFile = (name: string) => `/state/pki/${name}`;
const inputs: ComponentInputs = {
  binDir: "/bin-cache",
  paths: clusterPaths("/state"),
  pki: new Proxy({} as ClusterPki, {
    get: (_, key) =>
      key === "clients"
        ? new Proxy(
            {},
            { get: (_, c) => ({ cert: pkiFile(`${String(c)}.crt`), key: pkiFile(`${String(c)}.key`) }) },
          )
        : pkiFile(String(key)),
  }),
  kubeconfigs: {
    admin: "/state/kubeconfig",
    controllerManager: "/state/cm.kubeconfig",
    scheduler: "/state/sched.kubeconfig",
    kwok: "/state/kwok.kubeconfig",
    metricsServer: "/state/ms.kubeconfig",
  },
};

const flag = (args: string[], name: string) =>
  args
    .find((a) => a.startsWith(`--${name}=`))
    ?.split("=")
    .slice(1)
    .join("=");

describe("component command lines", () => {
  it.each([
    etcdCommand,
    apiServerCommand,
    controllerManagerCommand,
    schedulerCommand,
    kwokCommand,
    metricsServerCommand,
  ])("%o runs a binary from the build cache", (make) => {
    expect(make(inputs).command.startsWith("/bin-cache/")).toBe(true);
  });

  it("advertises the API server on a non-loopback address, which EndpointSlices accept", () => {
    const advertise = flag(apiServerCommand(inputs).args, "advertise-address");
    expect(advertise).toBe(network.apiServerIp);
    expect(advertise?.startsWith("127.")).toBe(false);
  });

  it("dials webhooks and APIServices at their endpoints, since there is no kube-proxy", () => {
    expect(flag(apiServerCommand(inputs).args, "enable-aggregator-routing")).toBe("true");
  });

  it("hands out pod IPs from the locally routed test range, not from node podCIDRs", () => {
    expect(flag(kwokCommand(inputs).args, "cidr")).toBe("198.18.0.0/16");
    expect(flag(controllerManagerCommand(inputs).args, "allocate-node-cidrs")).toBe("false");
  });

  it("keeps metrics-server's resolution above its kubelet timeout, as it requires", () => {
    expect(flag(metricsServerCommand(inputs).args, "metric-resolution")).toBe("15s");
  });
});
