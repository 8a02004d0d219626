import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import {
  activitySources,
  awakeBudgets,
  forecastHistories,
  managedWorkloadCrd,
  parseDuration,
  phases,
  prewakeLeadMs,
  specDefaults,
  unreadableManagedWorkload,
} from "./managedworkload.ts";

describe("the pre-wake lead in force", () => {
  const target = { kind: "Deployment" as const, name: "web" };
  it.each([
    { what: "the default when unset", forecast: undefined, ms: 10 * 60_000 },
    { what: "the spec's", forecast: { prewake: "30m" }, ms: 30 * 60_000 },
    { what: "the CRD's cap for one stored before the cap", forecast: { prewake: "24h" }, ms: 2 * 3_600_000 },
  ])("is $what", ({ forecast, ms }) => {
    expect(prewakeLeadMs({ targetRef: target, ...(forecast ? { forecast } : {}) })).toBe(ms);
  });

  it("is the cap the CRD enforces", () => {
    const crd = readFileSync(join(import.meta.dirname, "../manifests/crds/managedworkload.yaml"), "utf8");
    expect(crd).toContain("duration(self) <= duration('2h')");
  });
});

describe("parseDuration", () => {
  it.each([
    ["30m", 30 * 60_000],
    ["2h", 7_200_000],
    ["1h30m", 5_400_000],
    ["90s", 90_000],
    ["1.5h", 5_400_000],
    ["250ms", 250],
    ["0s", 0],
    ["168h", 7 * 24 * 3_600_000],
  ])("reads %s as %d ms", (text, ms) => {
    expect(parseDuration(text)).toBe(ms);
  });

  it.each(["", "30", "5x", "2d", "-5m", "1h 30m", "m", "1.h"])(
    "refuses %j and shows valid examples",
    (text) => {
      expect(() => parseDuration(text)).toThrow(
        /is not a duration: write a number and a unit, such as 30m, 2h/,
      );
    },
  );
});

describe("the CRD manifest and these types", () => {
  const crd = parse(
    readFileSync(join(import.meta.dirname, "../manifests/crds/managedworkload.yaml"), "utf8"),
  );
  const version = crd.spec.versions[0];
  const spec = version.schema.openAPIV3Schema.properties.spec.properties;
  const status = version.schema.openAPIV3Schema.properties.status.properties;

  it("agree on names", () => {
    expect(crd.metadata.name).toBe(managedWorkloadCrd.name);
    expect(crd.spec.group).toBe(managedWorkloadCrd.group);
    expect(version.name).toBe(managedWorkloadCrd.version);
    expect(crd.spec.names).toMatchObject({
      kind: managedWorkloadCrd.kind,
      listKind: managedWorkloadCrd.listKind,
      plural: managedWorkloadCrd.plural,
      singular: managedWorkloadCrd.singular,
    });
  });

  it("agree on phases and activity sources", () => {
    expect(status.phase.enum).toEqual([...phases]);
    expect(status.lastActivity.properties.source.enum).toEqual([...activitySources]);
    expect(spec.forecast.properties.awakeBudget.enum).toEqual([...awakeBudgets]);
    expect(spec.forecast.properties.history.enum).toEqual([...forecastHistories]);
  });

  it("agree on defaults", () => {
    expect({
      idleWindow: spec.idle.properties.window.default,
      cpuThreshold: spec.idle.properties.cpuThreshold.default,
      activeWhen: spec.idle.properties.activityQueries.items.properties.activeWhen.default,
      forecastEnabled: spec.forecast.properties.enabled.default,
      prewake: spec.forecast.properties.prewake.default,
      awakeBudget: spec.forecast.properties.awakeBudget.default,
      forecastHistory: spec.forecast.properties.history.default,
    }).toEqual(specDefaults);
  });

  it("accept every default duration", () => {
    expect(parseDuration(specDefaults.idleWindow)).toBe(30 * 60_000);
    expect(parseDuration(specDefaults.prewake)).toBe(10 * 60_000);
  });
});

describe("a ManagedWorkload as stored", () => {
  it.each([
    {
      name: "is read when it names its target",
      mw: { spec: { targetRef: { kind: "Deployment", name: "web" } } },
      why: null,
    },
    { name: "is not read without a spec", mw: {}, why: /no spec\.targetRef/ },
    { name: "is not read with a spec but no target", mw: { spec: {} }, why: /no spec\.targetRef/ },
    {
      name: "is not read when its target is not a workload kind",
      mw: { spec: { targetRef: { kind: "Job", name: "backup" } } },
      why: /does not name a Deployment or StatefulSet/,
    },
    {
      name: "is not read when its target has no name",
      mw: { spec: { targetRef: { kind: "StatefulSet", name: "" } } },
      why: /does not name a Deployment or StatefulSet/,
    },
  ])("$name", ({ mw, why }) => {
    const reason = unreadableManagedWorkload(mw as never);
    if (why === null) expect(reason).toBeNull();
    else expect(reason).toMatch(why);
  });
});
