import { afterEach, describe, expect, it, vi } from "vitest";
import { FakeClock, settle, settlesWithin, steadyClock } from "./clock.ts";

describe("the steady clock", () => {
  afterEach(() => vi.restoreAllMocks());

  it("starts at the wall clock's time", () => {
    expect(Math.abs(steadyClock.now() - Date.now())).toBeLessThan(1_000);
  });

  it("does not follow the wall clock when it is stepped back an hour", () => {
    const before = steadyClock.now();
    vi.spyOn(Date, "now").mockReturnValue(Date.now() - 3_600_000);
    expect(steadyClock.now()).toBeGreaterThanOrEqual(before);
  });
});

describe("waiting for work within a time", () => {
  it("says the work settled when it resolves or rejects in time, and leaves no timer behind", async () => {
    const clock = new FakeClock(0);
    expect(await settlesWithin(clock, Promise.resolve(), 1_000)).toBe(true);
    expect(await settlesWithin(clock, Promise.reject(new Error("failed")), 1_000)).toBe(true);
    expect(clock.pendingTimers).toBe(0);
  });

  it("says it did not once the time is up", async () => {
    const clock = new FakeClock(0);
    const waiting = settlesWithin(clock, new Promise(() => undefined), 1_000);
    await settle();
    clock.advance(1_000);
    expect(await waiting).toBe(false);
  });
});
