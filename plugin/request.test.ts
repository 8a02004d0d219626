import { describe, expect, it } from "vitest";
import type { ManagedWorkload } from "../api/managedworkload.ts";
import type { Action } from "./args.ts";
import {
  clusterNow,
  notFoundMessage,
  notManagedMessage,
  planRequest,
  requestTime,
  type TargetFacts,
  targetMissingMessage,
} from "./request.ts";

const now = Date.parse("2030-01-01T12:00:00Z");
const at = { stampMs: now, clusterNowMs: now };

function mw(opts: { dryRun?: boolean; status?: ManagedWorkload["status"] } = {}): ManagedWorkload {
  return {
    apiVersion: "napwake.dev/v1alpha1",
    kind: "ManagedWorkload",
    metadata: { name: "web.deployment", namespace: "shop" },
    spec: { targetRef: { kind: "Deployment", name: "web" }, dryRun: opts.dryRun ?? false },
    ...(opts.status ? { status: opts.status } : {}),
  };
}

const awake: TargetFacts = { kind: "Deployment", name: "web", replicas: 3, annotations: {} };
const paused: TargetFacts = { ...awake, replicas: 0, annotations: { "napwake.dev/paused-from": "3" } };
const zeroOutside: TargetFacts = { ...awake, replicas: 0 };
const unmanaged = mw({
  status: {
    phase: "Unmanaged",
    conditions: [
      {
        type: "Managed",
        status: "False",
        reason: "Protected",
        message: "spec.protected is true",
        lastTransitionTime: "2030-01-01T00:00:00Z",
      },
    ],
  },
});

describe("clusterNow", () => {
  it.each([
    {
      name: "is the API server's Date when it sent one",
      date: "Wed, 02 Dec 2026 10:00:00 GMT",
      want: Date.parse("2026-12-02T10:00:00Z"),
    },
    { name: "is the local clock without one", date: undefined, want: 5 },
    { name: "is the local clock when the Date cannot be read", date: "soon", want: 5 },
  ])("$name", ({ date, want }) => {
    expect(clusterNow(date, 5)).toBe(want);
  });
});

describe("requestTime", () => {
  const local = Date.parse("2030-01-01T11:58:00.250Z");
  const withPause = (stamp: string) => ({
    ...mw(),
    metadata: { ...mw().metadata, annotations: { "napwake.dev/pause-requested": stamp } },
  });
  it.each([
    [
      "the API server's second over a laptop clock 2 minutes behind",
      "Wed, 01 Jan 2030 12:00:00 GMT",
      null,
      Date.parse("2030-01-01T12:00:00Z"),
    ],
    ["the local clock over a server second it is already past", "Wed, 01 Jan 2030 11:58:00 GMT", null, local],
    ["the local clock without a Date header", undefined, null, local],
    ["the local clock with an unreadable one", "soon", null, local],
    [
      "a millisecond after the other request, stamped in the same millisecond (the later one wins)",
      undefined,
      local,
      local + 1,
    ],
    [
      "the API server's second, not a laptop clock 6 minutes fast (the webhook would refuse it)",
      "Wed, 01 Jan 2030 11:52:00 GMT",
      null,
      Date.parse("2030-01-01T11:52:00Z"),
    ],
    [
      "no regard for an other request stamped far ahead (it is removed, not followed)",
      "Wed, 01 Jan 2030 11:58:00 GMT",
      Date.parse("2031-01-01T00:00:00Z"),
      local,
    ],
  ])("stamps with %s", (_, date, other, expected) => {
    const managed = other === null ? mw() : withPause(new Date(other).toISOString());
    expect(requestTime(date, local, "resume", managed).stampMs).toBe(expected);
  });

  it("judges an other request against the cluster's clock, not a laptop clock a little ahead of it", () => {
    // The laptop is 4 minutes ahead; a pause request 7 minutes ahead of the cluster would be refused if followed.
    const server = "Wed, 01 Jan 2030 12:00:00 GMT";
    const laptop = Date.parse("2030-01-01T12:04:00Z");
    const stray = withPause("2030-01-01T12:07:00Z");
    const time = requestTime(server, laptop, "resume", stray);
    expect(time).toEqual({ stampMs: laptop, clusterNowMs: Date.parse("2030-01-01T12:00:00Z") });
    expect(planRequest("resume", stray, paused, time).patch.metadata.annotations).toEqual({
      "napwake.dev/resume-requested": "2030-01-01T12:04:00.000Z",
      "napwake.dev/pause-requested": null,
    });
  });

  it.each<{ what: string; action: Action; status: ManagedWorkload["status"]; after: string }>([
    {
      what: "a pause after the workload's last wake",
      action: "pause",
      status: {
        phase: "Awake",
        conditions: [
          {
            type: "Paused",
            status: "False",
            reason: "Resumed",
            message: "woken",
            lastTransitionTime: "2030-01-01T12:00:00.600Z",
          },
        ],
      },
      after: "2030-01-01T12:00:00.600Z",
    },
    {
      what: "a resume after the workload's last pause",
      action: "resume",
      status: { phase: "Paused", pausedFrom: 2, pausedAt: "2030-01-01T12:00:00.700Z" },
      after: "2030-01-01T12:00:00.700Z",
    },
  ])("stamps $what, which the server's second may cut below", ({ action, status, after }) => {
    const behind = Date.parse("2030-01-01T11:59:59Z");
    const time = requestTime("Wed, 01 Jan 2030 12:00:00 GMT", behind, action, mw({ status }));
    expect(time.stampMs).toBe(Date.parse(after) + 1);
  });
});

