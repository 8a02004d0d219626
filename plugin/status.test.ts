import { describe, expect, it } from "vitest";
import type { ManagedWorkload } from "../api/managedworkload.ts";
import {
  formatAge,
  formatForecast,
  formatReplicas,
  formatStatusTable,
  replicaCounts,
  type StatusRow,
  statusRows,
  type TargetReplicas,
  targetKey,
} from "./status.ts";

const now = Date.parse("2030-01-01T12:00:00Z");
const ago = (seconds: number) => new Date(now - seconds * 1000).toISOString();

function mw(
  name: string,
  opts: {
    namespace?: string;
    target?: string;
    dryRun?: boolean;
    created?: string;
    status?: ManagedWorkload["status"];
  } = {},
): ManagedWorkload {
  return {
    apiVersion: "napwake.dev/v1alpha1",
    kind: "ManagedWorkload",
    metadata: {
      name,
      namespace: opts.namespace ?? "shop",
      ...(opts.created ? { creationTimestamp: opts.created } : {}),
    },
    spec: { targetRef: { kind: "Deployment", name: opts.target ?? name }, dryRun: opts.dryRun ?? false },
    ...(opts.status ? { status: opts.status } : {}),
  };
}

/** A Paused condition, `status` since `since`. */
function pausedCondition(
  status: "True" | "False",
  reason: string,
  since: string,
): NonNullable<ManagedWorkload["status"]>["conditions"] {
  return [{ type: "Paused", status, reason, message: reason, lastTransitionTime: since }];
}

const targets = new Map<string, TargetReplicas>([
  [targetKey("shop", "Deployment", "web"), { replicas: 0, annotations: { "napwake.dev/paused-from": "3" } }],
  [targetKey("shop", "Deployment", "api"), { replicas: 2, annotations: {} }],
  // A pause (or resume) interrupted after the count was recorded: it runs its 3 replicas.
  [targetKey("shop", "Deployment", "half"), { replicas: 3, annotations: { "napwake.dev/paused-from": "3" } }],
  // Paused, its count to restore set again to 5 (what a resume restores) since status recorded 3.
  [
    targetKey("shop", "Deployment", "recounted"),
    { replicas: 0, annotations: { "napwake.dev/paused-from": "5" } },
  ],
]);

describe("formatAge", () => {
  it.each([
    [0, "0s"],
    [45, "45s"],
    [60, "1m"],
    [303, "5m3s"],
    [7_200, "2h"],
    [7_500, "2h5m"],
    [7_559, "2h5m"],
    [90_061, "1d1h"],
    [86_460, "1d"],
    [-5, "0s"],
  ])("%i seconds is %s", (seconds, text) => {
    expect(formatAge(seconds)).toBe(text);
  });
});

describe("formatForecast", () => {
  it.each([
    [{ forecast: "active-weekly", forecastSuspendedSince: null }, "active-weekly"],
    [{ forecast: "active-weekly", forecastSuspendedSince: ago(3_600) }, "active-weekly (suspended)"],
    [{ forecast: null, forecastSuspendedSince: ago(3_600) }, "- (suspended)"],
    [{ forecast: null, forecastSuspendedSince: null }, "-"],
  ])("%o shows as %s", (row, text) => {
    expect(formatForecast(row)).toBe(text);
  });
});

describe("formatReplicas", () => {
  it.each([
    [{ replicas: 3, heldReplicas: null }, "3"],
    [{ replicas: 0, heldReplicas: 3 }, "0 (3 held)"],
    [{ replicas: null, heldReplicas: 3 }, "- (3 held)"],
    [{ replicas: null, heldReplicas: null }, "-"],
  ])("%o shows as %s", (row, text) => {
    expect(formatReplicas(row)).toBe(text);
  });
});

