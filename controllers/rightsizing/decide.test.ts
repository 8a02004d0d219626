import { describe, expect, it } from "vitest";
import type { RightsizingStatus } from "../../api/rightsizing.ts";
import { defaultConfig, type Recommendation } from "../../rightsizing/index.ts";
import type { EffectiveMode, ModeResolution } from "../../rightsizing/modes.ts";
import { type ContainerFacts, decideRightsizing, type RightsizingInput, type RunOutcome } from "./decide.ts";

const MIB = 2 ** 20;
const HOUR = 3_600_000;
const t0 = Date.parse("2026-11-20T10:00:00Z");

const audit: EffectiveMode = { mode: "audit", requested: "audit", source: "global-default" };
const modes = (cpu: EffectiveMode = audit, memory: EffectiveMode = audit): ModeResolution => ({
  cpu,
  memory,
  strategy: "in-place",
  matchedPolicies: [],
});
const app: ContainerFacts = {
  name: "app",
  cpuRequestCores: 0.5,
  memoryRequestBytes: 512 * MIB,
  memoryLimitBytes: 1024 * MIB,
};

function rec(
  cpu: number,
  memMib: number,
  status: Recommendation["status"] = "ok",
  hours = 48,
): Recommendation {
  const b = (v: number) => ({ lower: v * 0.8, target: v, upper: v * 1.5 });
  return {
    status,
    confidence: status === "ok" ? hours / 168 : 0,
    historyMs: hours * HOUR,
    cpuRequestCores: b(cpu),
    memoryRequestBytes: b(memMib * MIB),
    memoryLimitBytes: b(memMib * 1.2 * MIB),
    reasons: ["cpu-percentile-of-decayed-usage"],
  };
}
const ran = (atMs: number, r: Recommendation): RunOutcome => ({
  ok: true,
  atMs,
  untilMs: atMs - 60_000,
  containers: new Map([["app", { recommendation: r, checkpoint: `{"v":1,"at":${atMs}}` }]]),
});
const failed = (
  atMs: number,
  error = "metrics source unavailable after 4 attempt(s): connection refused",
): RunOutcome => ({
  ok: false,
  atMs,
  error,
});

function step(
  previous: RightsizingStatus | undefined,
  run: RunOutcome | null,
  overrides: Partial<RightsizingInput> = {},
) {
  return decideRightsizing({
    nowMs: run?.atMs ?? t0,
    generation: 1,
    previous,
    containers: [app],
    modes: modes(),
    run,
    config: defaultConfig,
    ...overrides,
  });
}
const reasons = (d: ReturnType<typeof step>) => d.events.map((e) => e.reason);
const condition = (s: RightsizingStatus, type: string) => s.conditions?.find((c) => c.type === type);

