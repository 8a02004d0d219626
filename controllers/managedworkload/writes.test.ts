import type {
  AppsV1Api,
  CustomObjectsApi,
  KubernetesObjectApi,
  V1Deployment,
  V1Scale,
} from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { annotations } from "../../api/keys.ts";
import type { TargetState } from "./observation.ts";
import { type ClusterWrites, clusterWrites, makeWrites, StaleTargetError } from "./writes.ts";

const target: TargetState = {
  kind: "Deployment",
  name: "web",
  namespace: "shop",
  uid: "u",
  replicas: 3,
  labels: {},
  annotations: {},
  managedFields: [],
};

/**
 * A Deployment whose Scale replaces fail with 409 `conflicts` times, whose count `replicas` can change between
 * reads, and whose paused-from is `pausedFrom` when read.
 */
function fakeApps(opts: { conflicts: number; replicas: number[]; pausedFrom?: string }) {
  const replaced: V1Scale[] = [];
  let reads = 0;
  const apps = {
    readNamespacedDeployment: async (): Promise<V1Deployment> => ({
      metadata: {
        resourceVersion: String(reads),
        ...(opts.pausedFrom ? { annotations: { [annotations.pausedFrom]: opts.pausedFrom } } : {}),
      },
      spec: {
        replicas: opts.replicas[Math.min(reads++, opts.replicas.length - 1)] ?? 0,
      } as V1Deployment["spec"],
    }),
    replaceNamespacedDeploymentScale: async ({ body }: { body: V1Scale }) => {
      if (opts.conflicts-- > 0) throw Object.assign(new Error("conflict"), { code: 409 });
      replaced.push(body);
      return body;
    },
  };
  const writes = clusterWrites({
    apps: apps as unknown as AppsV1Api,
    custom: {} as CustomObjectsApi,
    objects: {} as KubernetesObjectApi,
    fieldManager: "napwake",
  });
  return { writes, replaced: () => replaced.map((scale) => scale.spec?.replicas), scales: replaced };
}

describe("clusterWrites.scale", () => {
  it("retries a scale that conflicts with a status update, while the count is still the one decided on", async () => {
    const { writes, replaced } = fakeApps({ conflicts: 2, replicas: [3] });
    await writes.scale(target, 3, 0);
    expect(replaced()).toEqual([0]);
  });

  it("gives up when the count changed between the decision and the write", async () => {
    const { writes, replaced } = fakeApps({ conflicts: 1, replicas: [3, 5] });
    await expect(writes.scale(target, 3, 0)).rejects.toBeInstanceOf(StaleTargetError);
    expect(replaced()).toEqual([]);
  });

  it("does nothing when the target already has the count", async () => {
    const { writes, replaced } = fakeApps({ conflicts: 0, replicas: [0] });
    await writes.scale(target, 3, 0);
    expect(replaced()).toEqual([]);
  });

  it("does not pause a workload whose recorded count was removed since (opt-out forgetting it meanwhile)", async () => {
    const recorded = { ...target, annotations: { [annotations.pausedFrom]: "3" } };
    const { writes, replaced } = fakeApps({ conflicts: 0, replicas: [3] });
    await expect(writes.scale(recorded, 3, 0)).rejects.toThrow(/paused-from unset, expected 3/);
    expect(replaced()).toEqual([]);
  });

  it("scales on condition of the workload's resourceVersion, so a change to its count since fails it", async () => {
    const recorded = { ...target, annotations: { [annotations.pausedFrom]: "3" } };
    const { writes, scales } = fakeApps({ conflicts: 0, replicas: [3], pausedFrom: "3" });
    await writes.scale(recorded, 3, 0);
    expect(scales).toEqual([
      {
        apiVersion: "autoscaling/v1",
        kind: "Scale",
        metadata: { name: "web", namespace: "shop", resourceVersion: "0" },
        spec: { replicas: 0 },
      },
    ]);
  });
});

