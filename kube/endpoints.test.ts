import type { V1EndpointSlice, V1Service } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { readyEndpoints } from "./endpoints.ts";

const service: V1Service = {
  metadata: { name: "web", namespace: "shop" },
  spec: {
    ports: [
      { name: "http", port: 80 },
      { name: "metrics", port: 9000 },
    ],
  },
};

function slice(
  name: string,
  endpoints: { ip: string; ready?: boolean; pod?: string }[],
  opts: { service?: string; ports?: { name: string; port: number }[]; addressType?: string } = {},
): V1EndpointSlice {
  return {
    metadata: { name, labels: { "kubernetes.io/service-name": opts.service ?? "web" } },
    addressType: opts.addressType ?? "IPv4",
    ports: opts.ports ?? [
      { name: "http", port: 8080 },
      { name: "metrics", port: 9090 },
    ],
    endpoints: endpoints.map((e) => ({
      addresses: [e.ip],
      ...(e.ready === undefined ? {} : { conditions: { ready: e.ready } }),
      ...(e.pod ? { targetRef: { kind: "Pod", name: e.pod } } : {}),
    })),
  };
}

describe("readyEndpoints", () => {
  it.each([
    {
      name: "maps the Service port to the slice's target port",
      slices: [slice("a", [{ ip: "198.18.0.1", ready: true, pod: "web-1" }])],
      port: 80,
      want: [{ ip: "198.18.0.1", port: 8080, pod: "web-1" }],
    },
    {
      name: "finds a port by its name",
      slices: [slice("a", [{ ip: "198.18.0.1", ready: true }])],
      port: "metrics",
      want: [{ ip: "198.18.0.1", port: 9090 }],
    },
    {
      name: "skips endpoints that are not ready",
      slices: [
        slice("a", [
          { ip: "198.18.0.1", ready: false },
          { ip: "198.18.0.2", ready: true },
        ]),
      ],
      port: 80,
      want: [{ ip: "198.18.0.2", port: 8080 }],
    },
    {
      name: "treats an unknown ready condition as ready",
      slices: [slice("a", [{ ip: "198.18.0.3" }])],
      port: 80,
      want: [{ ip: "198.18.0.3", port: 8080 }],
    },
    {
      name: "ignores slices of other Services and other address families",
      slices: [
        slice("other", [{ ip: "198.18.0.4" }], { service: "db" }),
        slice("v6", [{ ip: "fd00::1" }], { addressType: "IPv6" }),
      ],
      port: 80,
      want: [],
    },
    {
      name: "merges several slices without duplicates",
      slices: [slice("a", [{ ip: "198.18.0.1" }]), slice("b", [{ ip: "198.18.0.1" }, { ip: "198.18.0.2" }])],
      port: 80,
      want: [
        { ip: "198.18.0.1", port: 8080 },
        { ip: "198.18.0.2", port: 8080 },
      ],
    },
    {
      name: "returns nothing for a port the Service does not have",
      slices: [slice("a", [{ ip: "198.18.0.1" }])],
      port: 443,
      want: [],
    },
  ])("$name", ({ slices, port, want }) => {
    expect(readyEndpoints(service, slices, port)).toEqual(want);
  });

  it("matches the unnamed port of a single-port Service", () => {
    const single: V1Service = { metadata: { name: "web" }, spec: { ports: [{ port: 80 }] } };
    const s = slice("a", [{ ip: "198.18.0.9" }], { ports: [{ name: "", port: 8080 }] });
    expect(readyEndpoints(single, [s], 80)).toEqual([{ ip: "198.18.0.9", port: 8080 }]);
  });
});
