import { describe, expect, it } from "vitest";
import type { ManagedWorkload } from "../../api/managedworkload.ts";
import { decideOptIn, type OptInWorkload, optedIn, optInName } from "./decide.ts";

const workload = (over: Partial<OptInWorkload> = {}): OptInWorkload => ({
  kind: "Deployment",
  name: "web",
  namespace: "shop",
  uid: "uid-web",
  labels: {},
  replicas: 2,
  pausedFrom: null,
  ...over,
});

const mw = (name: string, ownerUid?: string, labels?: Record<string, string>): ManagedWorkload => ({
  apiVersion: "napwake.dev/v1alpha1",
  kind: "ManagedWorkload",
  metadata: {
    name,
    namespace: "shop",
    ...(labels ? { labels } : {}),
    ...(ownerUid
      ? { ownerReferences: [{ apiVersion: "apps/v1", kind: "Deployment", name: "web", uid: ownerUid }] }
      : {}),
  },
  spec: { targetRef: { kind: "Deployment", name: "web" } },
});

describe("optInName", () => {
  const subdomain = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
  const long = (length: number, at = "a") => `web-${at.repeat(length - 4)}`;

  it.each([
    ["a short name", "web", "Deployment" as const],
    ["a name that just fits", long(242), "Deployment" as const],
    ["a 250-character name", long(250), "Deployment" as const],
    ["a 253-character name of a StatefulSet", long(253), "StatefulSet" as const],
    [
      "a long name cut where a dot or dash would end it",
      `${"a".repeat(230)}.-${"b".repeat(21)}`,
      "Deployment" as const,
    ],
  ])("gives %s a valid name of its own", (_, name, kind) => {
    const mwName = optInName(kind, name);
    expect(mwName.length).toBeLessThanOrEqual(253);
    expect(mwName).toMatch(subdomain);
    expect(mwName.endsWith(`.${kind.toLowerCase()}`)).toBe(true);
  });

  it("keeps the short form as it was, and tells apart long names that share their first 240 characters", () => {
    expect(optInName("Deployment", "web")).toBe("web.deployment");
    expect(optInName("Deployment", `${long(245)}x`)).not.toBe(optInName("Deployment", `${long(245)}y`));
  });
});

describe("optedIn", () => {
  it.each<{ name: string; own: Record<string, string>; ns: Record<string, string>; want: boolean }>([
    { name: "a workload labelled true", own: { "napwake.dev/managed": "true" }, ns: {}, want: true },
    {
      name: "a workload in a namespace labelled true",
      own: {},
      ns: { "napwake.dev/managed": "true" },
      want: true,
    },
    {
      name: "not a workload that opts out of its opted-in namespace",
      own: { "napwake.dev/managed": "false" },
      ns: { "napwake.dev/managed": "true" },
      want: false,
    },
    {
      name: "not an ignored workload",
      own: { "napwake.dev/managed": "true", "napwake.dev/ignore": "" },
      ns: {},
      want: false,
    },
    { name: "not an unlabelled workload", own: {}, ns: {}, want: false },
  ])("opts in $name", ({ own, ns, want }) => {
    expect(optedIn(own, ns)).toBe(want);
  });
});

