import { X509Certificate } from "node:crypto";
import { describe, expect, it } from "vitest";
import {
  certificateValidity,
  createCertificateAuthority,
  defaultPkiDeps,
  issueCertificate,
  serialFrom,
} from "./pki.ts";

const now = new Date("2026-01-01T00:00:00Z");
const hour = 3600_000;
const ca = createCertificateAuthority({ commonName: "test-ca", notBefore: now, validForMs: 24 * hour });

describe("pki", () => {
  it("creates a self-signed CA that can sign", () => {
    const x = new X509Certificate(ca.certPem);
    expect(x.ca).toBe(true);
    expect(x.subject).toContain("CN=test-ca");
    expect(x.verify(x.publicKey)).toBe(true);
  });

  it.each([
    { usage: "server" as const, server: true, client: false },
    { usage: "client" as const, server: false, client: true },
    { usage: "server-and-client" as const, server: true, client: true },
  ])(
    "issues a $usage certificate signed by the CA with the right key usages",
    ({ usage, server, client }) => {
      const leaf = issueCertificate(ca, {
        commonName: "leaf",
        organizations: ["system:masters"],
        dnsNames: ["svc.ns.svc"],
        ipAddresses: ["127.0.0.1"],
        usage,
        notBefore: now,
        validForMs: hour,
      });
      const x = new X509Certificate(leaf.certPem);
      expect(x.checkIssued(new X509Certificate(ca.certPem))).toBe(true);
      expect(x.verify(new X509Certificate(ca.certPem).publicKey)).toBe(true);
      expect(x.subject).toContain("O=system:masters");
      expect(x.subjectAltName).toContain("DNS:svc.ns.svc");
      expect(x.subjectAltName).toContain("IP Address:127.0.0.1");
      expect(x.keyUsage?.includes("1.3.6.1.5.5.7.3.1")).toBe(server);
      expect(x.keyUsage?.includes("1.3.6.1.5.5.7.3.2")).toBe(client);
    },
  );

  it.each([
    [
      "00 00 05",
      "leading zero bytes before one under 0x80 (OpenSSL and Go refuse the pad node-forge leaves)",
    ],
    ["00 ff 05", "a leading zero byte"],
    ["ff ff ff", "the top bit set (a negative DER integer)"],
    ["7f 00 00", "no change needed"],
  ])("draws a serial from bytes %s (%s) that OpenSSL parses", (start) => {
    const bytes = Buffer.alloc(16, 0x11);
    Buffer.from(start.replaceAll(" ", ""), "hex").copy(bytes);
    const serial = serialFrom(bytes);
    expect(Number.parseInt(serial.slice(0, 2), 16)).toBeGreaterThanOrEqual(0x40);
    expect(Number.parseInt(serial.slice(0, 2), 16)).toBeLessThan(0x80);
    const pair = createCertificateAuthority(
      { commonName: "ca", notBefore: now, validForMs: hour },
      { ...defaultPkiDeps, keyBits: 1024, randomSerial: () => serial },
    );
    expect(new X509Certificate(pair.certPem).serialNumber.toLowerCase()).toBe(serial);
  });

  it("backdates validity a little so skewed clocks accept a fresh certificate", () => {
    const { notBefore, notAfter } = certificateValidity(ca.certPem);
    expect(notBefore.getTime()).toBeLessThan(now.getTime());
    expect(notAfter.getTime()).toBe(now.getTime() + 24 * hour);
  });
});
