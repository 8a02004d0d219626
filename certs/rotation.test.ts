import { generateKeyPairSync } from "node:crypto";
import type { V1Secret } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { createCertificateAuthority, defaultPkiDeps, issueCertificate } from "./pki.ts";
import {
  caFromSecret,
  caSecret,
  delayUntil,
  renewalTime,
  serviceDnsNames,
  servingLifetimeMs,
} from "./rotation.ts";

const t0 = new Date("2026-01-01T00:00:00Z");
const at = (ms: number) => new Date(t0.getTime() + ms);
const hour = 3600_000;

describe("renewalTime", () => {
  it.each([
    { name: "a 24 h certificate at 16 h", life: 24 * hour, want: 16 * hour },
    { name: "a 30 s certificate at 20 s", life: 30_000, want: 20_000 },
    { name: "an already expired one at once", life: -5_000, want: 0 },
  ])("renews $name", ({ life, want }) => {
    expect(renewalTime(t0, at(life))).toEqual(at(want));
  });
});

describe("delayUntil", () => {
  it.each([
    { name: "the time left", now: t0, target: at(5_000), want: 5_000 },
    { name: "0 when overdue", now: at(10_000), target: at(5_000), want: 0 },
    {
      name: "at most the longest timer Node can arm",
      now: t0,
      target: at(30 * 24 * hour),
      want: 2 ** 31 - 1,
    },
  ])("is $name", ({ now, target, want }) => {
    expect(delayUntil(now, target)).toBe(want);
  });
});

describe("servingLifetimeMs", () => {
  it.each([
    { name: "the configured life", caNotAfter: at(365 * 24 * hour), want: 24 * hour },
    { name: "cut at the CA's expiry", caNotAfter: at(2 * hour), want: 2 * hour },
  ])("is $name", ({ caNotAfter, want }) => {
    expect(servingLifetimeMs(t0, 24 * hour, caNotAfter)).toBe(want);
  });
});

it("names a Service the ways the API server and pods may dial it", () => {
  expect(serviceDnsNames("napwake-system", "napwake-webhook")).toEqual([
    "napwake-webhook",
    "napwake-webhook.napwake-system",
    "napwake-webhook.napwake-system.svc",
    "napwake-webhook.napwake-system.svc.cluster.local",
  ]);
});

describe("caFromSecret", () => {
  const pki = { ...defaultPkiDeps, keyBits: 1024 };
  const now = new Date();
  const ca = createCertificateAuthority({ commonName: "ca", notBefore: now, validForMs: hour }, pki);
  const other = createCertificateAuthority({ commonName: "other", notBefore: now, validForMs: hour }, pki);
  const leaf = issueCertificate(
    ca,
    { commonName: "leaf", usage: "server", notBefore: now, validForMs: hour },
    pki,
  );
  const ref = { namespace: "napwake-system", name: "napwake-webhook-ca" };
  const secret = (pair: { certPem: string; keyPem: string }): V1Secret => caSecret(ref, pair);

  it("reads back the CA it stored", () => {
    const parsed = caFromSecret(secret(ca), now);
    expect("ca" in parsed && parsed.ca).toEqual(ca);
  });

  it.each([
    { name: "no data", s: { metadata: ref } as V1Secret, problem: /has no tls.crt or tls.key/ },
    { name: "not PEM", s: secret({ certPem: "x", keyPem: "y" }), problem: /does not hold a PEM certificate/ },
    { name: "a leaf, not a CA", s: secret(leaf), problem: /not a CA/ },
    {
      name: "a key of another CA",
      s: secret({ certPem: ca.certPem, keyPem: other.keyPem }),
      problem: /does not match/,
    },
  ])("refuses $name, saying how to fix it", ({ s, problem }) => {
    const parsed = caFromSecret(s, now);
    expect("problem" in parsed && parsed.problem).toMatch(problem);
    expect("problem" in parsed && parsed.problem).toContain("napwake-system/napwake-webhook-ca");
    expect("problem" in parsed && parsed.problem).toContain("Fix: delete the Secret");
  });

  it("refuses a CA whose key is not RSA, which it cannot issue from, saying how to fix it", () => {
    const { privateKey } = generateKeyPairSync("ec", { namedCurve: "P-256" });
    const keyPem = privateKey.export({ type: "pkcs8", format: "pem" }).toString();
    const parsed = caFromSecret(secret({ certPem: ca.certPem, keyPem }), now);
    expect("problem" in parsed && parsed.problem).toMatch(
      /holds a ec key; Napwake issues from an RSA CA only/,
    );
    expect("problem" in parsed && parsed.problem).toContain("Fix: delete the Secret");
  });

  it("refuses a CA not valid yet, whose leaves the API server would refuse, until its time comes", () => {
    const ahead = createCertificateAuthority(
      { commonName: "ahead", notBefore: new Date(now.getTime() + hour), validForMs: hour },
      pki,
    );
    const parsed = caFromSecret(secret(ahead), now);
    expect("problem" in parsed && parsed.problem).toMatch(
      /holds a CA valid only from .* it is taken up then/,
    );
    expect("ca" in caFromSecret(secret(ahead), new Date(now.getTime() + hour))).toBe(true);
  });

  it("refuses an expired CA", () => {
    const parsed = caFromSecret(secret(ca), new Date(now.getTime() + 2 * hour));
    expect("problem" in parsed && parsed.problem).toMatch(/expired/);
  });
});
