import { describe, expect, it } from "vitest";
import type { LabelSelector, RightsizingPolicy, RightsizingPolicySpec } from "../api/rightsizingpolicy.ts";
import { matchesSelector } from "../kube/selectors.ts";
import type { ModeInput, ReadinessChecks } from "./modes.ts";
import { resolveModes } from "./modes.ts";

const ready: ReadinessChecks = {
  metricsSourceHealthy: true,
  enoughHistory: true,
  inPlaceResizeAvailable: true,
};

const policy = (name: string, spec: Partial<RightsizingPolicySpec>): RightsizingPolicy => ({
  apiVersion: "napwake.dev/v1alpha1",
  kind: "RightsizingPolicy",
  metadata: { name },
  spec: { selector: {}, ...spec },
});

const input = (overrides: Partial<ModeInput> = {}): ModeInput => ({
  workload: { kind: "Deployment", namespace: "shop", name: "api", labels: { app: "api", tier: "web" } },
  namespaceLabels: { "kubernetes.io/metadata.name": "shop", team: "payments" },
  policies: [],
  readiness: ready,
  ...overrides,
});

const withAnnotations = (a: Record<string, string>): Partial<ModeInput> => ({
  workload: { kind: "Deployment", namespace: "shop", name: "api", labels: { app: "api" }, annotations: a },
});

describe("matchesSelector", () => {
  const labels = { app: "api", tier: "web" };
  it.each<[string, LabelSelector | undefined, boolean]>([
    ["an absent selector matches everything", undefined, true],
    ["an empty selector matches everything", {}, true],
    ["matchLabels with equal values match", { matchLabels: { app: "api" } }, true],
    ["matchLabels with another value does not match", { matchLabels: { app: "web" } }, false],
    ["matchLabels with a missing key does not match", { matchLabels: { team: "x" } }, false],
    [
      "In matches a listed value",
      { matchExpressions: [{ key: "tier", operator: "In", values: ["web", "db"] }] },
      true,
    ],
    [
      "In does not match an unlisted value",
      { matchExpressions: [{ key: "tier", operator: "In", values: ["db"] }] },
      false,
    ],
    [
      "In does not match a missing key",
      { matchExpressions: [{ key: "zone", operator: "In", values: ["a"] }] },
      false,
    ],
    [
      "NotIn matches an unlisted value",
      { matchExpressions: [{ key: "tier", operator: "NotIn", values: ["db"] }] },
      true,
    ],
    [
      "NotIn matches a missing key",
      { matchExpressions: [{ key: "zone", operator: "NotIn", values: ["a"] }] },
      true,
    ],
    [
      "NotIn refuses a listed value",
      { matchExpressions: [{ key: "tier", operator: "NotIn", values: ["web"] }] },
      false,
    ],
    ["Exists matches a present key", { matchExpressions: [{ key: "app", operator: "Exists" }] }, true],
    ["Exists refuses a missing key", { matchExpressions: [{ key: "zone", operator: "Exists" }] }, false],
    [
      "DoesNotExist matches a missing key",
      { matchExpressions: [{ key: "zone", operator: "DoesNotExist" }] },
      true,
    ],
    [
      "DoesNotExist refuses a present key",
      { matchExpressions: [{ key: "app", operator: "DoesNotExist" }] },
      false,
    ],
    [
      "labels and expressions must all hold",
      { matchLabels: { app: "api" }, matchExpressions: [{ key: "tier", operator: "In", values: ["db"] }] },
      false,
    ],
  ])("%s", (_, selector, expected) => {
    expect(matchesSelector(selector, labels)).toBe(expected);
  });

  it("matches nothing for an operator the schema does not know", () => {
    const selector = { matchExpressions: [{ key: "app", operator: "Bogus" }] } as unknown as LabelSelector;
    expect(matchesSelector(selector, labels)).toBe(false);
  });
});

