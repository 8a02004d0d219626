import { describe, expect, it } from "vitest";
import { OwnStatusMemory } from "./own-status.ts";

const at = (resourceVersion: string, status: string) => ({ metadata: { resourceVersion }, status });

describe("deciding from our own latest status while the cache lags", () => {
  it("uses our write while the cache still shows the version it was decided from", () => {
    const memory = new OwnStatusMemory<string>();
    memory.remember("k", at("1", "a"), "2", "b");
    expect(memory.view("k", at("1", "a"))).toEqual(at("2", "b"));
    expect(memory.view("k", at("2", "b"))).toEqual(at("2", "b"));
  });

  it("uses our latest of two writes while the cache shows the first of them", () => {
    const memory = new OwnStatusMemory<string>();
    memory.remember("k", at("1", "a"), "2", "b");
    // Decided again while the cache was still at 1, then the cache catches up only to our first write.
    memory.remember("k", at("1", "a"), "3", "c");
    expect(memory.view("k", at("2", "b"))).toEqual(at("3", "c"));
    expect(memory.view("k", at("3", "c"))).toEqual(at("3", "c"));
  });

  it("lets a version someone else wrote through, so the conditional write can refuse a stale decision", () => {
    const memory = new OwnStatusMemory<string>();
    memory.remember("k", at("1", "a"), "2", "b");
    expect(memory.view("k", at("7", "theirs"))).toEqual(at("7", "theirs"));
    expect(memory.view("k", at("1", "a"))).toEqual(at("1", "a"));
  });
});
