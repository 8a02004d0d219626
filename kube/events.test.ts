import type { EventsV1Event } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { eventReasons } from "../api/keys.ts";
import { FakeClock } from "./clock.ts";
import {
  buildEvent,
  dedupKey,
  dedupValue,
  EventRecorder,
  type EventsClient,
  eventName,
  Lru,
  type ObjectRef,
  type SkipInput,
  shouldSendSkip,
  truncateNote,
} from "./events.ts";

const web: ObjectRef = {
  apiVersion: "apps/v1",
  kind: "Deployment",
  namespace: "shop",
  name: "web",
  uid: "u1",
};
const skip = (over: Partial<SkipInput> = {}): SkipInput => ({
  regarding: web,
  type: "Normal",
  reason: eventReasons.pauseSkipped,
  action: "Pause",
  note: "an HPA scales web",
  ...over,
});

/** Which of a sequence of skips are sent, replaying the recorder's de-dup decision over a plain map. */
function sentOf(sequence: SkipInput[]): boolean[] {
  const last = new Map<string, string>();
  return sequence.map((e) => {
    const send = shouldSendSkip(last.get(dedupKey(e)), e);
    if (send) last.set(dedupKey(e), dedupValue(e));
    return send;
  });
}

describe("de-duplication of skips", () => {
  it.each([
    { name: "the first skip is sent", sequence: [skip()], want: [true] },
    { name: "the same skip again is not", sequence: [skip(), skip(), skip()], want: [true, false, false] },
    {
      name: "a changed note is sent again",
      sequence: [
        skip(),
        skip({ note: "a KEDA ScaledObject scales web" }),
        skip({ note: "a KEDA ScaledObject scales web" }),
      ],
      want: [true, true, false],
    },
    {
      name: "changed proposed values are sent again with the same note",
      sequence: [
        skip({ fingerprint: "replicas=0" }),
        skip({ fingerprint: "replicas=1" }),
        skip({ fingerprint: "replicas=1" }),
      ],
      want: [true, true, false],
    },
    {
      name: "a note worded differently is no change while what it reads the same by stays",
      sequence: [
        skip({ note: "query failed: timeout after 10001ms", sameAs: "query failed" }),
        skip({ note: "query failed: timeout after 10007ms", sameAs: "query failed" }),
        skip({ note: "query failed: 503", sameAs: "queries failed" }),
      ],
      want: [true, false, true],
    },
    {
      name: "going back to an earlier note is a change too",
      sequence: [skip({ note: "x" }), skip({ note: "y" }), skip({ note: "x" })],
      want: [true, true, true],
    },
    {
      name: "another reason is its own key",
      sequence: [skip(), skip({ reason: eventReasons.refused })],
      want: [true, true],
    },
    {
      name: "another type is its own key",
      sequence: [skip(), skip({ type: "Warning" })],
      want: [true, true],
    },
    {
      name: "a recreated object (new uid) is its own key",
      sequence: [skip(), skip({ regarding: { ...web, uid: "u2" } })],
      want: [true, true],
    },
  ])("$name", ({ sequence, want }) => {
    expect(sentOf(sequence)).toEqual(want);
  });
});

describe("Lru", () => {
  it.each([
    { name: "keeps up to its capacity", ops: ["a", "b"], capacity: 2, want: { a: 1, b: 1 } },
    {
      name: "forgets the oldest past capacity",
      ops: ["a", "b", "c"],
      capacity: 2,
      want: { a: undefined, b: 1, c: 1 },
    },
    {
      name: "a read counts as use",
      ops: ["a", "b", "get a", "c"],
      capacity: 2,
      want: { a: 1, b: undefined, c: 1 },
    },
  ])("$name", ({ ops, capacity, want }) => {
    const lru = new Lru<string, number>(capacity);
    for (const op of ops) {
      if (op.startsWith("get ")) lru.get(op.slice(4));
      else lru.set(op, 1);
    }
    for (const [key, value] of Object.entries(want)) expect(lru.get(key)).toBe(value);
  });
});

