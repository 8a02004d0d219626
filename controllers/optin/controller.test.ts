import type { KubernetesObject, V1ObjectMeta } from "@kubernetes/client-node";
import { expect, it, vi } from "vitest";
import { annotations, labels } from "../../api/keys.ts";
import { unreadableManagedWorkload } from "../../api/managedworkload.ts";
import { workloadObjectName } from "../../api/names.ts";
import { systemClock } from "../../kube/clock.ts";
import { watchedCache } from "../watched-cache.ts";
import { namesakesOf, startOptInController } from "./controller.ts";

/** A workload name too long for `<name>.deployment`: its opt-in name is cut and hashed. */
const long = "a".repeat(250);

/** Caches as `startCaches` makes them, counting the listeners each holds. */
function fakeCaches() {
  const watched = () => {
    const listeners = new Set<(o: unknown) => void>();
    return {
      listeners,
      cache: { list: vi.fn(() => []), get: () => undefined },
      onChange: (listener: (o: unknown) => void) => {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
      onLeftOutGone: (listener: (o: unknown) => void) => {
        listeners.add(listener);
        return () => listeners.delete(listener);
      },
    };
  };
  return {
    deployments: watched(),
    statefulSets: watched(),
    namespaces: watched(),
    managedWorkloads: watched(),
    hpas: watched(),
  };
}

it("leaves no listener on the shared caches once stopped, so leadership terms do not pile up", async () => {
  const caches = fakeCaches();
  const log = { info: () => undefined, warn: () => undefined, error: () => undefined };
  for (let term = 0; term < 3; term++) {
    const optIn = startOptInController({
      caches: caches as never,
      custom: {} as never,
      writes: {} as never,
      events: {} as never,
      clock: systemClock,
      fieldManager: "napwake",
      log,
    } as never);
    expect(caches.namespaces.listeners.size).toBe(1);
    await optIn.stop();
  }
  const left = Object.values(caches).reduce((total, c) => total + c.listeners.size, 0);
  expect(left).toBe(0);
});

type Obj = KubernetesObject & { spec?: unknown };

/** Runs one opt-in pass over a world of cached objects and records the writes, Events and warnings it makes. */
async function optInOnce(world: { deployments: Obj[]; managedWorkloads?: Obj[]; scaledObjects?: Obj[] }) {
  const made: string[] = [];
  const events: { reason: string; note: string; type: string }[] = [];
  const warnings: string[] = [];
  const cached = (objects: Obj[]) => ({
    cache: {
      list: (ns?: string) => objects.filter((o) => !ns || o.metadata?.namespace === ns),
      get: (name: string, ns?: string) =>
        objects.find((o) => o.metadata?.name === name && o.metadata?.namespace === ns),
    },
    onChange: () => () => undefined,
  });
  const record = (what: string) => async () => void made.push(what);
  const optIn = startOptInController({
    caches: {
      deployments: cached(world.deployments),
      statefulSets: cached([]),
      namespaces: cached([{ metadata: { name: "shop" } }]),
      // As startCaches makes it: one stored without a spec is left out.
      managedWorkloads: watchedCache(
        cached(world.managedWorkloads ?? []).cache as never,
        { on: () => undefined },
        {
          unreadable: unreadableManagedWorkload as never,
        },
      ),
      scaledObjects: cached(world.scaledObjects ?? []),
    } as never,
    custom: {
      createNamespacedCustomObject: async () => {
        made.push("create");
        throw Object.assign(new Error("AlreadyExists"), { code: 409 });
      },
    } as never,
    writes: {
      confirmTarget: record("confirm"),
      apply: record("apply"),
      scale: record("scale"),
      forgetPausedFrom: record("forget"),
    } as never,
    events: {
      action: async (e: { reason: string; note: string; type: string }) => void events.push(e),
      skip: async (e: { reason: string; note: string; type: string }) => void events.push(e),
    } as never,
    clock: systemClock,
    fieldManager: "napwake",
    log: {
      info: () => undefined,
      warn: (_o: object, msg: string) => void warnings.push(msg),
      error: () => undefined,
    },
  });
  await vi.waitFor(() => expect(made.length + events.length).toBeGreaterThan(0));
  await optIn.stop();
  return { made, events, warnings };
}

const deployment = (replicas: number, meta: Partial<V1ObjectMeta> = {}): Obj => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", namespace: "shop", uid: "u1", ...meta },
  spec: { replicas },
});
const pausedFrom2 = { annotations: { [annotations.pausedFrom]: "2" } };

it("releases the ScaledObject of a paused workload no longer opted in, though its cache does not show the hold yet", async () => {
  const unheld = {
    apiVersion: "keda.sh/v1alpha1",
    kind: "ScaledObject",
    metadata: { name: "web", namespace: "shop" },
    spec: { scaleTargetRef: { name: "web" } },
  };
  const { made, events } = await optInOnce({
    deployments: [deployment(0, pausedFrom2)],
    scaledObjects: [unheld],
  });
  expect(made).toEqual(["confirm", "apply", "scale", "forget"]);
  expect(events).toMatchObject([
    { reason: "Resumed", note: "resumed to 2 replicas: no longer opted in to Napwake" },
  ]);
});

