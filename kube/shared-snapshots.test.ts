import { describe, expect, it } from "vitest";
import { SharedSnapshots } from "./shared-snapshots.ts";

describe("shared snapshots", () => {
  it("reads a key once while it is fresh, however many ask, and again once it is old", async () => {
    const snapshots = new SharedSnapshots<number>(10_000);
    let reads = 0;
    const read = async () => ++reads;
    const first = await Promise.all([0, 1, 2].map(() => snapshots.get("shop", 1_000, read)));
    expect(first).toEqual([1, 1, 1]);
    expect(await snapshots.get("shop", 10_999, read)).toBe(1);
    expect(await snapshots.get("shop", 11_000, read)).toBe(2);
    expect(await snapshots.get("billing", 11_000, read)).toBe(3);
  });

  it("does not keep a failed read: the next reader tries again", async () => {
    const snapshots = new SharedSnapshots<string>(10_000);
    await expect(snapshots.get("shop", 0, async () => Promise.reject(new Error("503")))).rejects.toThrow(
      "503",
    );
    expect(await snapshots.get("shop", 1, async () => "metrics")).toBe("metrics");
  });

  it("lets go of a key nobody reads any more (a deleted namespace) once it is old", async () => {
    const snapshots = new SharedSnapshots<string>(10_000);
    await snapshots.get("preview-1", 0, async () => "pods");
    for (let at = 5_000; at <= 3_600_000; at += 5_000) await snapshots.get("shop", at, async () => "pods");
    expect(snapshots.size).toBe(1);
  });

  it("reads again when the clock went backwards", async () => {
    const snapshots = new SharedSnapshots<number>(10_000);
    let reads = 0;
    await snapshots.get("shop", 5_000, async () => ++reads);
    expect(await snapshots.get("shop", 1_000, async () => ++reads)).toBe(2);
  });
});