describe("statusRows", () => {
  it("reads a paused workload: held replicas, paused since, idle for, forecast", () => {
    const [row] = statusRows(
      [
        mw("web", {
          status: {
            phase: "Paused",
            pausedFrom: 3,
            pausedAt: ago(7_500),
            lastActivity: { time: ago(9_000), source: "cpu" },
            prediction: { phase: "active-daily", nextPrewake: ago(-1_800), timeZone: "Europe/Berlin" },
            conditions: [
              {
                type: "Paused",
                status: "True",
                reason: "Idle",
                message: "paused",
                lastTransitionTime: ago(7_500),
              },
            ],
          },
        }),
      ],
      targets,
      now,
    );
    expect(row).toEqual({
      namespace: "shop",
      name: "web",
      target: "deployment/web",
      phase: "Paused",
      reason: "Idle",
      replicas: 0,
      heldReplicas: 3,
      lastActivity: ago(9_000),
      lastActivitySource: "cpu",
      idleForSeconds: 9_000,
      pausedAt: ago(7_500),
      pausedForSeconds: 7_500,
      forecast: "active-daily",
      forecastTimeZone: "Europe/Berlin",
      forecastSuspendedSince: null,
      nextPrewake: ago(-1_800),
      dryRun: false,
      dryRunSavedReplicaHours: null,
    } satisfies StatusRow);
  });

  it.each([
    [
      "no status at all",
      mw("new"),
      { phase: null, replicas: null, heldReplicas: null, idleForSeconds: null },
    ],
    [
      "held count from the target when status lost it",
      mw("x", { target: "web", status: { phase: "Pausing" } }),
      { replicas: 0, heldReplicas: 3 },
    ],
    [
      "a target that is not there",
      mw("gone", { status: { phase: "Unmanaged" } }),
      { replicas: null, heldReplicas: null },
    ],
    [
      "a time ahead of the clock as zero",
      mw("api", { status: { lastActivity: { time: ago(-30) } } }),
      { idleForSeconds: 0 },
    ],
    [
      "an unparseable time as unknown",
      mw("api", { status: { pausedAt: "soon" } }),
      { pausedForSeconds: null },
    ],
    [
      "a prediction without a phase as none",
      mw("api", { status: { prediction: { next: 1 } } }),
      { forecast: null },
    ],
    [
      "a suspended forecast's advice: since when",
      mw("api", {
        status: {
          prediction: {
            phase: "active-weekly",
            adviceSuspended: { since: ago(7_200), message: "forecast activity did not come" },
          },
        },
      }),
      { forecast: "active-weekly", forecastSuspendedSince: ago(7_200) },
    ],
    [
      "a suspension without a time as none, as the controller reads it",
      mw("api", { status: { prediction: { phase: "active-weekly", adviceSuspended: { message: "?" } } } }),
      { forecastSuspendedSince: null },
    ],
    [
      "no pre-wake planned as none",
      mw("api", { status: { prediction: { phase: "active-weekly" } } }),
      { nextPrewake: null },
    ],
    ["dry-run with nothing saved yet as zero", mw("api", { dryRun: true }), { dryRunSavedReplicaHours: 0 }],
    [
      "the operator's --dry-run, which only the status shows, with what it saved",
      mw("api", { status: { phase: "DryRun", dryRun: { heldReplicaHours: 3 } } }),
      { dryRun: true, dryRunSavedReplicaHours: 3 },
    ],
    [
      "no replicas held by a workload that runs, whatever count its target records",
      mw("half", { status: { phase: "Awake" } }),
      { replicas: 3, heldReplicas: null },
    ],
    [
      "no replicas held by a workload that runs, though status still holds the count of a pause (its write lost)",
      mw("api", { status: { phase: "Paused", pausedFrom: 3 } }),
      { replicas: 2, heldReplicas: null },
    ],
    [
      "the count a resume restores, its target's, over the one status recorded",
      mw("recounted", { status: { phase: "Paused", pausedFrom: 3 } }),
      { replicas: 0, heldReplicas: 5 },
    ],
    [
      "the count status recorded when the target could not be read",
      mw("unread", { status: { phase: "Paused", pausedFrom: 3 } }),
      { replicas: null, heldReplicas: 3 },
    ],
    [
      "why an awake workload is awake: its Paused condition's reason",
      mw("api", {
        status: {
          phase: "Awake",
          conditions: [
            {
              type: "Paused",
              status: "False",
              reason: "ForecastVeto",
              message: "vetoed",
              lastTransitionTime: ago(60),
            },
          ],
        },
      }),
      { reason: "ForecastVeto" },
    ],
    [
      "why an unmanaged workload is: its Managed condition's reason",
      mw("api", {
        status: {
          phase: "Unmanaged",
          conditions: [
            {
              type: "Paused",
              status: "False",
              reason: "Active",
              message: "awake",
              lastTransitionTime: ago(60),
            },
            {
              type: "Managed",
              status: "False",
              reason: "ScaledToZeroOutside",
              message: "scaled to zero outside Napwake",
              lastTransitionTime: ago(60),
            },
          ],
        },
      }),
      { reason: "ScaledToZeroOutside" },
    ],
    ["no conditions yet as no reason", mw("api", { status: { phase: "Awake" } }), { reason: null }],
  ])("reads %s", (_, managed, expected) => {
    expect(statusRows([managed], targets, now)[0]).toMatchObject(expected);
  });

  // The controller's idle clock (decide.ts): an awake workload is idle since its last activity or its last
  // wake, whichever is later; a paused one shows the time since its last activity.
  it.each<[string, ManagedWorkload, number | null]>([
    [
      "awake without activity: since the wake",
      mw("api", {
        created: ago(86_400),
        status: { phase: "Awake", conditions: pausedCondition("False", "Resumed", ago(2_340)) },
      }),
      2_340,
    ],
    [
      "awake, never paused, without activity: since adoption",
      mw("api", { created: ago(2_340), status: { phase: "Awake" } }),
      2_340,
    ],
    [
      "awake with activity after the wake: since the activity",
      mw("api", {
        status: {
          phase: "Awake",
          lastActivity: { time: ago(300) },
          conditions: pausedCondition("False", "Active", ago(7_200)),
        },
      }),
      300,
    ],
    [
      "pre-woken after its last activity: since the wake",
      mw("api", {
        status: {
          phase: "Awake",
          lastActivity: { time: ago(50_000) },
          conditions: pausedCondition("False", "PreWake", ago(600)),
        },
      }),
      600,
    ],
    [
      "in dry-run, like awake",
      mw("api", { dryRun: true, created: ago(900), status: { phase: "DryRun" } }),
      900,
    ],
    [
      "awake while status still says paused (a lost write): since the activity only",
      mw("api", {
        created: ago(86_400),
        status: {
          phase: "Awake",
          lastActivity: { time: ago(9_000) },
          conditions: pausedCondition("True", "Idle", ago(600)),
        },
      }),
      9_000,
    ],
    [
      "paused: since the activity, not the pause",
      mw("web", {
        created: ago(86_400),
        status: {
          phase: "Paused",
          pausedAt: ago(600),
          lastActivity: { time: ago(9_000) },
          conditions: pausedCondition("True", "Idle", ago(600)),
        },
      }),
      9_000,
    ],
    [
      "paused without activity: unknown",
      mw("web", {
        created: ago(86_400),
        status: {
          phase: "Paused",
          pausedAt: ago(600),
          conditions: pausedCondition("True", "Idle", ago(600)),
        },
      }),
      null,
    ],
    [
      "unmanaged without activity: unknown, the clock is not running",
      mw("api", { created: ago(86_400), status: { phase: "Unmanaged" } }),
      null,
    ],
  ])("counts idleness %s", (_, managed, seconds) => {
    expect(statusRows([managed], targets, now)[0]?.idleForSeconds).toBe(seconds);
  });

  it("sorts by namespace, then name", () => {
    const rows = statusRows(
      [mw("b", { namespace: "z" }), mw("c", { namespace: "a" }), mw("a", { namespace: "z" })],
      targets,
      now,
    );
    expect(rows.map((r) => `${r.namespace}/${r.name}`)).toEqual(["a/c", "z/a", "z/b"]);
  });
});