describe("planRequest", () => {
  it("removes the other request when it was stamped far ahead, and says so: it would win until its time came", () => {
    const stale = {
      ...mw(),
      metadata: { ...mw().metadata, annotations: { "napwake.dev/pause-requested": "2031-01-01T00:00:00Z" } },
    };
    const plan = planRequest("resume", stale, paused, at);
    expect(plan.patch).toEqual({
      metadata: {
        annotations: {
          "napwake.dev/resume-requested": "2030-01-01T12:00:00.000Z",
          "napwake.dev/pause-requested": null,
        },
      },
    });
    expect(plan.message).toMatch(
      /\(removed napwake.dev\/pause-requested=2031-01-01T00:00:00.000Z, stamped by a clock far ahead\)$/,
    );
  });

  it("keeps an other request a clock a little ahead stamped", () => {
    const ahead = {
      ...mw(),
      metadata: { ...mw().metadata, annotations: { "napwake.dev/pause-requested": "2030-01-01T12:04:00Z" } },
    };
    expect(Object.keys(planRequest("resume", ahead, paused, at).patch.metadata.annotations)).toEqual([
      "napwake.dev/resume-requested",
    ]);
  });

  it.each([
    ["pause", "pause-requested"],
    ["resume", "resume-requested"],
  ] as const)("%s sets only napwake.dev/%s to now, as RFC 3339", (action, key) => {
    expect(planRequest(action, mw(), awake, at).patch).toEqual({
      metadata: { annotations: { [`napwake.dev/${key}`]: "2030-01-01T12:00:00.000Z" } },
    });
  });

  it("makes the patch on the version of the ManagedWorkload it read, so a pause made meanwhile is read again", () => {
    const read = { ...mw(), metadata: { ...mw().metadata, resourceVersion: "4711" } };
    expect(planRequest("pause", read, awake, at).patch.metadata.resourceVersion).toBe("4711");
  });

  it.each<[string, Action, ManagedWorkload, TargetFacts, string]>([
    [
      "pause, awake: overrides the forecast's veto and is not pre-woken",
      "pause",
      mw(),
      awake,
      "deployment/web will be paused at the next reconcile (replicas 3 → 0), whatever the forecast says; new activity (a napwake.dev/last-request or napwake.dev/activity stamp on it, an active activity query) or kubectl napwake resume wakes it, not the forecast",
    ],
    [
      "pause, already paused",
      "pause",
      mw(),
      paused,
      "deployment/web is already paused (0 replicas, 3 held); from now on the forecast does not pre-wake it: new activity (a napwake.dev/last-request or napwake.dev/activity stamp on it, an active activity query) or kubectl napwake resume wakes it",
    ],
    [
      "pause, dry-run",
      "pause",
      mw({ dryRun: true }),
      awake,
      "deployment/web is in dry-run: the next reconcile records that it would pause (replicas 3 → 0) but does not scale",
    ],
    [
      "pause, in the operator's --dry-run (the status says so, not the spec)",
      "pause",
      mw({ status: { phase: "DryRun" } }),
      awake,
      "deployment/web is in dry-run: the next reconcile records that it would pause (replicas 3 → 0) but does not scale",
    ],
    [
      "pause, held by a ScaledObject someone else holds, which blocks a pause by hand too",
      "pause",
      mw({
        status: {
          phase: "Awake",
          conditions: [
            {
              type: "Paused",
              status: "False",
              reason: "HeldElsewhere",
              message:
                "not pausing: ScaledObject web is held at 2 replicas (autoscaling.keda.sh/paused-replicas) by someone else",
              lastTransitionTime: "2030-01-01T11:00:00Z",
            },
          ],
        },
      }),
      awake,
      "deployment/web cannot be paused while ScaledObject web is held at 2 replicas (autoscaling.keda.sh/paused-replicas) by someone else; the pause request is recorded and made once that changes",
    ],
    [
      "pause, not under management",
      "pause",
      unmanaged,
      awake,
      "deployment/web is not under Napwake's management right now (spec.protected is true); the pause request is recorded but not acted on",
    ],
    [
      "pause, scaled to zero outside",
      "pause",
      mw(),
      zeroOutside,
      "deployment/web is at 0 replicas, scaled to zero outside Napwake; the pause request is recorded and changes nothing",
    ],
    [
      "resume, paused",
      "resume",
      mw(),
      paused,
      "deployment/web will be resumed at the next reconcile (replicas 0 → 3)",
    ],
    [
      "resume, paused but unmanaged: the controller resumes it when letting go",
      "resume",
      unmanaged,
      paused,
      "deployment/web will be resumed at the next reconcile (replicas 0 → 3)",
    ],
    [
      "resume, already awake",
      "resume",
      mw(),
      awake,
      "deployment/web is already awake (3 replicas); the resume request counts as activity and restarts its idle window",
    ],
    [
      "resume, scaled to zero outside",
      "resume",
      mw(),
      zeroOutside,
      "deployment/web is at 0 replicas, scaled to zero outside Napwake: Napwake has no count to restore; scale it up yourself (kubectl scale deployment/web --replicas=N)",
    ],
  ])("%s", (_, action, managed, target, message) => {
    expect(planRequest(action, managed, target, at).message).toBe(message);
  });
});