describe("decideOptIn", () => {
  it("creates a ManagedWorkload owned by the workload when it opts in", () => {
    const [action] = decideOptIn({
      workload: workload({ labels: { "napwake.dev/managed": "true" } }),
      namespaceLabels: {},
      managers: [],
    });
    expect(action?.kind).toBe("create");
    if (action?.kind !== "create") return;
    expect(action.object.metadata.name).toBe("web.deployment");
    expect(action.object.metadata.ownerReferences?.[0]).toMatchObject({
      kind: "Deployment",
      name: "web",
      uid: "uid-web",
    });
    expect(action.object.spec.targetRef).toEqual({ apiVersion: "apps/v1", kind: "Deployment", name: "web" });
    expect(action.object.metadata.labels).toEqual({ "app.kubernetes.io/managed-by": "napwake-opt-in" });
  });

  describe("after the workload was deleted with --cascade=orphan and made again (a new uid)", () => {
    const marked = { "app.kubernetes.io/managed-by": "napwake-opt-in" };
    const orphaned = mw("web.deployment", undefined, marked);
    const remade = { uid: "uid-web-2" };

    it("has the workload as it is now own its ManagedWorkload again", () => {
      const actions = decideOptIn({
        workload: workload({ ...remade, labels: { "napwake.dev/managed": "true" } }),
        namespaceLabels: {},
        managers: [orphaned],
      });
      expect(actions).toEqual([expect.objectContaining({ kind: "adopt", object: orphaned })]);
    });

    it("leaves it alone while the workload is still being deleted: adopted then, it would be collected with it", () => {
      const actions = decideOptIn({
        workload: workload({ labels: { "napwake.dev/managed": "true" }, deleting: true }),
        namespaceLabels: {},
        managers: [orphaned],
      });
      expect(actions.map((a) => a.kind)).toEqual(["none"]);
    });

    it("deletes it when the workload opts out, and resumes the workload if paused", () => {
      const actions = decideOptIn({
        workload: workload({ ...remade, replicas: 0, pausedFrom: 2 }),
        namespaceLabels: {},
        managers: [orphaned],
      });
      expect(actions.map((a) => a.kind)).toEqual(["delete", "resume-orphan"]);
    });

    it("leaves one owned by nothing and not marked as opt-in's: it was written by hand", () => {
      const actions = decideOptIn({
        workload: workload({ ...remade, replicas: 0, pausedFrom: 2 }),
        namespaceLabels: {},
        managers: [mw("web.deployment")],
      });
      expect(actions.map((a) => a.kind)).toEqual(["none"]);
    });

    it("leaves one marked but still owned by the workload deleted: the garbage collector removes it", () => {
      const actions = decideOptIn({
        workload: workload({ ...remade, labels: { "napwake.dev/managed": "true" } }),
        namespaceLabels: {},
        managers: [mw("web.deployment", "uid-web", marked)],
      });
      expect(actions.map((a) => a.kind)).toEqual(["none"]);
    });
  });

  it("marks a ManagedWorkload it created before it marked them, so an orphaning delete cannot lose it", () => {
    const unmarked = mw("web.deployment", "uid-web");
    const actions = decideOptIn({
      workload: workload({ labels: { "napwake.dev/managed": "true" } }),
      namespaceLabels: {},
      managers: [unmarked],
    });
    expect(actions).toEqual([expect.objectContaining({ kind: "adopt", object: unmarked })]);
    const marked = mw("web.deployment", "uid-web", { "app.kubernetes.io/managed-by": "napwake-opt-in" });
    const again = decideOptIn({
      workload: workload({ labels: { "napwake.dev/managed": "true" } }),
      namespaceLabels: {},
      managers: [marked],
    });
    expect(again.map((a) => a.kind)).toEqual(["none"]);
  });

  it("creates nothing when a ManagedWorkload from Git already manages the workload", () => {
    const actions = decideOptIn({
      workload: workload({ labels: { "napwake.dev/managed": "true" } }),
      namespaceLabels: {},
      managers: [mw("from-git")],
    });
    expect(actions.map((a) => a.kind)).toEqual(["none"]);
  });

  it("deletes its own ManagedWorkload when the label goes, then resumes the orphaned paused workload", () => {
    const actions = decideOptIn({
      workload: workload({ replicas: 0, pausedFrom: 2 }),
      namespaceLabels: {},
      managers: [mw("web.deployment", "uid-web")],
    });
    expect(actions.map((a) => a.kind)).toEqual(["delete", "resume-orphan"]);
  });

  it("resumes a paused workload left with no ManagedWorkload, as after a crash between the two", () => {
    const actions = decideOptIn({
      workload: workload({ replicas: 0, pausedFrom: 3 }),
      namespaceLabels: {},
      managers: [],
    });
    expect(actions).toEqual([expect.objectContaining({ kind: "resume-orphan", from: 3 })]);
  });

  it("finishes resuming an orphan that got as far as its scale before a crash", () => {
    const actions = decideOptIn({
      workload: workload({ replicas: 3, pausedFrom: 3 }),
      namespaceLabels: {},
      managers: [],
    });
    expect(actions).toEqual([expect.objectContaining({ kind: "resume-orphan", from: 3 })]);
  });

  it("never deletes a hand-written ManagedWorkload, even one owned by its target so it is collected with it", () => {
    const actions = decideOptIn({
      workload: workload({ replicas: 0, pausedFrom: 3 }),
      namespaceLabels: {},
      managers: [mw("web-by-hand", "uid-web")],
    });
    expect(actions.map((a) => a.kind)).toEqual(["none"]);
  });

  it("never deletes a ManagedWorkload it did not create", () => {
    const actions = decideOptIn({
      workload: workload({ replicas: 0, pausedFrom: 3 }),
      namespaceLabels: {},
      managers: [mw("from-git")],
    });
    expect(actions.map((a) => a.kind)).toEqual(["none"]);
  });
});
