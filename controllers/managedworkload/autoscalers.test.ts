import { describe, expect, it } from "vitest";
import { fieldManager, kedaPausedReplicas } from "../../api/keys.ts";
import {
  autoscalersFor,
  decideScaledObjectHold,
  type Hpa,
  type ScaledObject,
  scaledObjectHoldApply,
} from "./autoscalers.ts";

const web = { kind: "Deployment", name: "web" };

function hpa(name: string, ref: Record<string, string>, owner?: string): Hpa {
  return {
    metadata: {
      name,
      ...(owner
        ? { ownerReferences: [{ apiVersion: "keda.sh/v1alpha1", kind: "ScaledObject", name: owner }] }
        : {}),
    },
    spec: { scaleTargetRef: ref, minReplicas: 1, maxReplicas: 5 },
  };
}

function scaledObject(name: string, ref: Record<string, string>): ScaledObject {
  return {
    metadata: { name, namespace: "shop" },
    spec: { scaleTargetRef: ref, minReplicaCount: 0, maxReplicaCount: 10 },
  };
}

const webHpa = hpa("web", { apiVersion: "apps/v1", kind: "Deployment", name: "web" });
const webSo = scaledObject("web-queue", { name: "web" });

describe("autoscalersFor", () => {
  const keda = (name: string) => `ScaledObject/${name}`;
  const hpaNamed = (name: string) => `HorizontalPodAutoscaler/${name}`;
  it.each([
    { name: "nothing when nothing scales the target", hpas: [], sos: [], want: [] },
    { name: "an HPA that names the target", hpas: [webHpa], sos: [], want: [hpaNamed("web")] },
    {
      name: "a ScaledObject that names only the target's name (KEDA defaults to an apps/v1 Deployment)",
      hpas: [],
      sos: [webSo],
      want: [keda("web-queue")],
    },
    {
      name: "the ScaledObject but not the HPA KEDA made for it",
      hpas: [
        hpa("keda-hpa-web-queue", { apiVersion: "apps/v1", kind: "Deployment", name: "web" }, "web-queue"),
      ],
      sos: [webSo],
      want: [keda("web-queue")],
    },
    {
      name: "ScaledObjects first, then HPAs, each by name",
      hpas: [hpa("b", { kind: "Deployment", name: "web" }), hpa("a", { kind: "Deployment", name: "web" })],
      sos: [scaledObject("z", { name: "web" }), scaledObject("y", { kind: "Deployment", name: "web" })],
      want: [keda("y"), keda("z"), hpaNamed("a"), hpaNamed("b")],
    },
    {
      name: "no autoscaler of another workload, kind or API group",
      hpas: [
        hpa("other", { apiVersion: "apps/v1", kind: "Deployment", name: "api" }),
        hpa("sts", { apiVersion: "apps/v1", kind: "StatefulSet", name: "web" }),
        hpa("rollout", { apiVersion: "argoproj.io/v1alpha1", kind: "Deployment", name: "web" }),
      ],
      sos: [
        scaledObject("sts", { kind: "StatefulSet", name: "web" }),
        scaledObject("rollout", { apiVersion: "argoproj.io/v1alpha1", kind: "Rollout", name: "web" }),
      ],
      want: [],
    },
  ])("finds $name", ({ hpas, sos, want }) => {
    expect(autoscalersFor(web, hpas, sos).map((a) => `${a.kind}/${a.name}`)).toEqual(want);
  });

  it("reports each autoscaler's replica range", () => {
    expect(autoscalersFor(web, [webHpa], [webSo])).toEqual([
      { kind: "ScaledObject", name: "web-queue", minReplicas: 0, maxReplicas: 10 },
      { kind: "HorizontalPodAutoscaler", name: "web", minReplicas: 1, maxReplicas: 5 },
    ]);
  });

  it("finds a StatefulSet's ScaledObject when it names the kind", () => {
    const so = scaledObject("db", { kind: "StatefulSet", name: "db" });
    expect(autoscalersFor({ kind: "StatefulSet", name: "db" }, [], [so])).toEqual([
      expect.objectContaining({ kind: "ScaledObject", name: "db" }),
    ]);
  });
});

describe("holding a ScaledObject at zero", () => {
  it("applies only KEDA's paused-replicas annotation, and nothing to release", () => {
    expect(scaledObjectHoldApply(webSo, true)).toEqual({
      apiVersion: "keda.sh/v1alpha1",
      kind: "ScaledObject",
      metadata: { name: "web-queue", namespace: "shop", annotations: { [kedaPausedReplicas]: "0" } },
    });
    expect(scaledObjectHoldApply(webSo, false)).toEqual({
      apiVersion: "keda.sh/v1alpha1",
      kind: "ScaledObject",
      metadata: { name: "web-queue", namespace: "shop" },
    });
  });

  const annotated = (value: string, manager: string): ScaledObject => ({
    ...webSo,
    metadata: {
      ...webSo.metadata,
      annotations: { [kedaPausedReplicas]: value },
      managedFields: [
        {
          manager,
          operation: manager === fieldManager ? "Apply" : "Update",
          fieldsV1: { "f:metadata": { "f:annotations": { [`f:${kedaPausedReplicas}`]: {} } } },
        },
      ],
    },
  });

  it.each([
    {
      name: "holds a free ScaledObject",
      so: webSo,
      wantHeld: true,
      action: "apply",
      reason: /^hold ScaledObject web-queue at zero/,
    },
    {
      name: "keeps its own hold",
      so: annotated("0", fieldManager),
      wantHeld: true,
      action: "none",
      reason: /already held at zero$/,
    },
    {
      name: "leaves a hold at zero someone else set",
      so: annotated("0", "kubectl-annotate"),
      wantHeld: true,
      action: "none",
      reason: /already held at zero by someone else/,
    },
    {
      name: "never overrides another paused-replicas",
      so: annotated("3", "kubectl-annotate"),
      wantHeld: true,
      action: "none",
      reason: /held at 3 replicas by someone else.*Napwake leaves it/,
    },
    {
      name: "releases its own hold",
      so: annotated("0", fieldManager),
      wantHeld: false,
      action: "apply",
      reason: /^release/,
    },
    {
      name: "does not release a hold someone else set",
      so: annotated("0", "kubectl-annotate"),
      wantHeld: false,
      action: "none",
      reason: /not held by Napwake/,
    },
    {
      name: "has nothing to release on a free ScaledObject",
      so: webSo,
      wantHeld: false,
      action: "none",
      reason: /not held/,
    },
  ])("$name", ({ so, wantHeld, action, reason }) => {
    const decision = decideScaledObjectHold(so, wantHeld, fieldManager);
    expect(decision.action).toBe(action);
    expect(decision.reason).toMatch(reason);
    if (decision.action === "apply") expect(decision.object).toEqual(scaledObjectHoldApply(so, wantHeld));
  });
});
