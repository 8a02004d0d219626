import type { KubernetesObject } from "@kubernetes/client-node";
import { afterEach, describe, expect, it, vi } from "vitest";
import { keepInformer } from "./informer.ts";

/** An informer whose starts fail as told, and which reports a broken watch when asked. */
function fakeInformer(startResults: boolean[]) {
  const handlers = new Map<string, ((...args: unknown[]) => void)[]>();
  let starts = 0;
  return {
    get starts() {
      return starts;
    },
    breakWatch: () => {
      for (const handler of handlers.get("error") ?? []) handler(new Error("watch closed"));
    },
    on: (verb: string, handler: (...args: unknown[]) => void) => {
      handlers.set(verb, [...(handlers.get(verb) ?? []), handler]);
    },
    // As the client does: a failed list is an error event, and start() resolves all the same.
    start: () => {
      const ok = startResults[starts] ?? true;
      starts++;
      if (!ok)
        queueMicrotask(() => {
          for (const handler of handlers.get("error") ?? []) handler(new Error("connection refused"));
        });
      return Promise.resolve();
    },
    stop: () => Promise.resolve(),
    list: () => [] as KubernetesObject[],
    get: () => undefined,
  };
}

describe("keeping an informer running", () => {
  afterEach(() => vi.useRealTimers());

  it("restarts a broken watch, and tries again, waiting longer, when the restart fails", async () => {
    vi.useFakeTimers();
    const informer = fakeInformer([true, false, false, true]);
    const kept = await keepInformer(informer as never, { restartDelayMs: 1_000 });
    informer.breakWatch();
    await vi.advanceTimersByTimeAsync(1_000); // first restart: refused
    expect(informer.starts).toBe(2);
    await vi.advanceTimersByTimeAsync(1_999);
    expect(informer.starts).toBe(2);
    await vi.advanceTimersByTimeAsync(1); // after 2 s: refused again
    expect(informer.starts).toBe(3);
    await vi.advanceTimersByTimeAsync(4_000); // after 4 s: running
    expect(informer.starts).toBe(4);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(informer.starts).toBe(4);
    // Healthy for a minute: the next broken watch starts again from the first delay.
    informer.breakWatch();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(informer.starts).toBe(5);
    await kept.stop();
  });

  it("resolves only once a start has listed without error, as a cache that failed its first list is empty", async () => {
    vi.useFakeTimers();
    const informer = fakeInformer([false, false, true]);
    let resolved = false;
    const kept = keepInformer(informer as never, { restartDelayMs: 1_000 }).then((k) => {
      resolved = true;
      return k;
    });
    await vi.advanceTimersByTimeAsync(1_000);
    expect(informer.starts).toBe(2);
    expect(resolved).toBe(false);
    await vi.advanceTimersByTimeAsync(2_000);
    expect(informer.starts).toBe(3);
    expect(resolved).toBe(true);
    await (await kept).stop();
  });

  it("rejects when asked to, and stops, if the first list fails, for a resource tried again later", async () => {
    vi.useFakeTimers();
    const informer = fakeInformer([false, true]);
    await expect(
      keepInformer(informer as never, { restartDelayMs: 1_000, failFirstList: true }),
    ).rejects.toThrow(/connection refused/);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(informer.starts).toBe(1);
  });

  it("restarts nothing once stopped", async () => {
    vi.useFakeTimers();
    const informer = fakeInformer([true]);
    const kept = await keepInformer(informer as never, { restartDelayMs: 1_000 });
    informer.breakWatch();
    await kept.stop();
    await vi.advanceTimersByTimeAsync(10_000);
    expect(informer.starts).toBe(1);
  });
});