describe("resolveModes: precedence", () => {
  const low = policy("low", { priority: 1, cpu: { mode: "off" }, memory: { mode: "off" } });
  const high = policy("high", { priority: 10, cpu: { mode: "auto-patch" }, memory: { mode: "audit" } });
  const memoryOnly = policy("memory-only", { priority: 20, memory: { mode: "auto-patch" } });
  const otherTeam = policy("other-team", {
    priority: 100,
    selector: { namespaceSelector: { matchLabels: { team: "search" } } },
    cpu: { mode: "off" },
  });
  const statefulOnly = policy("stateful", {
    priority: 100,
    selector: { kinds: ["StatefulSet"] },
    cpu: { mode: "off" },
  });

  it.each<[string, Partial<ModeInput>, string, string, string, string]>([
    ["nothing set: the global default audit", {}, "audit", "global-default", "audit", "global-default"],
    [
      "the cluster default over the global default, per resource",
      { clusterDefault: { cpu: "off" } },
      "off",
      "cluster-default",
      "audit",
      "global-default",
    ],
    [
      "a matching policy over the cluster default",
      { clusterDefault: { cpu: "audit", memory: "audit" }, policies: [low] },
      "off",
      "policy/low",
      "off",
      "policy/low",
    ],
    [
      "the highest priority wins",
      { policies: [low, high] },
      "auto-patch",
      "policy/high",
      "audit",
      "policy/high",
    ],
    [
      "a policy without a resource leaves that resource to lower policies",
      { policies: [low, high, memoryOnly] },
      "auto-patch",
      "policy/high",
      "auto-patch",
      "policy/memory-only",
    ],
    [
      "a policy for another namespace does not apply",
      { policies: [low, otherTeam] },
      "off",
      "policy/low",
      "off",
      "policy/low",
    ],
    [
      "a policy for another kind does not apply",
      { policies: [low, statefulOnly] },
      "off",
      "policy/low",
      "off",
      "policy/low",
    ],
    [
      "annotations over every policy",
      {
        policies: [high],
        ...withAnnotations({ "napwake.dev/cpu-mode": "off", "napwake.dev/memory-mode": "off" }),
      },
      "off",
      "annotation",
      "off",
      "annotation",
    ],
    [
      "an annotation for one resource leaves the other to the policy",
      { policies: [high], ...withAnnotations({ "napwake.dev/memory-mode": "off" }) },
      "auto-patch",
      "policy/high",
      "off",
      "annotation",
    ],
    [
      "an invalid annotation is ignored",
      { policies: [low], ...withAnnotations({ "napwake.dev/cpu-mode": "yes-please" }) },
      "off",
      "policy/low",
      "off",
      "policy/low",
    ],
  ])("%s", (_, overrides, cpuMode, cpuSource, memoryMode, memorySource) => {
    const result = resolveModes(input(overrides));
    expect([result.cpu.mode, result.cpu.source, result.memory.mode, result.memory.source]).toEqual([
      cpuMode,
      cpuSource,
      memoryMode,
      memorySource,
    ]);
  });

  it("reports an invalid annotation with its key and value", () => {
    const result = resolveModes(input(withAnnotations({ "napwake.dev/cpu-mode": "yes-please" })));
    expect(result.cpu.invalidAnnotation).toEqual({ key: "napwake.dev/cpu-mode", value: "yes-please" });
  });

  it("names the governing policy and its settings even when an annotation decides the mode", () => {
    const bounded = policy("bounded", {
      cpu: { mode: "audit", min: "100m", max: "2", maxChangePercent: 20 },
    });
    const result = resolveModes(
      input({ policies: [bounded], ...withAnnotations({ "napwake.dev/cpu-mode": "off" }) }),
    );
    expect(result.cpu).toMatchObject({ source: "annotation", policy: "bounded", settings: { max: "2" } });
  });

  it("lists every matching policy, highest priority first", () => {
    expect(resolveModes(input({ policies: [low, memoryOnly, otherTeam, high] })).matchedPolicies).toEqual([
      "memory-only",
      "high",
      "low",
    ]);
  });
});

describe("resolveModes: ties", () => {
  const zeta = policy("zeta", { priority: 5, cpu: { mode: "off" } });
  const alpha = policy("alpha", { priority: 5, cpu: { mode: "auto-patch" } });
  const lower = policy("lower", { priority: 1, cpu: { mode: "audit" } });

  it.each([
    ["in list order", [zeta, alpha, lower]],
    ["in reverse order", [lower, alpha, zeta]],
  ])("breaks a tie by name whatever the order (%s) and reports it", (_, policies) => {
    const result = resolveModes(input({ policies }));
    expect(result.cpu).toMatchObject({ mode: "auto-patch", source: "policy/alpha", tie: ["alpha", "zeta"] });
  });

  it("reports no tie when the top priority has a single policy", () => {
    expect(resolveModes(input({ policies: [alpha, lower] })).cpu.tie).toBeUndefined();
  });
});

