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

  it("forgets the keys of objects no longer there, and keeps the others", () => {
    const memory = new OwnStatusMemory<string>();
    memory.remember("kept", at("1", "a"), "2", "b");
    memory.remember("gone", at("1", "a"), "2", "b");
    memory.retain(new Set(["kept"]));
    expect(memory.view("kept", at("1", "a"))).toEqual(at("2", "b"));
    expect(memory.view("gone", at("1", "a"))).toEqual(at("1", "a"));
  });
});

describe("writing our status", () => {
  const gone = Object.assign(new Error("not found"), { code: 404 });
  it.each([
    {
      name: "writes nothing when the status is unchanged",
      status: "a",
      write: async () => "2",
      result: "unchanged",
    },
    { name: "writes and remembers a changed status", status: "b", write: async () => "2", result: "written" },
    {
      name: "says the object is gone when it was deleted meanwhile",
      status: "b",
      write: async (): Promise<string> => {
        throw gone;
      },
      result: "gone",
    },
  ])("$name", async ({ status, write, result }) => {
    const memory = new OwnStatusMemory<string>();
    expect(await memory.writeIfChanged("k", at("1", "a"), at("1", "a"), status, write)).toBe(result);
    const remembered = result === "written" ? at("2", "b") : at("1", "a");
    expect(memory.view("k", at("1", "a"))).toEqual(remembered);
  });

  it("passes any other failure on, to be retried", async () => {
    const memory = new OwnStatusMemory<string>();
    const conflict = Object.assign(new Error("conflict"), { code: 409 });
    const write = async (): Promise<string> => {
      throw conflict;
    };
    await expect(memory.writeIfChanged("k", at("1", "a"), at("1", "a"), "b", write)).rejects.toBe(conflict);
  });
});
