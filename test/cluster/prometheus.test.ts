import { describe, expect, it } from "vitest";
import { withPrometheusStopped } from "./prometheus.ts";

describe("loading history into Prometheus", () => {
  const recorder = () => {
    const calls: string[] = [];
    const prometheus = {
      stop: async () => void calls.push("stop"),
      start: async () => void calls.push("start"),
    };
    return { calls, prometheus };
  };

  it("creates the blocks only while Prometheus is stopped, so no compaction runs beside promtool", async () => {
    const { calls, prometheus } = recorder();
    await withPrometheusStopped(prometheus, async () => void calls.push("create blocks"));
    expect(calls).toEqual(["stop", "create blocks", "start"]);
  });

  it("starts Prometheus again when creating the blocks fails", async () => {
    const { calls, prometheus } = recorder();
    const failing = withPrometheusStopped(prometheus, async () => {
      throw new Error("promtool failed");
    });
    await expect(failing).rejects.toThrow("promtool failed");
    expect(calls).toEqual(["stop", "start"]);
  });
});