describe("buildEvent", () => {
  it("fills every field events.k8s.io/v1 requires", () => {
    const event = buildEvent(
      { regarding: web, type: "Normal", reason: eventReasons.paused, action: "Pause", note: "idle for 30m" },
      { reportingInstance: "napwake-0", nowMs: Date.UTC(2030, 0, 1) },
    );
    expect(JSON.parse(JSON.stringify(event))).toEqual({
      apiVersion: "events.k8s.io/v1",
      kind: "Event",
      metadata: { name: "web.1a46e83335d50000", namespace: "shop" },
      eventTime: "2030-01-01T00:00:00.000000Z",
      reportingController: "napwake.dev/operator",
      reportingInstance: "napwake-0",
      action: "Pause",
      reason: "Paused",
      type: "Normal",
      note: "idle for 30m",
      regarding: web,
    });
  });

  it.each([
    { name: "web", nowMs: 0, seq: 0, want: "web.0" },
    { name: "web", nowMs: 1, seq: 7, want: "web.f4247" },
    { name: "a".repeat(300), nowMs: 0, seq: 1, want: `${"a".repeat(200)}.1` },
    { name: `${"a".repeat(198)}-.b`, nowMs: 0, seq: 1, want: `${"a".repeat(198)}.1` },
  ])("names the Event $want", ({ name, nowMs, seq, want }) => {
    expect(eventName(name, nowMs, seq)).toBe(want);
  });

  it("puts Events about cluster-scoped objects in the default namespace", () => {
    const ns: ObjectRef = { apiVersion: "v1", kind: "Namespace", name: "shop", uid: "n1" };
    const event = buildEvent(
      { regarding: ns, type: "Normal", reason: eventReasons.refused, action: "Refuse", note: "" },
      { reportingInstance: "p", nowMs: 0 },
    );
    expect(event.metadata?.namespace).toBe("default");
  });

  it("names a pod name longer than the API takes (a DNS subdomain, up to 253) by its first 128 characters", () => {
    const ns: ObjectRef = { apiVersion: "v1", kind: "Namespace", name: "shop", uid: "n1" };
    const event = buildEvent(
      { regarding: ns, type: "Normal", reason: eventReasons.refused, action: "Refuse", note: "" },
      { reportingInstance: "p".repeat(200), nowMs: 0 },
    );
    expect(event.reportingInstance).toBe("p".repeat(128));
  });

  it.each([
    { note: "short", bytes: 5 },
    { note: "x".repeat(5_000), bytes: 1024 },
    { note: "é".repeat(1_000), bytes: 1023 },
  ])("keeps a note within 1 kB ($bytes bytes)", ({ note, bytes }) => {
    expect(Buffer.byteLength(truncateNote(note))).toBe(bytes);
  });

  it("cuts a note of characters outside the BMP between characters, not inside a surrogate pair", () => {
    const cut = truncateNote(`aa${"😀".repeat(600)}`);
    expect(cut.isWellFormed()).toBe(true);
    expect(Buffer.byteLength(cut)).toBe(2 + 4 * 254 + 3);
  });
});

