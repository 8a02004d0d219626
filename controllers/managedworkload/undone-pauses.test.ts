import { describe, expect, it } from "vitest";
import type { ReplicasOwner } from "./gitops.ts";
import { holdOffMs, holdOffUntilMs, pauseHeldOff, undoneBy } from "./undone-pauses.ts";

const hour = 3_600_000;
const owner = (tool: ReplicasOwner["tool"]): ReplicasOwner => ({
  tool,
  manager: `${tool}-manager`,
  message: "fix",
});

describe("undone pauses", () => {
  it.each([
    { name: "Argo CD while a pause is recorded", tool: "argocd" as const, recorded: true, undone: true },
    { name: "Flux while a pause is recorded", tool: "flux" as const, recorded: true, undone: true },
    { name: "another server-side applier", tool: "other" as const, recorded: true, undone: true },
    {
      name: "a helm upgrade (run by someone, not a loop)",
      tool: "helm" as const,
      recorded: true,
      undone: false,
    },
    { name: "kubectl apply", tool: "kubectl" as const, recorded: true, undone: false },
    { name: "Argo CD when no pause was recorded", tool: "argocd" as const, recorded: false, undone: false },
  ])("counts a pause set back by $name: $undone", ({ tool, recorded, undone }) => {
    expect(undoneBy(owner(tool), recorded) !== null).toBe(undone);
  });

  it.each([
    { count: 1, hours: 1 },
    { count: 2, hours: 2 },
    { count: 5, hours: 16 },
    { count: 6, hours: 24 },
    { count: 40, hours: 24 },
  ])("holds off $hours h after $count pauses undone in a row", ({ count, hours }) => {
    expect(holdOffMs(count)).toBe(hours * hour);
  });

  it.each([
    { name: "no record", undone: undefined },
    { name: "an unreadable time", undone: { count: 1, lastAt: "yesterday" } },
    { name: "a count below one", undone: { count: 0, lastAt: "2026-03-02T10:00:00Z" } },
  ])("does not hold off with $name", ({ undone }) => {
    expect(holdOffUntilMs(undone, Date.parse("2026-03-02T10:30:00Z"))).toBeNull();
    expect(pauseHeldOff(undone, Date.parse("2026-03-02T10:30:00Z"))).toBeNull();
  });

  it("holds off from now, not from a record stamped ahead of it, so never longer than the cap", () => {
    const now = Date.parse("2026-03-02T10:00:00Z");
    const undone = { count: 1, lastAt: "2026-03-05T10:00:00Z", manager: "argocd-controller" };
    expect(holdOffUntilMs(undone, now)).toBe(now + hour);
    expect(pauseHeldOff(undone, now)?.untilMs).toBe(now + hour);
  });

  it("names the tool when the record lacks the manager", () => {
    const undone = { count: 1, lastAt: "2026-03-02T10:00:00Z", tool: "flux" as const };
    expect(pauseHeldOff(undone, Date.parse("2026-03-02T10:30:00Z"))?.reason).toMatch(
      /^flux set spec.replicas back/,
    );
  });

  it("says who set replicas back and until when it holds off", () => {
    const undone = { count: 2, lastAt: "2026-03-02T10:00:00Z", manager: "argocd-controller" };
    expect(pauseHeldOff(undone, Date.parse("2026-03-02T11:00:00Z"))).toEqual({
      untilMs: Date.parse("2026-03-02T12:00:00Z"),
      reason: expect.stringMatching(
        /^argocd-controller set spec.replicas back after the last 2 pauses; not pausing until 2026-03-02T12:00:00.000Z/,
      ),
    });
  });
});
