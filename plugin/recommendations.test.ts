import { describe, expect, it } from "vitest";
import type {
  ContainerRecommendation,
  ResourceModeStatus,
  Rightsizing,
  RightsizingStatus,
} from "../api/rightsizing.ts";
import type { WorkloadKind } from "../api/rightsizingpolicy.ts";
import {
  explain,
  formatModes,
  formatRecommendationsTable,
  noRecommendationsMessage,
  recommendationRows,
  selectsWorkload,
} from "./recommendations.ts";

function rsz(
  name: string,
  opts: { namespace?: string; kind?: WorkloadKind; status?: RightsizingStatus } = {},
): Rightsizing {
  const kind = opts.kind ?? "Deployment";
  return {
    apiVersion: "napwake.dev/v1alpha1",
    kind: "Rightsizing",
    metadata: { name: `${name}.${kind.toLowerCase()}`, namespace: opts.namespace ?? "shop" },
    spec: { targetRef: { kind, name } },
    ...(opts.status ? { status: opts.status } : {}),
  };
}

const mode = (m: ResourceModeStatus["mode"], more: Partial<ResourceModeStatus> = {}): ResourceModeStatus => ({
  mode: m,
  requested: m,
  source: "global-default",
  ...more,
});
const audit = { cpu: mode("audit"), memory: mode("audit") };
const blockedCpu = {
  cpu: mode("audit", { requested: "auto-patch", degradedBy: ["in-place-resize-unavailable"] }),
  memory: mode("auto-patch"),
};
const blockedBoth = {
  cpu: mode("audit", { requested: "auto-patch", degradedBy: ["metrics-source-unhealthy"] }),
  memory: mode("audit", {
    requested: "auto-patch",
    degradedBy: ["metrics-source-unhealthy", "insufficient-history"],
  }),
};

const app: ContainerRecommendation = {
  name: "app",
  current: { cpuRequest: "500m", memoryRequest: "512Mi", memoryLimit: "1Gi" },
  target: { cpuRequest: "300m", memoryRequest: "384Mi", memoryLimit: "1126Mi" },
  state: "ok",
  historyHours: 200,
  reasons: ["cpu-percentile-of-decayed-usage", "memory-percentile-of-window-peaks", "paused-time-excluded"],
};
const sidecar: ContainerRecommendation = {
  name: "sidecar",
  current: {},
  target: { cpuRequest: "10m", memoryRequest: "32Mi" },
  state: "insufficient-history",
  historyHours: 3,
  reasons: ["insufficient-history"],
};

describe("formatModes", () => {
  it.each([
    ["no modes yet", null, "-"],
    ["audit for both", audit, "audit/audit"],
    ["a CPU auto-patch degraded to audit", blockedCpu, "audit*/auto-patch"],
    ["both degraded", blockedBoth, "audit*/audit*"],
    ["off for memory", { cpu: mode("auto-patch"), memory: mode("off") }, "auto-patch/off"],
  ])("shows %s as %s", (_, modes, text) => {
    expect(formatModes(modes)).toBe(text);
  });
});

describe("explain (the WHY column)", () => {
  it.each([
    ["a workload the recommender has not seen", null, audit, "the recommender has not run yet"],
    ["too little history, with how much", sidecar, blockedCpu, "insufficient history (3h)"],
    [
      "too little history of under an hour",
      { ...sidecar, historyHours: 0.75 },
      audit,
      "insufficient history (45m)",
    ],
    [
      "too little history without hours",
      { name: "x", current: {}, state: "insufficient-history" as const },
      audit,
      "insufficient history",
    ],
    ["one resource blocked", app, blockedCpu, "cpu auto-patch blocked: in-place-resize-unavailable"],
    [
      "both blocked, each check once",
      app,
      blockedBoth,
      "auto-patch blocked: metrics-source-unhealthy, insufficient-history",
    ],
    [
      "a degraded mode without checks",
      app,
      { cpu: mode("auto-patch"), memory: mode("audit", { requested: "auto-patch" }) },
      "memory auto-patch blocked",
    ],
    ["a container without a recommendation", { name: "x", current: {} }, audit, "no recommendation yet"],
    [
      "the first two reason codes and how many more",
      app,
      audit,
      "cpu-percentile-of-decayed-usage, memory-percentile-of-window-peaks (+1)",
    ],
    ["a single reason code", { ...app, reasons: ["cpu-minimum"] }, audit, "cpu-minimum"],
    ["no reason codes", { ...app, reasons: [] }, null, "-"],
  ])("says %s", (_, container, modes, text) => {
    expect(explain(container, modes)).toBe(text);
  });
});

