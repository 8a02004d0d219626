import type { V1APIResourceList } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { FakeClock } from "./clock.ts";
import { type CoreResources, inPlaceResizeAvailable } from "./resize-support.ts";

const quiet = { warn: () => undefined };
const listing = (names: string[]): V1APIResourceList => ({
  groupVersion: "v1",
  resources: names.map((name) => ({ name, kind: "Pod", namespaced: true, singularName: "", verbs: [] })),
});
const answering = (names: string[]): CoreResources => ({ getAPIResources: async () => listing(names) });

describe("whether the API server offers in-place pod resize", () => {
  it.each([
    { what: "offers it where pods/resize is served", names: ["pods", "pods/resize"], want: true },
    {
      what: "does not where it is not (before Kubernetes 1.33)",
      names: ["pods", "pods/status"],
      want: false,
    },
  ])("$what", async ({ names, want }) => {
    expect(await inPlaceResizeAvailable(answering(names), quiet)).toBe(want);
  });

  it("takes an API server that does not answer for one without it, after the deadline, rather than waiting on it", async () => {
    const clock = new FakeClock();
    const warnings: string[] = [];
    const hung: CoreResources = { getAPIResources: () => new Promise<V1APIResourceList>(() => undefined) };
    const answer = inPlaceResizeAvailable(
      hung,
      { warn: (o) => warnings.push(String((o as { err: string }).err)) },
      10_000,
      clock,
    );
    await clock.advance(10_000);
    expect(await answer).toBe(false);
    expect(warnings).toEqual([expect.stringMatching(/did not list its core resources within 10000 ms/)]);
  });
});