describe("clusterWrites.forgetPausedFrom", () => {
  it("forgets the count only if the workload still has the replicas and the count that were seen", async () => {
    const patches: unknown[] = [];
    const apps = {
      patchNamespacedDeployment: async ({ body }: { body: unknown }) => {
        patches.push(body);
        return {};
      },
    };
    const writes = clusterWrites({
      apps: apps as unknown as AppsV1Api,
      custom: {} as CustomObjectsApi,
      objects: {} as KubernetesObjectApi,
      fieldManager: "napwake",
    });
    await writes.forgetPausedFrom({
      ...target,
      replicas: 3,
      annotations: { "napwake.dev/paused-from": "3" },
    });
    expect(patches).toEqual([
      [
        { op: "test", path: "/spec/replicas", value: 3 },
        { op: "test", path: "/metadata/annotations/napwake.dev~1paused-from", value: "3" },
        { op: "remove", path: "/metadata/annotations/napwake.dev~1paused-from" },
      ],
    ]);
  });
});

describe("clusterWrites.apply", () => {
  const released = {
    apiVersion: "keda.sh/v1alpha1",
    kind: "ScaledObject",
    metadata: { name: "web", namespace: "shop" },
  };
  /** An apply the API server refuses with `refused`, on an object a read finds (or not: `readCode`). */
  function applyRefused(refused: number, readCode: number | null) {
    const objects = {
      patch: async () => {
        throw Object.assign(new Error("refused"), { code: refused });
      },
      read: async () => {
        if (readCode !== null) throw Object.assign(new Error("read failed"), { code: readCode });
        return released;
      },
    };
    return clusterWrites({
      apps: {} as AppsV1Api,
      custom: {} as CustomObjectsApi,
      objects: objects as unknown as KubernetesObjectApi,
      fieldManager: "napwake",
    }).apply(released);
  }

  it("is done when the object was deleted since the cache listed it (the apply became a refused create)", async () => {
    await expect(applyRefused(422, 404)).resolves.toBeUndefined();
  });

  it.each([
    { name: "the object is still there", readCode: null },
    { name: "the read fails for another reason", readCode: 503 },
  ])("fails as the API server refused it when $name", async ({ readCode }) => {
    await expect(applyRefused(422, readCode)).rejects.toThrow("refused");
  });
});

describe("makeWrites", () => {
  it("guards each write by what the target looks like after the writes before it", async () => {
    const seen: { write: string; replicas: number; pausedFrom?: string }[] = [];
    const cluster = {
      recordPausedFrom: async (t: TargetState) => void seen.push({ write: "record", replicas: t.replicas }),
      forgetPausedFrom: async (t: TargetState) =>
        void seen.push({
          write: "forget",
          replicas: t.replicas,
          pausedFrom: t.annotations["napwake.dev/paused-from"],
        }),
      scale: async (t: TargetState) => void seen.push({ write: "scale", replicas: t.replicas }),
      confirmTarget: async (t: TargetState) => void seen.push({ write: "confirm", replicas: t.replicas }),
      apply: async () => void seen.push({ write: "apply", replicas: -1 }),
      writeStatus: async () => "",
    };
    const paused = { ...target, replicas: 0, annotations: { "napwake.dev/paused-from": "3" } };
    const release = { apiVersion: "keda.sh/v1alpha1", kind: "ScaledObject", metadata: { name: "web" } };
    await makeWrites(
      [
        { kind: "apply", object: release, why: "release web" },
        { kind: "scale", from: 0, to: 3 },
        { kind: "forget-paused-from" },
      ],
      paused,
      cluster,
    );
    expect(seen).toEqual([
      // A ScaledObject's release is made only once the workload is confirmed as decided on.
      { write: "confirm", replicas: 0 },
      { write: "apply", replicas: -1 },
      { write: "scale", replicas: 0 },
      { write: "forget", replicas: 3, pausedFrom: "3" },
    ]);
  });

  it("tells of each write once it landed, not of those after one that failed", async () => {
    const landed: string[] = [];
    const failing: ClusterWrites = {
      recordPausedFrom: async () => undefined,
      forgetPausedFrom: async () => {
        throw new Error("etcdserver: request timed out");
      },
      scale: async () => undefined,
      confirmTarget: async () => undefined,
      apply: async () => undefined,
      writeStatus: async () => "",
    };
    const paused = { ...target, replicas: 0, annotations: { "napwake.dev/paused-from": "3" } };
    const resume = [{ kind: "scale", from: 0, to: 3 }, { kind: "forget-paused-from" }] as const;
    await expect(makeWrites(resume, paused, failing, (w) => landed.push(w.kind))).rejects.toThrow(
      /timed out/,
    );
    expect(landed).toEqual(["scale"]);
  });
});
