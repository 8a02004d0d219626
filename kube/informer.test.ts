import { KubeConfig, type KubernetesObject, ListWatch } from "@kubernetes/client-node";
import { afterEach, describe, expect, it, vi } from "vitest";
import { closableInformer, HEALTHY_AFTER_MS, keepInformer, MAX_RESTART_DELAY_MS } from "./informer.ts";

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

  it("keeps backing off when a restarted watch breaks again before it has run a healthy while since it started", async () => {
    vi.useFakeTimers();
    // Restarts at 1, 3, 7, 15 and 31 s are refused; the one at 61 s, after the longest wait, runs.
    const informer = fakeInformer([true, false, false, false, false, false, true]);
    const kept = await keepInformer(informer as never, { restartDelayMs: 1_000 });
    informer.breakWatch();
    await vi.advanceTimersByTimeAsync(61_000);
    expect(informer.starts).toBe(7);
    // It runs 34 s: a minute since the last failure, but not HEALTHY_AFTER_MS since it started.
    await vi.advanceTimersByTimeAsync(34_000);
    informer.breakWatch();
    await vi.advanceTimersByTimeAsync(MAX_RESTART_DELAY_MS - 1);
    expect(informer.starts, "still waiting the longest delay").toBe(7);
    await vi.advanceTimersByTimeAsync(1);
    expect(informer.starts).toBe(8);
    // This one runs HEALTHY_AFTER_MS: its failure starts over from the first delay.
    await vi.advanceTimersByTimeAsync(HEALTHY_AFTER_MS);
    informer.breakWatch();
    await vi.advanceTimersByTimeAsync(1_000);
    expect(informer.starts).toBe(9);
    await kept.stop();
  });

  it("stops for good when stop() comes while a restart's watch is still connecting", async () => {
    vi.useFakeTimers();
    // The client's own ListWatch over a watch whose connects after the first wait for the test to open them.
    const connects: {
      tell: (phase: string, obj: KubernetesObject) => void;
      end: (err: unknown) => void;
      open: () => void;
      aborted: boolean;
    }[] = [];
    const watch = {
      watch(
        _path: string,
        _params: unknown,
        tell: (p: string, o: KubernetesObject) => void,
        end: () => void,
      ) {
        return new Promise((resolve) => {
          const connect = {
            tell,
            end,
            aborted: false,
            open: () =>
              resolve({
                abort: () => {
                  connect.aborted = true;
                },
              }),
          };
          connects.push(connect);
          if (connects.length === 1) connect.open();
        });
      },
    };
    const list = async () => ({ metadata: { resourceVersion: "1" }, items: [] });
    const informer = new ListWatch<KubernetesObject>("/api/v1/namespaces", watch as never, list, false);
    let changes = 0;
    const kept = await keepInformer(informer, { onChange: () => changes++, restartDelayMs: 1_000 });
    connects[0]?.end(new Error("connection reset"));
    await vi.advanceTimersByTimeAsync(1_000);
    expect(connects).toHaveLength(2);
    await kept.stop();
    // The restart's watch connects after the stop: it is closed at once, and what it brings is told nobody.
    connects[1]?.open();
    await vi.advanceTimersByTimeAsync(0);
    connects[1]?.tell("ADDED", { metadata: { name: "late", resourceVersion: "2" } });
    expect(connects[1]?.aborted).toBe(true);
    expect(changes).toBe(0);
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

describe("closableInformer", () => {
  it("opens no watch once stopped, though its client was waiting to reconnect one the server closed", async () => {
    const dones: ((err: unknown) => void)[] = [];
    const watch = {
      watch: async (_path: string, _query: unknown, _callback: unknown, done: (err: unknown) => void) => {
        dones.push(done);
        return new AbortController();
      },
    };
    const list = async () => ({ metadata: { resourceVersion: "1" }, items: [] });
    const kept = await keepInformer(closableInformer(new KubeConfig(), "/api/v1/namespaces", list, watch));
    expect(dones).toHaveLength(1);
    dones[0]?.(null); // the server closes the watch: the client reconnects at once
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(dones).toHaveLength(2);
    dones[1]?.(null); // closed again with no event between: the client waits 1 s before it reconnects
    await new Promise((resolve) => setTimeout(resolve, 10));
    await kept.stop();
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(dones).toHaveLength(2);
  });
});
