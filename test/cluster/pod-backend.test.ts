import type { V1Pod } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { desiredListeners } from "./pod-backend.ts";

function pod(
  name: string,
  opts: {
    ip?: string;
    ready?: boolean;
    phase?: string;
    deleting?: boolean;
    ports?: { port: number; protocol?: string }[];
  },
): V1Pod {
  return {
    metadata: {
      name,
      namespace: "ns",
      uid: `uid-${name}`,
      ...(opts.deleting ? { deletionTimestamp: new Date() } : {}),
    },
    spec: {
      containers: [
        {
          name: "c",
          ports: (opts.ports ?? [{ port: 8080 }]).map((p) => ({
            containerPort: p.port,
            protocol: p.protocol,
          })),
        },
      ],
    },
    status: {
      phase: opts.phase ?? "Running",
      ...(opts.ip ? { podIP: opts.ip } : {}),
      conditions: [{ type: "Ready", status: opts.ready === false ? "False" : "True" }],
    },
  };
}

describe("desiredListeners", () => {
  it.each([
    {
      name: "listens on every TCP container port of a Ready pod",
      pods: [pod("a", { ip: "198.18.0.1", ports: [{ port: 80 }, { port: 9000 }] })],
      want: ["198.18.0.1:80", "198.18.0.1:9000"],
    },
    {
      name: "does not listen for a pod that is not Ready",
      pods: [pod("a", { ip: "198.18.0.1", ready: false })],
      want: [],
    },
    { name: "does not listen for a pod without an IP", pods: [pod("a", {})], want: [] },
    {
      name: "does not listen for a pod being deleted",
      pods: [pod("a", { ip: "198.18.0.1", deleting: true })],
      want: [],
    },
    {
      name: "does not listen for a pod that is not Running",
      pods: [pod("a", { ip: "198.18.0.1", phase: "Pending" })],
      want: [],
    },
    {
      name: "skips UDP ports",
      pods: [pod("a", { ip: "198.18.0.1", ports: [{ port: 53, protocol: "UDP" }] })],
      want: [],
    },
  ])("$name", ({ pods, want }) => {
    expect([...desiredListeners(pods).keys()].sort()).toEqual(want);
  });

  it("remembers which pod owns an address, so a new pod on a reused IP gets a fresh listener", () => {
    const first = desiredListeners([pod("a", { ip: "198.18.0.1" })]).get("198.18.0.1:8080");
    const second = desiredListeners([pod("b", { ip: "198.18.0.1" })]).get("198.18.0.1:8080");
    expect(first?.uid).toBe("uid-a");
    expect(second?.uid).toBe("uid-b");
  });
});