describe("EventRecorder", () => {
  function recorder(fail: () => boolean = () => false) {
    const created: EventsV1Event[] = [];
    const client: EventsClient = {
      createNamespacedEvent: async ({ body }) => {
        if (fail()) throw new Error("connection refused");
        created.push(body);
        return body;
      },
    };
    return {
      created,
      rec: new EventRecorder({ client, reportingInstance: "napwake-0", clock: new FakeClock() }),
    };
  }

  it("sends every action", async () => {
    const { created, rec } = recorder();
    const paused = { ...skip(), reason: eventReasons.paused, note: "idle" };
    expect([await rec.action(paused), await rec.action(paused)]).toEqual(["sent", "sent"]);
    expect(created).toHaveLength(2);
  });

  it("gives up on an Event the API server does not answer, so the reconcile that waits for it goes on", async () => {
    const clock = new FakeClock();
    let options: unknown;
    const rec = new EventRecorder({
      client: {
        createNamespacedEvent: (_request, given) => {
          options = given;
          return new Promise(() => undefined);
        },
      },
      reportingInstance: "napwake-0",
      clock,
      timeoutMs: 5_000,
    });
    const result = rec.action({ ...skip(), reason: eventReasons.paused, note: "idle" });
    await clock.advance(5_000);
    expect(await result).toBe("failed");
    // The request was made abortable, so giving up also closes its connection.
    expect((options as { middleware?: unknown[] }).middleware).toHaveLength(1);
  });

  it("sends the skips of 20,000 objects once, though every check goes through them all", async () => {
    const { created, rec } = recorder();
    const objects = Array.from({ length: 20_000 }, (_, i) => ({ ...web, name: `web-${i}`, uid: `uid-${i}` }));
    for (let check = 0; check < 2; check++) {
      for (const regarding of objects) await rec.skip(skip({ regarding }));
    }
    expect(created).toHaveLength(20_000);
  });

  it("sends two identical skips made at the same time once", async () => {
    const { created, rec } = recorder();
    expect(await Promise.all([rec.skip(skip()), rec.skip(skip())])).toEqual(["sent", "suppressed"]);
    expect(created).toHaveLength(1);
  });

  it("sends a skip again after sending it failed", async () => {
    let down = true;
    const { created, rec } = recorder(() => down);
    expect(await rec.skip(skip())).toBe("failed");
    down = false;
    expect(await rec.skip(skip())).toBe("sent");
    expect(created).toHaveLength(1);
  });

  it("sends a skip again when it comes back after an action on the same object, and only then", async () => {
    const { created, rec } = recorder();
    const other = { ...skip(), regarding: { ...skip().regarding, uid: "someone-else" } };
    expect(await rec.skip(skip())).toBe("sent");
    expect(await rec.skip(other)).toBe("sent");
    await rec.action({ ...skip(), reason: eventReasons.paused, note: "idle" });
    expect(await rec.skip(skip())).toBe("sent");
    expect(await rec.skip(skip())).toBe("suppressed");
    expect(await rec.skip(other)).toBe("suppressed");
    expect(created).toHaveLength(4);
  });

  it("does not tell again, as a skip, the situation an action left and named", async () => {
    const { created, rec } = recorder();
    const letGo = { ...skip(), reason: eventReasons.letGo, note: "spec.protected is true" };
    const resumed = { ...letGo, note: "spec.protected is true; resumed to 3 replicas before letting go" };
    expect(await rec.action({ ...resumed, settledAs: letGo.note })).toBe("sent");
    expect(await rec.skip(letGo)).toBe("suppressed");
    expect(await rec.skip({ ...letGo, note: "ignored by label" })).toBe("sent");
    expect(created.map((e) => e.note)).toEqual([resumed.note, "ignored by label"]);
  });

  it("tells the situation as a skip after all when the action that named it could not be sent", async () => {
    let down = true;
    const { created, rec } = recorder(() => down);
    const letGo = { ...skip(), reason: eventReasons.letGo, note: "spec.protected is true" };
    expect(await rec.action({ ...letGo, note: `${letGo.note}; resumed`, settledAs: letGo.note })).toBe(
      "failed",
    );
    down = false;
    expect(await rec.skip(letGo)).toBe("sent");
    expect(created).toHaveLength(1);
  });

  it("sends every notice, and keeps the skips it sent before one", async () => {
    const { created, rec } = recorder();
    expect(await rec.skip(skip())).toBe("sent");
    const notice = { ...skip(), reason: eventReasons.forecastPhaseChanged, note: "shadow -> active" };
    expect([await rec.notice(notice), await rec.notice(notice)]).toEqual(["sent", "sent"]);
    expect(await rec.skip(skip())).toBe("suppressed");
    expect(created).toHaveLength(3);
  });
});
