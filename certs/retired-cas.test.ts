import { X509Certificate } from "node:crypto";
import { describe, expect, it } from "vitest";
import { retiredCasAnnotation } from "../api/keys.ts";
import { createCertificateAuthority, defaultPkiDeps, issueCertificate } from "./pki.ts";
import {
  decideTrust,
  formatRetiredCas,
  maxRetiredCas,
  parseRetiredCas,
  type RetiredCa,
  splitCertificates,
  trustBundle,
  withRetiredCas,
} from "./retired-cas.ts";

const pki = { ...defaultPkiDeps, keyBits: 1024 };
const minute = 60_000;
const hour = 60 * minute;
const grace = 15 * minute;
/** The switch: the CA in the Secret was replaced, `old` by `current`; a replica recorded it then. */
const t0 = new Date("2026-01-01T00:00:00Z");
const at = (ms: number) => new Date(t0.getTime() + ms);

const authority = (commonName: string, notBefore: Date, validForMs: number) =>
  createCertificateAuthority({ commonName, notBefore, validForMs }, pki);
const current = authority("current", at(-hour), 365 * 24 * hour).certPem;
const old = authority("old", at(-48 * hour), 365 * 24 * hour).certPem;
const older = authority("older", at(-96 * hour), 365 * 24 * hour).certPem;
/** Valid until 30 s after the switch. */
const expiring = authority("expiring", at(-hour), hour + 30_000).certPem;
const leaf = issueCertificate(
  authority("issuer", at(-hour), 24 * hour),
  { commonName: "leaf", usage: "server", notBefore: at(-hour), validForMs: 24 * hour },
  pki,
).certPem;

const names = new Map(
  Object.entries({ current, old, older, expiring, leaf }).map(([name, pem]) => [
    new X509Certificate(pem).fingerprint256,
    name,
  ]),
);
/** The CAs of a bundle or record by name, in order. */
const named = (pems: readonly string[]) =>
  pems.map((pem) => names.get(new X509Certificate(pem).fingerprint256) ?? "?");
const record = (entries: { pem: string; until: Date | string }[]) =>
  JSON.stringify(
    entries.map((e) => ({
      until: typeof e.until === "string" ? e.until : e.until.toISOString(),
      certificate: new X509Certificate(e.pem).toString(),
    })),
  );
/** What another replica recorded when it noticed the switch. */
const recordedAtSwitch = record([{ pem: old, until: at(grace) }]);