describe("selectsWorkload", () => {
  const web = rsz("web");
  const db = rsz("db", { kind: "StatefulSet" });
  it.each([
    ["deployment/web the Deployment", { kind: "Deployment" as const, name: "web" }, web, true],
    ["deployment/db not the StatefulSet", { kind: "Deployment" as const, name: "db" }, db, false],
    ["statefulset/db the StatefulSet", { kind: "StatefulSet" as const, name: "db" }, db, true],
    ["a bare name a workload of either kind", { kind: null, name: "db" }, db, true],
    ["a bare name the Rightsizing's own name", { kind: null, name: "db.statefulset" }, db, true],
    ["a bare name no other workload", { kind: null, name: "api" }, web, false],
  ])("%s: %s", (_, ref, item, selected) => {
    expect(selectsWorkload(ref, item)).toBe(selected);
  });
});

describe("recommendationRows", () => {
  it("gives one row per container, sorted by namespace, workload and container", () => {
    const rows = recommendationRows(
      [
        rsz("web", { namespace: "z", status: { containers: [sidecar, app] } }),
        rsz("db", { namespace: "z", kind: "StatefulSet" }),
        rsz("api", { namespace: "a", status: { containers: [app] } }),
      ],
      null,
    );
    expect(rows.map((r) => `${r.namespace} ${r.workload} ${r.container?.name ?? "-"}`)).toEqual([
      "a deployment/api app",
      "z deployment/web app",
      "z deployment/web sidecar",
      "z statefulset/db -",
    ]);
  });

  it("keeps only the workload asked for", () => {
    const rows = recommendationRows(
      [rsz("web", { status: { containers: [app] } }), rsz("api", { status: { containers: [app] } })],
      { kind: "Deployment", name: "web" },
    );
    expect(rows.map((r) => r.workload)).toEqual(["deployment/web"]);
  });
});

describe("formatRecommendationsTable", () => {
  const rows = recommendationRows(
    [
      rsz("web", { status: { modes: blockedCpu, containers: [app, sidecar] } }),
      rsz("db", { kind: "StatefulSet", status: { modes: audit } }),
      rsz("api", { status: { modes: audit, containers: [{ ...app, target: undefined, reasons: [] }] } }),
    ],
    null,
  );

  it("aligns one row per container, with values, changes, modes and why", () => {
    expect(formatRecommendationsTable(rows, { allNamespaces: false })).toBe(
      [
        "WORKLOAD         CONTAINER   CURRENT          RECOMMENDED        CHANGE           MODE                WHY",
        "deployment/api   app         500m/512Mi/1Gi   -                  -                audit/audit         no recommendation yet",
        "deployment/web   app         500m/512Mi/1Gi   300m/384Mi/1.1Gi   -40%/-25%/+10%   audit*/auto-patch   cpu auto-patch blocked: in-place-resize-unavailable",
        "deployment/web   sidecar     -/-/-            10m/32Mi/-         new/new/-        audit*/auto-patch   insufficient history (3h)",
        "statefulset/db   -           -                -                  -                audit/audit         the recommender has not run yet",
        "",
      ].join("\n"),
    );
  });

  it("adds a NAMESPACE column with -A", () => {
    const [header, first] = formatRecommendationsTable(rows, { allNamespaces: true }).split("\n");
    expect(header).toMatch(/^NAMESPACE {3}WORKLOAD {9}CONTAINER/);
    expect(first).toMatch(/^shop {8}deployment\/api {3}app/);
  });
});

describe("noRecommendationsMessage", () => {
  const off = (them: string, their: string) =>
    `rightsizing is off for ${them} (a RightsizingPolicy, ${their} napwake.dev/cpu-mode and memory-mode annotations, or the operator's defaults; never in kube-* namespaces), or the recommender has not run yet (it reads Prometheus, every hour).`;
  it.each([
    [
      "shop",
      null,
      `No Rightsizing objects in namespace shop: no Deployment or StatefulSet there, ${off("them", "their")} Use -A to look in every namespace.\n`,
    ],
    [
      null,
      null,
      `No Rightsizing objects in any namespace: no Deployment or StatefulSet there, ${off("them", "their")}\n`,
    ],
    [
      "shop",
      { kind: "StatefulSet" as const, name: "db" },
      `No Rightsizing for statefulset/db in namespace shop: the workload is not there, ${off("it", "its")}\n`,
    ],
    [
      null,
      { kind: null, name: "web" },
      `No Rightsizing for web in any namespace: the workload is not there, ${off("it", "its")}\n`,
    ],
  ])("in %s for %o", (namespace, ref, text) => {
    expect(noRecommendationsMessage(namespace, ref)).toBe(text);
  });
});
