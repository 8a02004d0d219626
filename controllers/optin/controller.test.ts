import { expect, it, vi } from "vitest";
import { systemClock } from "../../kube/clock.ts";
import { startOptInController } from "./controller.ts";

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