describe("the caBundle a replica publishes, from the CA Secret it read", () => {
  it.each<{
    name: string;
    record?: string;
    known?: RetiredCa[];
    learned?: string[];
    now: Date;
    bundle: string[];
    recorded: { name: string; until: Date }[];
    problems?: RegExp[];
  }>([
    {
      name: "a replica started after the switch keeps the previous CA until the recorded deadline",
      record: recordedAtSwitch,
      now: at(grace - 1),
      bundle: ["current", "old"],
      recorded: [{ name: "old", until: at(grace) }],
    },
    {
      name: "a replica started after the switch drops the previous CA at the recorded deadline",
      record: recordedAtSwitch,
      now: at(grace),
      bundle: ["current"],
      recorded: [{ name: "old", until: at(grace) }],
    },
    {
      name: "a caBundle published before the deadline does not bring the previous CA back after it",
      record: recordedAtSwitch,
      learned: [old],
      now: at(grace + minute),
      bundle: ["current"],
      recorded: [{ name: "old", until: at(grace) }],
    },
    {
      name: "a replaced CA is forgotten one grace period after its deadline",
      record: recordedAtSwitch,
      now: at(2 * grace),
      bundle: ["current"],
      recorded: [],
    },
    {
      name: "the replica that notices the switch records the CA it served from, for a grace period from now",
      learned: [old],
      now: at(2 * minute),
      bundle: ["current", "old"],
      recorded: [{ name: "old", until: at(2 * minute + grace) }],
    },
    {
      name: "a replica started after the switch, before anyone recorded it, keeps the published previous CA",
      learned: [current, old],
      now: at(minute),
      bundle: ["current", "old"],
      recorded: [{ name: "old", until: at(minute + grace) }],
    },
    {
      name: "a recorded deadline stands: a replica noticing the switch later does not extend it",
      record: recordedAtSwitch,
      learned: [old],
      now: at(4 * minute),
      bundle: ["current", "old"],
      recorded: [{ name: "old", until: at(grace) }],
    },
    {
      name: "what this replica decided before is recorded again, with its deadline, when the record lost it",
      known: [{ pem: old, until: at(grace) }],
      now: at(4 * minute),
      bundle: ["current", "old"],
      recorded: [{ name: "old", until: at(grace) }],
    },
    {
      name: "every CA replaced within the grace is kept, the latest replaced first",
      record: record([
        { pem: older, until: at(grace - 5 * minute) },
        { pem: old, until: at(grace) },
      ]),
      now: at(minute),
      bundle: ["current", "old", "older"],
      recorded: [
        { name: "old", until: at(grace) },
        { name: "older", until: at(grace - 5 * minute) },
      ],
    },
    {
      name: "an expired previous CA is dropped, deadline or not",
      record: record([{ pem: expiring, until: at(grace) }]),
      now: at(minute),
      bundle: ["current"],
      recorded: [],
    },
    {
      name: "a CA switched back to is current again, not a replaced one",
      record: record([{ pem: current, until: at(grace) }]),
      now: at(minute),
      bundle: ["current"],
      recorded: [],
    },
    {
      name: "a corrupt record is ignored, with the problem said",
      record: "-----BEGIN CERTIFICATE-----",
      now: at(minute),
      bundle: ["current"],
      recorded: [],
      problems: [/napwake.dev\/retired-cas: not JSON/],
    },
    {
      name: "a record that is not a list is ignored",
      record: '{"until":"2026-01-01T00:15:00Z"}',
      now: at(minute),
      bundle: ["current"],
      recorded: [],
      problems: [/not a JSON array/],
    },
    {
      name: "an entry with an unparsable deadline is ignored, the others kept",
      record: record([
        { pem: old, until: "in fifteen minutes" },
        { pem: older, until: at(grace) },
      ]),
      now: at(minute),
      bundle: ["current", "older"],
      recorded: [{ name: "older", until: at(grace) }],
      problems: [/entry 0: until "in fifteen minutes" is not an RFC 3339 time/],
    },
    {
      name: "an entry whose deadline no grace period reaches is ignored",
      record: record([{ pem: old, until: at(10 * 24 * hour) }]),
      now: at(minute),
      bundle: ["current"],
      recorded: [],
      problems: [/entry 0: until .* is further ahead than a grace period reaches/],
    },
    {
      name: "a recorded certificate that is not a CA, or not a certificate, is ignored",
      record: JSON.stringify([
        { until: at(grace).toISOString(), certificate: leaf },
        { until: at(grace).toISOString(), certificate: "garbage" },
        "garbage",
      ]),
      now: at(minute),
      bundle: ["current"],
      recorded: [],
      problems: [
        /entry 0: certificate CN=leaf is not a CA/,
        /entry 1: certificate is not a PEM/,
        /entry 2: until/,
      ],
    },
    {
      name: "a published certificate that is not a CA is not retired",
      learned: [leaf],
      now: at(minute),
      bundle: ["current"],
      recorded: [],
      problems: [/a trusted CA to retire: .*leaf is not a CA/],
    },
  ])("$name", ({ record: value, known = [], learned = [], now, bundle, recorded, problems = [] }) => {
    const decided = decideTrust({ current, record: value, known, learned, now, graceMs: grace });
    expect(named(splitCertificates(trustBundle(current, decided.retired, now)))).toEqual(bundle);
    const written = parseRetiredCas(decided.record, now, grace);
    expect(written.problems).toEqual([]);
    expect(written.retired.map((ca) => ({ name: named([ca.pem])[0], until: ca.until }))).toEqual(recorded);
    expect(decided.problems).toHaveLength(problems.length);
    problems.forEach((problem, i) => {
      expect(decided.problems[i]).toMatch(problem);
    });
  });

  it("writes nothing when the record is up to date: the record it makes is the one it read", () => {
    const decided = decideTrust({
      current,
      record: recordedAtSwitch,
      known: [],
      learned: [old],
      now: at(minute),
      graceMs: grace,
    });
    expect(decided.record).toBe(recordedAtSwitch);
  });

  it("keeps the latest replaced CAs only, so the record and the caBundle stay small", () => {
    const many = Array.from({ length: maxRetiredCas + 1 }, (_, i) => ({
      pem: authority(`ca-${i}`, at(-hour), 24 * hour).certPem,
      until: at(grace - i * minute),
    }));
    const decided = decideTrust({
      current,
      record: record(many),
      known: [],
      learned: [],
      now: at(0),
      graceMs: grace,
    });
    expect(decided.retired.map((ca) => ca.until)).toEqual(many.slice(0, maxRetiredCas).map((ca) => ca.until));
  });

  it("makes the same record and caBundle whatever the order and line endings of what it read", () => {
    const entries = [
      { pem: older, until: at(grace - minute) },
      { pem: old, until: at(grace) },
    ];
    const decide = (input: { record?: string; known?: RetiredCa[] }) => {
      const decided = decideTrust({
        current,
        record: undefined,
        known: [],
        learned: [],
        now: at(0),
        graceMs: grace,
        ...input,
      });
      return { record: decided.record, bundle: trustBundle(current, decided.retired, at(0)) };
    };
    // As written by hand: the PEMs as node-forge writes them (CRLF), oldest first.
    const byHand = JSON.stringify(entries.map((e) => ({ until: e.until.toISOString(), certificate: e.pem })));
    const a = decide({ record: byHand });
    const b = decide({
      known: [...entries].reverse().map((e) => ({ ...e, pem: e.pem.replaceAll("\r\n", "\n") })),
    });
    expect(b).toEqual(a);
    expect(named(splitCertificates(a.bundle))).toEqual(["current", "old", "older"]);
    expect(a.record).not.toBe(byHand);
  });

  it("is the current CA exactly as the Secret holds it when no replaced CA is trusted any more", () => {
    expect(trustBundle(current, [{ pem: old, until: at(grace) }], at(grace))).toBe(current);
  });
});

