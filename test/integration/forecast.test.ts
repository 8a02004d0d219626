import { EventsV1Api } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { annotations } from "../../api/keys.ts";
import type { ManagedWorkload } from "../../api/managedworkload.ts";
import type { ManagedWorkloadController } from "../../controllers/managedworkload/controller.ts";
import { dailyPatternState } from "../../controllers/managedworkload/forecast-fixtures.ts";
import type { PredictionStatus } from "../../controllers/managedworkload/forecasting.ts";
import {
  type Clients,
  clusterClients,
  createTestNamespace,
  deleteTestNamespace,
  eventually,
} from "./cluster.ts";
import {
  awakeSince,
  createManagedWorkloadWithStatus,
  installManagedWorkloadCrd,
  managedWorkload,
  managedWorkloadApi,
  readManagedWorkload,
  shiftedClock,
  startController,
} from "./operator-support.ts";
import { httpDeployment } from "./workloads.ts";

const minute = 60_000;
const hour = 60 * minute;
const day = 24 * hour;

/** The next 09:40 UTC at least an hour away: twenty minutes before the learned traffic. */
function next0940(nowMs: number): number {
  const d = new Date(nowMs + hour);
  const at = Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate(), 9, 40);
  return at >= nowMs + hour ? at : at + day;
}

/**
 * The forecast in the operator, on the real control plane, with time simulated: a workload that learned a
 * daily pattern is not paused just before its traffic and is woken ahead of it, and what the engine learned
 * survives an operator restart.
 */
