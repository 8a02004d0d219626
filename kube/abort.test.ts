import type { RequestContext } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { abortableBy, deadline, untilAborted } from "./abort.ts";

describe("bounding requests in time", () => {
  it("hands the signal to the request the client is about to send", async () => {
    const signal = new AbortController().signal;
    let given: AbortSignal | undefined;
    const context = { setSignal: (s: AbortSignal) => (given = s) } as unknown as RequestContext;
    const options = abortableBy(signal);
    expect(await options.middleware?.[0]?.pre(context).toPromise()).toBe(context);
    expect(given).toBe(signal);
    expect(options.middlewareMergeStrategy).toBe("append");
  });

  it.each([
    { what: "the answer when it comes first", settle: "resolve" as const, result: "answer" },
    { what: "the request's own failure", settle: "reject" as const, result: "refused" },
  ])("gives $what", async ({ settle, result }) => {
    const promise = settle === "resolve" ? Promise.resolve("answer") : Promise.reject(new Error("refused"));
    const outcome = untilAborted(promise, new AbortController().signal);
    if (settle === "resolve") await expect(outcome).resolves.toBe(result);
    else await expect(outcome).rejects.toThrow(result);
  });

  it("rejects with the deadline's reason when no answer comes in time", async () => {
    const limit = deadline(10, "no answer within 10 ms");
    await expect(untilAborted(new Promise(() => {}), limit.signal)).rejects.toThrow("no answer within 10 ms");
    expect(limit.signal.aborted).toBe(true);
  });

  it("never aborts a deadline cleared before it passed", async () => {
    const limit = deadline(10, "too late");
    limit.clear();
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(limit.signal.aborted).toBe(false);
  });

  it("rejects at once on a signal that has already aborted", async () => {
    const controller = new AbortController();
    controller.abort(new Error("gone"));
    await expect(untilAborted(Promise.resolve(1), controller.signal)).rejects.toThrow("gone");
    // The abandoned request failing later is not an unhandled rejection.
    await expect(untilAborted(Promise.reject(new Error("late")), controller.signal)).rejects.toThrow("gone");
  });
});