describe("formatStatusTable", () => {
  const rows = statusRows(
    [
      mw("web", {
        status: { phase: "Paused", pausedFrom: 3, pausedAt: ago(7_500), lastActivity: { time: ago(9_000) } },
      }),
      mw("api", {
        dryRun: true,
        status: { phase: "DryRun", lastActivity: { time: ago(45) }, dryRun: { heldReplicaHours: 12.3456 } },
      }),
    ],
    targets,
    now,
  );

  it("aligns columns, one row per ManagedWorkload, missing values as -", () => {
    expect(formatStatusTable(rows, { allNamespaces: false })).toBe(
      [
        "NAME   TARGET           PHASE    REASON   REPLICAS     IDLE FOR   PAUSED SINCE   FORECAST   DRY-RUN SAVED",
        "api    deployment/api   DryRun   -        2            45s        -              -          12.35 replica-h",
        "web    deployment/web   Paused   -        0 (3 held)   2h30m      2h5m           -          -",
        "",
      ].join("\n"),
    );
  });

  it("marks a forecast whose advice is suspended, and keeps the pre-wake out of the table", () => {
    const [, row] = formatStatusTable(
      statusRows(
        [
          mw("api", {
            status: {
              phase: "Paused",
              prediction: {
                phase: "active-weekly",
                nextPrewake: ago(-600),
                adviceSuspended: { since: ago(3_600), message: "forecast activity did not come" },
              },
            },
          }),
        ],
        targets,
        now,
      ),
      { allNamespaces: false },
    ).split("\n");
    expect(row).toMatch(/\sactive-weekly \(suspended\)\s+-$/);
  });

  it("adds a NAMESPACE column with -A", () => {
    const [header, first] = formatStatusTable(rows, { allNamespaces: true }).split("\n");
    expect(header).toMatch(/^NAMESPACE {3}NAME {3}TARGET/);
    expect(first).toMatch(/^shop {8}api {4}deployment\/api/);
  });
});

describe("replicaCounts", () => {
  it("keeps one kind's counts when the other cannot be listed, and warns of that one", async () => {
    const warnings: string[] = [];
    const counts = await replicaCounts(
      [
        {
          kind: "Deployment",
          list: async () => ({
            items: [{ metadata: { namespace: "shop", name: "web" }, spec: { replicas: 4 } }],
          }),
        },
        {
          kind: "StatefulSet",
          list: async () => {
            throw new Error("no permission to list statefulsets.apps in namespace shop");
          },
        },
      ],
      (text) => warnings.push(text),
    );
    expect(counts.get(targetKey("shop", "Deployment", "web"))).toEqual({ replicas: 4, annotations: {} });
    expect(warnings).toEqual([
      'warning: no permission to list statefulsets.apps in namespace shop; their replicas are shown as "-"\n',
    ]);
  });
});
