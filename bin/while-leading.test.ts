import { describe, expect, it } from "vitest";
import { whileLeading } from "./while-leading.ts";

const piece = (log: string[], name: string) => ({
  stop: async () => {
    log.push(`stopped ${name}`);
  },
});

describe("what a leader runs", () => {
  it("runs until leading ends, then stops everything it started", async () => {
    const log: string[] = [];
    const leading = new AbortController();
    const done = whileLeading(leading.signal, async (started) => {
      started(piece(log, "opt-in"));
      started(piece(log, "managed"));
    });
    await new Promise((r) => setTimeout(r, 5));
    expect(log).toEqual([]);
    leading.abort();
    await done;
    expect(log).toEqual(["stopped opt-in", "stopped managed"]);
  });

  it("stops what already started when a later piece fails to start, and reports the failure", async () => {
    const log: string[] = [];
    const run = whileLeading(new AbortController().signal, async (started) => {
      started(piece(log, "opt-in"));
      throw new Error("A metric with the name napwake_x has already been registered");
    });
    await expect(run).rejects.toThrow(/already been registered/);
    expect(log).toEqual(["stopped opt-in"]);
  });

  it("can lead again after a term ended", async () => {
    const log: string[] = [];
    for (const term of [1, 2]) {
      const leading = new AbortController();
      leading.abort();
      await whileLeading(leading.signal, async (started) => started(piece(log, `term ${term}`)));
    }
    expect(log).toEqual(["stopped term 1", "stopped term 2"]);
  });
});
