import { describe, expect, it } from "vitest";
import { LeadershipLostError } from "../kube/leader-election.ts";
import { drainDeadlineMs, whileLeading } from "./while-leading.ts";

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

  it("stops what already started as soon as leading ends, while a later piece is still starting", async () => {
    const log: string[] = [];
    const leading = new AbortController();
    let finishStarting = () => {};
    const run = whileLeading(leading.signal, async (started) => {
      started(piece(log, "opt-in"));
      started(piece(log, "managed"));
      // A discovery call to a slow API server before the last piece.
      await new Promise<void>((resolve) => {
        finishStarting = resolve;
      });
      started(piece(log, "rightsizing"));
    });
    await new Promise((r) => setTimeout(r, 5));
    leading.abort(new LeadershipLostError("the renew deadline passed"));
    await new Promise((r) => setTimeout(r, 20));
    expect(log).toEqual(["stopped opt-in", "stopped managed"]);
    finishStarting();
    await run;
    expect(log).toEqual(["stopped opt-in", "stopped managed", "stopped rightsizing"]);
  });

  it("waits for the stop of a piece that started after leading ended, and reports its failure", async () => {
    const log: string[] = [];
    const leading = new AbortController();
    let finishStarting = () => {};
    const run = whileLeading(leading.signal, async (started) => {
      await new Promise<void>((resolve) => {
        finishStarting = resolve;
      });
      started({
        stop: async () => {
          await new Promise((r) => setTimeout(r, 20)); // its queue draining
          log.push("stopped rightsizing");
          throw new Error("queue shutdown failed");
        },
      });
    });
    await new Promise((r) => setTimeout(r, 5));
    leading.abort(new LeadershipLostError("the renew deadline passed"));
    await new Promise((r) => setTimeout(r, 5));
    finishStarting();
    await expect(run).rejects.toThrow("queue shutdown failed");
    expect(log).toEqual(["stopped rightsizing"]);
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

  it.each([
    {
      name: "aborts work in flight at once when the lease was lost",
      reason: new LeadershipLostError("renew deadline"),
      deadline: 0,
    },
    {
      name: "lets work finish until its last renewal's deadline when stopping on its own",
      reason: new LeadershipLostError("stopping", 4_000),
      deadline: 4_000,
    },
    { name: "lets work finish on a plain shutdown", reason: new Error("SIGTERM"), deadline: undefined },
  ])("$name", async ({ reason, deadline }) => {
    expect(drainDeadlineMs(reason)).toBe(deadline);
    const asked: unknown[] = [];
    const leading = new AbortController();
    leading.abort(reason);
    await whileLeading(leading.signal, async (started) =>
      started({ stop: async (opts) => void asked.push(opts?.deadlineMs) }),
    );
    expect(asked).toEqual([deadline]);
  });
});