describe("resolveModes: auto-patch readiness", () => {
  const autoPatch = policy("auto", { cpu: { mode: "auto-patch" }, memory: { mode: "auto-patch" } });
  const overridden = policy("auto-override", {
    cpu: { mode: "auto-patch" },
    autoPatchOverride: { reason: "resize verified by hand on 1.33 nodes (INC-42)" },
  });
  const rollout = policy("auto-rollout", { cpu: { mode: "auto-patch" }, strategy: { type: "rollout" } });

  it.each<[string, RightsizingPolicy, ReadinessChecks, string, string[] | undefined]>([
    ["all checks pass: auto-patch", autoPatch, ready, "auto-patch", undefined],
    [
      "an unhealthy metrics source degrades to audit",
      autoPatch,
      { ...ready, metricsSourceHealthy: false },
      "audit",
      ["metrics-source-unhealthy"],
    ],
    [
      "too little history degrades to audit",
      autoPatch,
      { ...ready, enoughHistory: false },
      "audit",
      ["insufficient-history"],
    ],
    [
      "no in-place resize degrades to audit",
      autoPatch,
      { ...ready, inPlaceResizeAvailable: false },
      "audit",
      ["in-place-resize-unavailable"],
    ],
    [
      "every failing check is named",
      autoPatch,
      { metricsSourceHealthy: false, enoughHistory: false, inPlaceResizeAvailable: false },
      "audit",
      ["metrics-source-unhealthy", "insufficient-history", "in-place-resize-unavailable"],
    ],
    [
      "a rollout strategy does not need in-place resize",
      rollout,
      { ...ready, inPlaceResizeAvailable: false },
      "auto-patch",
      undefined,
    ],
    [
      "an override with a reason keeps auto-patch",
      overridden,
      { ...ready, metricsSourceHealthy: false },
      "auto-patch",
      undefined,
    ],
  ])("%s", (_, p, readiness, mode, degraded) => {
    const result = resolveModes(input({ policies: [p], readiness }));
    expect(result.cpu.mode).toBe(mode);
    expect(result.cpu.requested).toBe("auto-patch");
    expect(result.cpu.degraded).toEqual(degraded);
  });

  it("reports the override it used, for an Event", () => {
    const result = resolveModes(
      input({ policies: [overridden], readiness: { ...ready, enoughHistory: false } }),
    );
    expect(result.cpu.overridden).toEqual({
      policy: "auto-override",
      reason: "resize verified by hand on 1.33 nodes (INC-42)",
      checks: ["insufficient-history"],
    });
  });

  it("does not report an override that was not needed", () => {
    expect(resolveModes(input({ policies: [overridden] })).cpu.overridden).toBeUndefined();
  });

  it("ignores an override whose reason is blank", () => {
    const blank = policy("blank", { cpu: { mode: "auto-patch" }, autoPatchOverride: { reason: "  " } });
    const result = resolveModes(input({ policies: [blank], readiness: { ...ready, enoughHistory: false } }));
    expect(result.cpu).toMatchObject({ mode: "audit", degraded: ["insufficient-history"] });
  });

  it("does not lend a policy's override to a workload whose own annotation asks for auto-patch", () => {
    const auditOverride = policy("audit-override", {
      cpu: { mode: "audit" },
      autoPatchOverride: { reason: "resize verified by hand on 1.33 nodes (INC-42)" },
    });
    const result = resolveModes(
      input({
        ...withAnnotations({ "napwake.dev/cpu-mode": "auto-patch" }),
        policies: [auditOverride],
        readiness: { ...ready, enoughHistory: false },
      }),
    );
    expect(result.cpu).toMatchObject({
      mode: "audit",
      source: "annotation",
      degraded: ["insufficient-history"],
    });
    expect(result.cpu.overridden).toBeUndefined();
  });

  it("applies the readiness checks to an annotation's auto-patch too", () => {
    const result = resolveModes(
      input({
        ...withAnnotations({ "napwake.dev/memory-mode": "auto-patch" }),
        readiness: { ...ready, metricsSourceHealthy: false },
      }),
    );
    expect(result.memory).toMatchObject({ mode: "audit", requested: "auto-patch", source: "annotation" });
  });

  it("takes the strategy from the highest-priority matching policy", () => {
    expect(resolveModes(input({ policies: [rollout] })).strategy).toBe("rollout");
    expect(resolveModes(input()).strategy).toBe("in-place");
  });
});
