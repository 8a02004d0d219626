import { X509Certificate } from "node:crypto";
import { describe, expect, it } from "vitest";
import { type CaSwitch, decideCaSwitch } from "./ca-switch.ts";
import { createCertificateAuthority, defaultPkiDeps } from "./pki.ts";

const pki = { ...defaultPkiDeps, keyBits: 1024 };
const now = new Date("2026-01-01T00:00:00Z");
const ca = (commonName: string) =>
  createCertificateAuthority({ commonName, notBefore: now, validForMs: 365 * 24 * 3600_000 }, pki).certPem;
const previous = ca("previous");
const replaced = ca("replaced");
const later = new Date(now.getTime() + 3600_000);
/** The same certificate as a bundle may hold it: another PEM encoding of the same DER. */
const reencoded = (pem: string) => `\n${new X509Certificate(pem).toString().replaceAll("\n", "\r\n")}`;

describe("decideCaSwitch", () => {
  it.each<{
    name: string;
    serving: string | undefined;
    published: string[];
    servingNotAfter?: Date;
    want: CaSwitch;
  }>([
    {
      name: "issues from the shared CA at once when it serves nothing yet: there is nothing to protect",
      serving: undefined,
      published: [],
      want: { switchNow: true, why: "no serving certificate yet" },
    },
    {
      name: "has nothing to switch when it serves from the shared CA already",
      serving: replaced,
      published: [previous],
      servingNotAfter: later,
      want: { switchNow: false, why: "already serving from it" },
    },
    {
      name: "has nothing to switch when it serves from the shared CA written another way",
      serving: reencoded(replaced),
      published: [],
      servingNotAfter: later,
      want: { switchNow: false, why: "already serving from it" },
    },
    {
      name: "keeps the CA it serves from while the caBundle trusts only that one",
      serving: previous,
      published: [previous],
      servingNotAfter: later,
      want: { switchNow: false, why: "the caBundle does not trust the new CA yet" },
    },
    {
      name: "keeps the CA it serves from when the published caBundle is not known",
      serving: previous,
      published: [],
      servingNotAfter: later,
      want: { switchNow: false, why: "the caBundle does not trust the new CA yet" },
    },
    {
      name: "keeps the CA it serves from when the caBundle holds nothing readable",
      serving: previous,
      published: ["-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----"],
      servingNotAfter: later,
      want: { switchNow: false, why: "the caBundle does not trust the new CA yet" },
    },
    {
      name: "switches once the caBundle trusts the new CA beside the old one",
      serving: previous,
      published: [replaced, previous],
      servingNotAfter: later,
      want: { switchNow: true, why: "the caBundle trusts the new CA" },
    },
    {
      name: "switches once the caBundle trusts the new CA, however it is written there",
      serving: previous,
      published: [reencoded(replaced)],
      servingNotAfter: later,
      want: { switchNow: true, why: "the caBundle trusts the new CA" },
    },
    {
      name: "switches when the CA it serves from has expired: its certificates are trusted by no one",
      serving: previous,
      published: [previous],
      servingNotAfter: new Date(now.getTime() - 1),
      want: { switchNow: true, why: "the CA served from has expired" },
    },
    {
      name: "switches at the instant the CA it serves from expires",
      serving: previous,
      published: [],
      servingNotAfter: now,
      want: { switchNow: true, why: "the CA served from has expired" },
    },
    {
      name: "keeps the CA it serves from until the last millisecond of its life",
      serving: previous,
      published: [previous],
      servingNotAfter: new Date(now.getTime() + 1),
      want: { switchNow: false, why: "the caBundle does not trust the new CA yet" },
    },
  ])("$name", ({ serving, published, servingNotAfter, want }) => {
    expect(decideCaSwitch({ serving, shared: replaced, published, servingNotAfter, now })).toEqual(want);
  });
});
