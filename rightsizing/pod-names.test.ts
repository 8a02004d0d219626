import { describe, expect, it } from "vitest";
import { podNameMatcher, podNamePrefix, podNameRegex, templateHashCutTo } from "./pod-names.ts";
import { deploymentPodName } from "./testing.ts";

const named = (length: number, letter = "a") => letter.repeat(length);

describe("the names of a workload's pods", () => {
  it.each([
    {
      kind: "Deployment" as const,
      name: "web",
      matches: ["web-7d9f8c6b5-x2x4z", "web-6b7c8d9f5d-wwwww", "web-5d4f6b-x2x4z"],
      // A sibling Deployment's pods, and a sibling StatefulSet's (`web-redis`).
      // Another controller's pods under the same name: a Job `web-migrate`, a DaemonSet `web-agent`, a CronJob `web`.
      not: [
        "web-admin-7d9f8c6b5-x2x4z",
        "web-0",
        "web-redis-0",
        "web-redis-12",
        "web-migrate-4xk9z",
        "web-agent-7xk2p",
        "web-29012345-q2x7z",
        "web-29456789-q2x7z",
        // Jobs named like a short hash: `web-5`, `web-db`, `web-b4d5f`.
        "web-5-q7wzt",
        "web-db-k2x9z",
        "web-b4d5f-k2x9z",
      ],
    },
    {
      kind: "StatefulSet" as const,
      name: "db",
      matches: ["db-0", "db-12"],
      not: ["db-backup-0", "db-7d9f8c6b5-x2x4z", "db-1-0"],
    },
    { kind: "Deployment" as const, name: "a.b", matches: ["a.b-4bcd5f-x2x4z"], not: ["axb-4bcd5f-x2x4z"] },
  ])("names exactly the pods of a $kind called $name", ({ kind, name, matches, not }) => {
    const belongs = podNameMatcher(kind, name);
    for (const pod of matches) expect(belongs(pod), pod).toBe(true);
    for (const pod of not) expect(belongs(pod), pod).toBe(false);
  });

  // 46 characters is the longest name whose pods are never cut; 57 keeps the dash and no hash; from 58 on,
  // only the name's first 58 characters are left.
  it.each([3, 46, 47, 50, 56, 57, 58, 59, 70, 253])(
    "names the pods of a Deployment called with %i characters, as the API server cuts them",
    (length) => {
      const name = named(length);
      const belongs = podNameMatcher("Deployment", name);
      // The shortest hash read uncut (six digits), and the usual nine and ten.
      for (const hash of ["5d4f6b", "7d9f8c6b5", "6b7c8d9f5d"]) {
        const pod = deploymentPodName(name, hash);
        expect(pod.length).toBeLessThanOrEqual(63);
        expect(belongs(pod), pod).toBe(true);
        expect(pod.startsWith(podNamePrefix(name)), pod).toBe(true);
      }
    },
  );

  // 52 to 55 characters leave room for a hash of four to one characters only: too few to read one by.
  it.each([52, 53, 54, 55])(
    "does not take the pods of a Job named like a hash that fits, at %i characters",
    (length) => {
      const name = named(length);
      // A Job `<name>-b4d5`, `<name>-b4d`, `<name>-b4` or `<name>-b`: its pod names uncut, 63 characters.
      const pod = `${name}-${"b4d5".slice(0, 56 - length)}-k2x9z`;
      expect(pod.length).toBe(63);
      expect(podNameMatcher("Deployment", name)(pod), pod).toBe(false);
    },
  );

  it.each([46, 50, 57])(
    "does not take the pods of a sibling Deployment one character longer, at %i characters",
    (length) => {
      const name = named(length);
      const sibling = `${name}b`;
      const belongs = podNameMatcher("Deployment", name);
      for (const hash of ["5d", "7d9f8c6b5", "6b7c8d9f5d"]) {
        expect(belongs(deploymentPodName(sibling, hash)), deploymentPodName(sibling, hash)).toBe(false);
      }
    },
  );

  it.each([
    // Never cut, so a longer sibling's pods (`<name>-bbbbbbbbbbb-...`, cut or not) are told apart.
    { name: named(46), sibling: `${named(46)}-bbbbbbbbbbb` },
    // The name's dot is a dot, in the form cut to 58 characters too.
    { name: `x.${named(60, "y")}`, sibling: `xz${named(60, "y")}` },
  ])("does not take the pods of $sibling for those of $name", ({ name, sibling }) => {
    const belongs = podNameMatcher("Deployment", name);
    expect(belongs(deploymentPodName(name))).toBe(true);
    for (const hash of ["5d", "7d9f8c6b5", "6b7c8d9f5d"]) {
      expect(belongs(deploymentPodName(sibling, hash)), deploymentPodName(sibling, hash)).toBe(false);
    }
  });

  it("writes a regex Prometheus reads as written (RE2: no look-around, no back-references)", () => {
    for (const length of [3, 50, 70]) {
      expect(podNameRegex("Deployment", named(length))).toMatch(/^[a-z0-9\-[\]{},|]+$/);
    }
  });
});

describe("templateHashCutTo", () => {
  it.each([
    {
      what: "a Deployment whose pods keep six hash characters",
      kind: "Deployment" as const,
      length: 51,
      want: null,
    },
    { what: "a Deployment whose pods keep five", kind: "Deployment" as const, length: 52, want: 5 },
    { what: "a Deployment whose pods keep none", kind: "Deployment" as const, length: 60, want: 0 },
    {
      what: "a StatefulSet, whose pods are told by their ordinal",
      kind: "StatefulSet" as const,
      length: 60,
      want: null,
    },
  ])("$what: $want", ({ kind, length, want }) => {
    expect(templateHashCutTo(kind, named(length))).toBe(want);
  });

  // A Job's pods: generateName `<job>-` cut to 58 characters, then five random ones.
  const jobPod = (job: string) => `${`${job}-`.slice(0, 58)}k2x9z`;
  it.each([
    { length: 55, job: "db" },
    { length: 56, job: "backup" },
    { length: 56, job: "5" },
    { length: 57, job: "migrate" },
  ])(
    "names a Deployment of $length characters, whose pods the Job <name>-$job's pass for",
    ({ length, job }) => {
      const name = named(length);
      expect(podNameMatcher("Deployment", name)(jobPod(`${name}-${job}`))).toBe(true);
      expect(templateHashCutTo("Deployment", name)).not.toBeNull();
    },
  );

  it.each(["db", "5", "backup", "migrate"])(
    "leaves out one of 51, whose pods the Job <name>-%s's do not pass for",
    (job) => {
      const name = named(51);
      expect(podNameMatcher("Deployment", name)(jobPod(`${name}-${job}`))).toBe(false);
      expect(templateHashCutTo("Deployment", name)).toBeNull();
    },
  );
});