describe("the record on the CA Secret", () => {
  it("reads back what it writes", () => {
    const retired = [{ pem: new X509Certificate(old).toString(), until: at(grace) }];
    expect(parseRetiredCas(formatRetiredCas(retired), at(0), grace)).toEqual({ retired, problems: [] });
  });

  it("is no annotation at all when nothing is replaced", () => {
    expect(formatRetiredCas([])).toBeUndefined();
    expect(parseRetiredCas(undefined, at(0), grace)).toEqual({ retired: [], problems: [] });
  });

  it("is set on a copy of the Secret, the other annotations kept, and removed when empty", () => {
    const secret = { metadata: { name: "ca", annotations: { team: "a", [retiredCasAnnotation]: "[]" } } };
    expect(withRetiredCas(secret, "x").metadata?.annotations).toEqual({
      team: "a",
      [retiredCasAnnotation]: "x",
    });
    expect(withRetiredCas(secret, undefined).metadata?.annotations).toEqual({ team: "a" });
    expect(secret.metadata.annotations[retiredCasAnnotation]).toBe("[]");
  });
});

it("splits a bundle into its PEM certificates", () => {
  expect(named(splitCertificates(`${current}\n${old}`))).toEqual(["current", "old"]);
  expect(splitCertificates("")).toEqual([]);
});