describe("the forecast in the ManagedWorkload reconciler", () => {
  let clients: Clients;
  let namespace: string;
  let controller: ManagedWorkloadController | undefined;
  const clock = shiftedClock();

  const mw = (name: string) => readManagedWorkload(clients, namespace, `${name}.deployment`);
  const prediction = async (name: string) =>
    (await mw(name)).status?.prediction as PredictionStatus | undefined;
  const pausedCondition = async (name: string) =>
    (await mw(name)).status?.conditions?.find((c) => c.type === "Paused");

  beforeAll(async () => {
    clients = clusterClients();
    await installManagedWorkloadCrd(clients);
    namespace = await createTestNamespace(clients, "forecast");
    clock.advance(next0940(Date.now()) - Date.now());
    const state = dailyPatternState(clock.now(), 21);
    const savedAt = new Date(clock.now()).toISOString();

    for (const name of ["veto", "prewake"]) {
      await clients.apps.createNamespacedDeployment({
        namespace,
        body: httpDeployment({ namespace, name, replicas: 2, cpu: "5m" }),
      });
    }
    // prewake: paused from 2 replicas an hour ago, as Napwake leaves a workload it paused.
    await clients.apps.patchNamespacedDeployment({
      namespace,
      name: "prewake",
      body: [{ op: "add", path: `/metadata/annotations`, value: { [annotations.pausedFrom]: "2" } }],
    });
    await clients.apps.patchNamespacedDeploymentScale({
      namespace,
      name: "prewake",
      body: [{ op: "replace", path: "/spec/replicas", value: 0 }],
    });
    const pausedAt = new Date(clock.now() - hour).toISOString();
    const statuses: Record<string, ManagedWorkload["status"]> = {
      // veto: awake and idle since 07:40, well past its 30-minute idle window.
      veto: {
        ...awakeSince(clock.now() - 2 * hour),
        prediction: { phase: "learning", confidence: 0, state, savedAt },
      },
      prewake: {
        phase: "Paused",
        pausedFrom: 2,
        pausedAt,
        conditions: [
          {
            type: "Paused",
            status: "True",
            reason: "Idle",
            message: "paused from 2 replicas",
            lastTransitionTime: pausedAt,
          },
        ],
        // A threshold the budget had steered before this operator started.
        prediction: { phase: "learning", confidence: 0, state, savedAt, activityThreshold: 0.5 },
      },
    };
    for (const name of ["veto", "prewake"]) {
      await createManagedWorkloadWithStatus(
        clients,
        managedWorkload(namespace, `${name}.deployment`, name, {
          idle: { window: "30m" },
          // veto keeps its 30-minute window while trusted (so no awake budget); prewake has the default,
          // half of it, which gives the awake budget something to spend.
          ...(name === "veto" ? { forecast: { idleWindow: "30m" } } : {}),
        }),
        statuses[name],
      );
    }
    // Started once the saved states are in place, as an operator that restarts finds them.
    controller = await startController(clients, clock);
  });
  afterAll(async () => {
    await controller?.stop();
    await deleteTestNamespace(clients, namespace);
  });

  it("restores the learned state and forecasts the next traffic", async () => {
    const p = await eventually("an active forecast", async () => {
      const found = await prediction("veto");
      return found?.phase.startsWith("active") ? found : undefined;
    });
    expect(p.nextActivity).toMatch(/T10:00:00\.000Z$/);
    expect(p.nextPrewake).toMatch(/T09:50:00\.000Z$/);
    expect(p.confidence).toBeGreaterThan(0);
    // The awake budget shows the chance the forecast acts from, restored from status, where a shorter
    // trusted window gives it something to spend; without one the fixed chance applies and nothing is shown.
    expect(p.activityThreshold).toBeUndefined();
    const budgeted = await eventually("the budgeted workload's forecast", async () => {
      const found = await prediction("prewake");
      return found?.phase.startsWith("active") ? found : undefined;
    });
    expect(budgeted.activityThreshold).toBe(0.5);
  });

  it("does not pause an idle workload twenty minutes before its forecast traffic", async () => {
    const c = await eventually("the pause vetoed", async () => {
      const found = await pausedCondition("veto");
      return found?.reason === "ForecastVeto" ? found : undefined;
    });
    expect(c.status).toBe("False");
    expect(c.message).toMatch(/pause vetoed: .*T10:00:00/);
    const vetoed = await eventually("the PauseVetoed Event", async () => {
      const events = await clients.kc.makeApiClient(EventsV1Api).listNamespacedEvent({ namespace });
      const found = events.items.filter(
        (e) => e.regarding?.name === "veto.deployment" && e.reason === "PauseVetoed",
      );
      return found.length > 0 ? found : undefined;
    });
    expect(vetoed.map((e) => e.note)).toEqual([
      expect.stringMatching(/^idle for the idle window but not paused/),
    ]);
    const d = await clients.apps.readNamespacedDeployment({ namespace, name: "veto" });
    expect(d.spec?.replicas).toBe(2);
  });

  it("wakes a paused workload ahead of its forecast traffic, not before the lead time", async () => {
    // 09:40: the pre-wake is scheduled for 09:50; nothing wakes yet.
    await new Promise((r) => setTimeout(r, 6_000));
    expect((await clients.apps.readNamespacedDeployment({ namespace, name: "prewake" })).spec?.replicas).toBe(
      0,
    );
    clock.advance(11 * minute);
    const resumed = await eventually("pre-woken, as its Event says", async () => {
      const events = await clients.kc.makeApiClient(EventsV1Api).listNamespacedEvent({ namespace });
      return events.items.find((e) => e.regarding?.name === "prewake.deployment" && e.reason === "PreWake");
    });
    expect(resumed.note).toMatch(/resumed to 2 replicas: pre-wake: activity forecast from .*T10:00:00/);
    const d = await clients.apps.readNamespacedDeployment({ namespace, name: "prewake" });
    expect(d.spec?.replicas).toBe(2);
    expect(d.metadata?.annotations?.[annotations.pausedFrom]).toBeUndefined();
  });

  it("keeps what it learned through an operator restart", async () => {
    const before = await prediction("veto");
    const thresholdBefore = (await prediction("prewake"))?.activityThreshold;
    expect(thresholdBefore).toBe(0.5);
    await controller?.stop();
    controller = await startController(clients, clock);
    clock.advance(minute);
    await eventually("the new operator's forecast", async () => {
      const p = await prediction("veto");
      return p?.phase.startsWith("active") && p.state !== undefined ? p : undefined;
    });
    const after = await prediction("veto");
    expect(after?.nextActivity).toBe(before?.nextActivity);
    expect((await prediction("prewake"))?.activityThreshold).toBe(thresholdBefore);
    expect((await pausedCondition("veto"))?.reason).toBe("ForecastVeto");
    const events = await clients.kc.makeApiClient(EventsV1Api).listNamespacedEvent({ namespace });
    expect(events.items.map((e) => e.reason)).not.toContain("ForecastStateDiscarded");
  });
  it("places the learned seasons by spec.forecast.timeZone once it is set, and says so once", async () => {
    const before = await prediction("veto");
    await clients.custom.patchNamespacedCustomObject({
      ...managedWorkloadApi,
      namespace,
      name: "veto.deployment",
      body: [{ op: "add", path: "/spec/forecast/timeZone", value: "Asia/Kolkata" }],
    });
    const moved = await eventually("the seasons placed by the zone", async () => {
      const events = await clients.kc.makeApiClient(EventsV1Api).listNamespacedEvent({ namespace });
      const found = events.items.filter(
        (e) => e.regarding?.name === "veto.deployment" && e.reason === "ForecastTimeZoneChanged",
      );
      return found.length > 0 ? found : undefined;
    });
    expect(moved.map((e) => e.note)).toEqual([
      "the forecast's seasons now follow the clock of Asia/Kolkata, not UTC: placed anew from the history kept",
    ]);
    const saved = await eventually("the state saved in the zone", async () => {
      const p = await prediction("veto");
      return p?.state?.includes('"z":"Asia/Kolkata"') ? p : undefined;
    });
    // Learned from UTC slots, and Kolkata keeps one offset all year: the same traffic at the same instant.
    expect(saved.nextActivity).toBe(before?.nextActivity);
  });
});