it("says a workload no longer opted in, found at its paused count, was resumed (a resume that did not finish)", async () => {
  const { made, events } = await optInOnce({ deployments: [deployment(2, pausedFrom2)] });
  expect(made).toEqual(["forget"]);
  expect(events).toMatchObject([
    { reason: "Resumed", note: "resumed to 2 replicas: no longer opted in to Napwake" },
  ]);
});

it("says a workload no longer opted in was already scaled up outside Napwake, rather than resumed", async () => {
  const { made, events } = await optInOnce({ deployments: [deployment(5, pausedFrom2)] });
  expect(made).toEqual(["forget"]);
  expect(events).toMatchObject([
    { reason: "ScaledOutsideNapwake", note: expect.stringMatching(/^already at 5 replicas/) },
  ]);
});

it.each([
  {
    holder: "another ManagedWorkload",
    spec: { targetRef: { kind: "Deployment", name: "api" } },
    note: /already manages Deployment api; rename or delete it/,
  },
  {
    // Stored without a spec by a CRD that did not require one.
    holder: "a ManagedWorkload it cannot read",
    spec: undefined,
    note: /web\.deployment cannot be read \(it has no spec\.targetRef.*\), so it manages nothing; rename or delete it/,
  },
])("warns, on the workload, that $holder holds the name opting it in needs", async ({ spec, note }) => {
  const holder = {
    apiVersion: "napwake.dev/v1alpha1",
    kind: "ManagedWorkload",
    metadata: { name: "web.deployment", namespace: "shop" },
  };
  const { events, warnings } = await optInOnce({
    deployments: [deployment(2, { labels: { [labels.managed]: "true" } })],
    managedWorkloads: [spec ? { ...holder, spec } : holder],
  });
  expect(warnings).toEqual(["opt-in refused"]);
  expect(events).toMatchObject([{ type: "Warning", reason: "Refused", note: expect.stringMatching(note) }]);
});

it.each([
  { name: "web.deployment", want: [{ kind: "Deployment", name: "web" }] },
  { name: "db.statefulset", want: [{ kind: "StatefulSet", name: "db" }] },
  { name: "nightly", want: [] },
  {
    name: workloadObjectName("Deployment", long),
    want: [
      { kind: "Deployment", name: workloadObjectName("Deployment", long).slice(0, -".deployment".length) },
      { kind: "Deployment", name: long },
    ],
  },
])("knows the workload opt-in would give the name $name", ({ name, want }) => {
  expect(namesakesOf(name, (kind) => (kind === "Deployment" ? ["web", long] : []))).toEqual(want);
});

it("tries opt-in again once an unreadable ManagedWorkload that held the workload's name is deleted", async () => {
  const specless: Obj = {
    apiVersion: "napwake.dev/v1alpha1",
    kind: "ManagedWorkload",
    metadata: { name: "web.deployment", namespace: "shop" },
  };
  let stored: Obj[] = [specless];
  const callbacks = new Map<string, ((o: KubernetesObject) => void)[]>();
  const creates: string[] = [];
  const listed = (objects: () => Obj[]) => ({
    list: (ns?: string) => objects().filter((o) => !ns || o.metadata?.namespace === ns),
    get: (name: string, ns?: string) =>
      objects().find((o) => o.metadata?.name === name && o.metadata?.namespace === ns),
  });
  const fixed = (objects: Obj[]) => ({ cache: listed(() => objects), onChange: () => () => undefined });
  const optIn = startOptInController({
    caches: {
      deployments: fixed([deployment(2, { labels: { [labels.managed]: "true" } })]),
      statefulSets: fixed([]),
      namespaces: fixed([{ metadata: { name: "shop" } }]),
      managedWorkloads: watchedCache(
        listed(() => stored) as never,
        { on: (verb, cb) => callbacks.set(verb, [...(callbacks.get(verb) ?? []), cb]) },
        { unreadable: unreadableManagedWorkload as never },
      ),
    } as never,
    custom: {
      createNamespacedCustomObject: async () => {
        creates.push(stored.length ? "refused" : "created");
        if (stored.length) throw Object.assign(new Error("AlreadyExists"), { code: 409 });
      },
    } as never,
    writes: {} as never,
    events: { skip: async () => "sent" } as never,
    clock: systemClock,
    fieldManager: "napwake",
    log: { info: () => undefined, warn: () => undefined, error: () => undefined },
  });
  await vi.waitFor(() => expect(creates).toEqual(["refused"]));
  stored = [];
  for (const cb of callbacks.get("delete") ?? []) cb(specless);
  await vi.waitFor(() => expect(creates).toEqual(["refused", "created"]));
  await optIn.stop();
});