describe("error messages", () => {
  it.each([
    [
      notManagedMessage("Deployment", "web", "shop"),
      "deployment/web is not managed by Napwake: label it napwake.dev/managed=true or create a ManagedWorkload",
    ],
    [
      notManagedMessage("Deployment", "web", "shop", {
        "napwake.dev/managed": "true",
        "napwake.dev/ignore": "",
      }),
      "deployment/web is not managed by Napwake: it is labelled napwake.dev/ignore, which keeps Napwake away; remove that label (kubectl -n shop label deployment/web napwake.dev/ignore-)",
    ],
    [
      notManagedMessage("Deployment", "web", "shop", { "napwake.dev/ignore": "" }),
      "deployment/web is not managed by Napwake: it is labelled napwake.dev/ignore, which keeps Napwake away; remove that label (kubectl -n shop label deployment/web napwake.dev/ignore-), then label it napwake.dev/managed=true or create a ManagedWorkload",
    ],
    [
      notManagedMessage("StatefulSet", "db", "shop", { "napwake.dev/managed": "true" }),
      "statefulset/db is not managed by Napwake yet: it is labelled napwake.dev/managed=true but has no ManagedWorkload; the operator makes one within seconds, and if it does not, its Events say why (kubectl -n shop get events --field-selector involvedObject.name=db)",
    ],
    [notFoundMessage("StatefulSet", "db", "shop"), "statefulset/db not found in namespace shop"],
    [
      notFoundMessage(null, "nosuch", "shop"),
      "no Deployment, ManagedWorkload or StatefulSet named nosuch in namespace shop",
    ],
    [
      notFoundMessage(null, "hello", "default", ["demo"]),
      "no Deployment, ManagedWorkload or StatefulSet named hello in namespace default; it is managed in namespace demo: add -n demo",
    ],
    [
      targetMissingMessage(mw()),
      "ManagedWorkload web.deployment targets deployment/web, which does not exist in namespace shop: nothing to pause or resume",
    ],
  ])("%s", (actual, expected) => {
    expect(actual).toBe(expected);
  });
});
