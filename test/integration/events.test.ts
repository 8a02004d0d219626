import { EventsV1Api, type EventsV1Event } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventReasons } from "../../api/keys.ts";
import { EventRecorder, type ObjectRef } from "../../kube/events.ts";
import {
  type Clients,
  clusterClients,
  createTestNamespace,
  deleteTestNamespace,
  eventually,
} from "./cluster.ts";

describe("the event recorder on the real API server", () => {
  let clients: Clients;
  let namespace: string;
  let events: EventsV1Api;

  beforeAll(async () => {
    clients = clusterClients();
    events = clients.kc.makeApiClient(EventsV1Api);
    namespace = await createTestNamespace(clients, "events");
  });
  afterAll(async () => {
    await deleteTestNamespace(clients, namespace);
  });

  /** A real object to write Events about (any kind will do: the recorder only needs its reference). */
  async function object(name: string): Promise<ObjectRef> {
    const cm = await clients.core.createNamespacedConfigMap({ namespace, body: { metadata: { name } } });
    return { apiVersion: "v1", kind: "ConfigMap", namespace, name, uid: cm.metadata?.uid ?? "" };
  }

  async function eventsAbout(ref: ObjectRef): Promise<EventsV1Event[]> {
    const list = await events.listNamespacedEvent({ namespace });
    return list.items
      .filter((e) => e.regarding?.uid === ref.uid)
      .sort((a, b) =>
        String(a.metadata?.creationTimestamp).localeCompare(String(b.metadata?.creationTimestamp)),
      );
  }

  const recorder = () =>
    new EventRecorder({
      client: events,
      reportingInstance: "napwake-operator-0",
      log: { warn: console.warn },
    });

  it("writes an action as one Event with every field set", async () => {
    const ref = await object("paused");
    const result = await recorder().action({
      regarding: ref,
      type: "Normal",
      reason: eventReasons.paused,
      action: "Pause",
      note: "idle for 30m: scaled 3 → 0",
    });
    expect(result).toBe("sent");
    const [event, ...others] = await eventually("the Event", async () => {
      const found = await eventsAbout(ref);
      return found.length ? found : undefined;
    });
    expect(others).toEqual([]);
    expect(event).toMatchObject({
      reportingController: "napwake.dev/operator",
      reportingInstance: "napwake-operator-0",
      action: "Pause",
      reason: "Paused",
      type: "Normal",
      note: "idle for 30m: scaled 3 → 0",
      regarding: { apiVersion: "v1", kind: "ConfigMap", namespace, name: "paused", uid: ref.uid },
    });
    expect(event?.metadata?.name).toMatch(/^paused\./);
    expect(event?.eventTime).toBeTruthy();
  });

  it("writes the same skip once, and again when its note changes", async () => {
    const ref = await object("skipped");
    const rec = recorder();
    const skip = {
      regarding: ref,
      type: "Normal" as const,
      reason: eventReasons.pauseSkipped,
      action: "Pause",
      note: "an HPA scales skipped",
    };
    expect(await rec.skip(skip)).toBe("sent");
    expect(await rec.skip(skip)).toBe("suppressed");
    expect((await eventsAbout(ref)).map((e) => e.note)).toEqual(["an HPA scales skipped"]);

    expect(await rec.skip({ ...skip, note: "a KEDA ScaledObject scales skipped" })).toBe("sent");
    const notes = await eventually("the second Event", async () => {
      const found = (await eventsAbout(ref)).map((e) => e.note);
      return found.length === 2 ? found : undefined;
    });
    expect(notes.sort()).toEqual(["a KEDA ScaledObject scales skipped", "an HPA scales skipped"]);
  });
});
