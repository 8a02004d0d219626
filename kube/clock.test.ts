import { afterEach, describe, expect, it, vi } from "vitest";
import { steadyClock } from "./clock.ts";

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