describe("the rightsizing decision", () => {
  it("shows a first recommendation with its bounds and announces it in one Event", () => {
    const d = step(undefined, ran(t0, rec(0.2, 300)));
    const c = d.status.containers?.[0];
    expect(c).toMatchObject({
      name: "app",
      current: { cpuRequest: "500m", memoryRequest: "512Mi", memoryLimit: "1024Mi" },
      target: { cpuRequest: "200m", memoryRequest: "300Mi", memoryLimit: "360Mi" },
      lowerBound: { cpuRequest: "160m" },
      upperBound: { cpuRequest: "300m" },
      state: "ok",
      historyHours: 48,
      checkpoint: `{"v":1,"at":${t0}}`,
    });
    expect(reasons(d)).toEqual(["RecommendationChanged"]);
    expect(d.events[0]?.note).toContain("cpu request 200m (-60%)");
    expect(condition(d.status, "RecommendationReady")?.status).toBe("True");
    expect(condition(d.status, "MetricsSourceHealthy")?.status).toBe("True");
  });

  it("keeps what it shows within the governing policy's min and max, and says so", () => {
    const bounded = (min: string, max: string): EffectiveMode => ({
      ...audit,
      source: "policy/bounded",
      policy: "bounded",
      settings: { mode: "audit", min, max },
    });
    const d = step(undefined, ran(t0, rec(4, 30)), {
      modes: modes(bounded("100m", "1"), bounded("256Mi", "2Gi")),
    });
    const c = d.status.containers?.[0];
    expect(c?.target).toEqual({ cpuRequest: "1000m", memoryRequest: "256Mi", memoryLimit: "256Mi" });
    expect(c?.upperBound?.cpuRequest).toBe("1000m");
    expect(c?.reasons).toEqual(expect.arrayContaining(["cpu-policy-bound", "memory-policy-bound"]));
  });

  it("rounds what it shows towards the inside of decimal bounds (a max of 1G is 953Mi, a min of 100M 96Mi)", () => {
    const bounded = (min: string, max: string): EffectiveMode => ({
      ...audit,
      source: "policy/bounded",
      policy: "bounded",
      settings: { mode: "audit", min, max },
    });
    const over = step(undefined, ran(t0, rec(0.2, 4000)), { modes: modes(audit, bounded("100M", "1G")) });
    expect(over.status.containers?.[0]?.target).toMatchObject({
      memoryRequest: "953Mi",
      memoryLimit: "953Mi",
    });
    const under = step(undefined, ran(t0, rec(0.2, 20)), { modes: modes(audit, bounded("100M", "1G")) });
    expect(under.status.containers?.[0]?.target?.memoryRequest).toBe("96Mi");
  });

  it("never keeps showing values outside a policy's max lowered since, however small the change", () => {
    const first = step(undefined, ran(t0, rec(1, 1000))).status;
    expect(first.containers?.[0]?.target).toEqual({
      cpuRequest: "1000m",
      memoryRequest: "1000Mi",
      memoryLimit: "1200Mi",
    });
    // Lowered by less than the 10% that counts as a material change.
    const capped = (max: string): EffectiveMode => ({
      ...audit,
      source: "policy/capped",
      policy: "capped",
      settings: { mode: "audit", max },
    });
    const d = step(first, ran(t0 + HOUR, rec(1, 1000, "ok", 49)), {
      modes: modes(capped("950m"), capped("1150Mi")),
    });
    const c = d.status.containers?.[0];
    expect(c?.target).toEqual({ cpuRequest: "950m", memoryRequest: "1000Mi", memoryLimit: "1150Mi" });
    expect(c?.upperBound).toEqual({ cpuRequest: "950m", memoryRequest: "1150Mi", memoryLimit: "1150Mi" });
  });

  it("never keeps showing values outside a policy's max lowered while the metrics source is down", () => {
    const first = step(undefined, ran(t0, rec(1, 1000))).status;
    const capped = (max: string): EffectiveMode => ({
      ...audit,
      source: "policy/capped",
      policy: "capped",
      settings: { mode: "audit", max },
    });
    const lowered = { modes: modes(capped("500m"), capped("1100Mi")) };
    const down = step(first, failed(t0 + HOUR), lowered);
    const c = down.status.containers?.[0];
    expect(c?.target).toEqual({ cpuRequest: "500m", memoryRequest: "1000Mi", memoryLimit: "1100Mi" });
    expect(c?.lowerBound).toEqual({ cpuRequest: "500m", memoryRequest: "800Mi", memoryLimit: "960Mi" });
    expect(c?.upperBound).toEqual({ cpuRequest: "500m", memoryRequest: "1100Mi", memoryLimit: "1100Mi" });
    expect(c?.reasons).toEqual(expect.arrayContaining(["cpu-policy-bound", "memory-policy-bound"]));
    expect(c?.checkpoint).toBe(first.containers?.[0]?.checkpoint);
    expect(reasons(down)).toEqual(["RecommendationChanged", "MetricsSourceFailed"]);
    // Within the new bounds now: the next failed run keeps it as it is, and says nothing again.
    const again = step(down.status, failed(t0 + 2 * HOUR), lowered);
    expect(again.status.containers).toEqual(down.status.containers);
    expect(reasons(again)).toEqual([]);
  });

  it("says when the CPU request it recommends is above the container's CPU limit, and what to do", () => {
    const limited = { ...app, cpuRequestCores: 0.2, cpuLimitCores: 0.5 };
    const d = step(undefined, ran(t0, rec(0.584, 300)), { containers: [limited] });
    expect(d.status.containers?.[0]?.reasons).toContain("cpu-request-above-limit");
    expect(d.events[0]?.note).toContain("(above its cpu limit 500m: raise the limit with it, or remove it)");
    const within = step(undefined, ran(t0, rec(0.4, 300)), { containers: [limited] });
    expect(within.status.containers?.[0]?.reasons).not.toContain("cpu-request-above-limit");
  });

  it.each([
    { what: "drops it once the limit is raised above the request shown", before: 0.5, after: 4, says: false },
    { what: "gives it once the limit is lowered below the request shown", before: 4, after: 0.5, says: true },
  ])("while the metrics source is down, $what", ({ before, after, says }) => {
    const limited = (cpuLimitCores: number) => ({ containers: [{ ...app, cpuLimitCores }] });
    const shown = step(undefined, ran(t0, rec(1, 300)), limited(before)).status;
    const kept = step(shown, failed(t0 + HOUR), limited(after)).status.containers?.[0];
    expect(kept?.reasons?.includes("cpu-request-above-limit")).toBe(says);
    expect(kept?.target).toEqual(shown.containers?.[0]?.target);
  });

  it("announces a request set to zero as none set, not as an infinite change", () => {
    const d = step(undefined, ran(t0, rec(0.2, 300)), { containers: [{ ...app, cpuRequestCores: 0 }] });
    expect(d.events[0]?.note).toContain("cpu request 200m (none set)");
  });

  it.each([
    { what: "a 5% drift keeps the shown values and stays quiet", cpu: 0.21, mem: 300, changed: false },
    { what: "a 30% drop replaces them and is one Event", cpu: 0.14, mem: 300, changed: true },
    { what: "memory growing past 10% is announced", cpu: 0.2, mem: 340, changed: true },
  ])("$what", ({ cpu, mem, changed }) => {
    const first = step(undefined, ran(t0, rec(0.2, 300))).status;
    const d = step(first, ran(t0 + HOUR, rec(cpu, mem, "ok", 49)));
    expect(reasons(d)).toEqual(changed ? ["RecommendationChanged"] : []);
    expect(d.status.containers?.[0]?.target?.cpuRequest).toBe(
      changed ? `${Math.round(cpu * 1000)}m` : "200m",
    );
    // Confidence, history and the checkpoint follow every run.
    expect(d.status.containers?.[0]?.historyHours).toBe(49);
    expect(d.status.containers?.[0]?.checkpoint).toContain(String(t0 + HOUR));
  });

  it("sends a skip for too little history once, and again only when its note changes", () => {
    const first = step(undefined, ran(t0, rec(0.2, 300, "insufficient-history", 3)));
    expect(reasons(first)).toEqual(["RecommendationSkipped"]);
    expect(condition(first.status, "RecommendationReady")).toMatchObject({
      status: "False",
      reason: "InsufficientHistory",
    });
    const again = step(first.status, ran(t0 + HOUR, rec(0.2, 300, "insufficient-history", 4)));
    expect(reasons(again)).toEqual([]);
    // A failed run in between cannot tell; the skip already sent is not sent again once the source is back.
    const down = step(again.status, failed(t0 + 2 * HOUR));
    const back = step(down.status, ran(t0 + 3 * HOUR, rec(0.2, 300, "insufficient-history", 5)));
    expect(reasons(back)).toEqual([]);
    const ready = step(again.status, ran(t0 + 30 * HOUR, rec(0.2, 300, "ok", 25)));
    expect(reasons(ready)).toEqual(["RecommendationChanged"]);
    expect(ready.status.notices).toBeUndefined();
  });

  it("keeps every recommendation through a metrics source outage and says so once", () => {
    const good = step(undefined, ran(t0, rec(0.2, 300))).status;
    const down = step(good, failed(t0 + HOUR));
    expect(down.status.containers?.[0]?.target).toEqual(good.containers?.[0]?.target);
    expect(down.status.containers?.[0]?.checkpoint).toBe(good.containers?.[0]?.checkpoint);
    expect(reasons(down)).toEqual(["MetricsSourceFailed"]);
    expect(down.events[0]?.type).toBe("Warning");
    expect(condition(down.status, "MetricsSourceHealthy")).toMatchObject({
      status: "False",
      reason: "QueryFailed",
    });
    expect(down.status.lastRun).toBe(good.lastRun);
    expect(reasons(step(down.status, failed(t0 + 2 * HOUR)))).toEqual([]);
    const back = step(down.status, ran(t0 + 3 * HOUR, rec(0.2, 300)));
    expect(reasons(back)).toEqual([]);
    expect(condition(back.status, "MetricsSourceHealthy")?.status).toBe("True");
    expect(back.status.notices).toBeUndefined();
  });

  it("changes a condition's lastTransitionTime only when its status flips", () => {
    const first = step(undefined, ran(t0, rec(0.2, 300))).status;
    const later = step(first, ran(t0 + HOUR, rec(0.2, 300))).status;
    expect(condition(later, "MetricsSourceHealthy")?.lastTransitionTime).toBe(new Date(t0).toISOString());
    const down = step(later, failed(t0 + 2 * HOUR)).status;
    expect(condition(down, "MetricsSourceHealthy")?.lastTransitionTime).toBe(
      new Date(t0 + 2 * HOUR).toISOString(),
    );
  });

  it("sends a blocked auto-patch once per reason and proposed values", () => {
    const degraded: EffectiveMode = {
      mode: "audit",
      requested: "auto-patch",
      source: "policy/web",
      policy: "web",
      degraded: ["in-place-resize-unavailable"],
    };
    const withModes = { modes: modes(degraded) };
    const first = step(undefined, ran(t0, rec(0.2, 300)), withModes);
    expect(reasons(first)).toEqual(["RecommendationChanged", "AutoPatchBlocked"]);
    expect(first.status.modes?.cpu).toMatchObject({
      mode: "audit",
      requested: "auto-patch",
      degradedBy: ["in-place-resize-unavailable"],
    });
    expect(reasons(step(first.status, ran(t0 + HOUR, rec(0.2, 300)), withModes))).toEqual([]);
    // New proposed values: the block is news again.
    expect(reasons(step(first.status, ran(t0 + HOUR, rec(0.1, 300)), withModes))).toEqual([
      "RecommendationChanged",
      "AutoPatchBlocked",
    ]);
  });

  it("says why no usage was read when the workload's pods' names could be another's", () => {
    const run: RunOutcome = {
      ok: true,
      atMs: t0,
      untilMs: t0 - 60_000,
      containers: new Map(),
      podNamesSharedWith: ["shop/Deployment/checkout-long-x"],
    };
    const ready = condition(step(undefined, run).status, "RecommendationReady");
    expect(ready?.reason).toBe("NoData");
    expect(ready?.message).toMatch(
      /^no usage read yet for app \(its pods' names could be those of shop\/Deployment\/checkout-long-x: /,
    );
    const learned = { ...ran(t0, rec(0.25, 128)), podNamesSharedWith: ["shop/Deployment/checkout-long-x"] };
    expect(condition(step(undefined, learned).status, "RecommendationReady")?.message).toMatch(
      /^1 container\(s\) have a recommendation \(its pods' names could be those of /,
    );
    expect(
      condition(step(undefined, { ...run, podNamesSharedWith: [] }).status, "RecommendationReady")?.message,
    ).toBe("no usage read yet for app");
  });

  it("says a Deployment's pods keep too little of their template hash to tell them from a Job named after it", () => {
    const learned = { ...ran(t0, rec(0.25, 128)), podNamesCutTo: 2 };
    expect(condition(step(undefined, learned).status, "RecommendationReady")?.message).toBe(
      "1 container(s) have a recommendation (its pods' names keep 2 characters of their template hash, too few " +
        "to tell them from the pods of a workload named after it, such as a Job <name>-migrate, whose usage may " +
        "be counted as its own; a name of at most 51 characters tells them apart)",
    );
  });

  it("reports the source that decided each mode, and a tie between policies", () => {
    const tied: EffectiveMode = {
      mode: "audit",
      requested: "audit",
      source: "policy/a",
      policy: "a",
      tie: ["a", "b"],
    };
    const off: EffectiveMode = { mode: "off", requested: "off", source: "annotation" };
    const d = step(undefined, null, { modes: modes(tied, off) });
    expect(d.status.modes).toEqual({
      cpu: { mode: "audit", requested: "audit", source: "policy/a", policy: "a", tie: ["a", "b"] },
      memory: { mode: "off", requested: "off", source: "annotation" },
    });
    expect(condition(d.status, "MetricsSourceHealthy")?.reason).toBe("NotRunYet");
    expect(condition(d.status, "RecommendationReady")?.reason).toBe("NoData");
    expect(d.events).toEqual([]);
  });
});
