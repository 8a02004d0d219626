import { createHash, X509Certificate } from "node:crypto";
import forge from "node-forge";
import { describe, expect, it } from "vitest";
import { issueCertificate, type KeyPair } from "./pki.ts";

/**
 * A CA Secret replaced by hand (decision 6) holds a CA made by another tool: its leaves must name it exactly as
 * verifiers look it up, by its subject's bytes and (OpenSSL) by its own key identifier.
 */
function foreignCa(subject: forge.pki.CertificateField[], keyIdentifier: "forge" | "sha256"): KeyPair {
  const keys = forge.pki.rsa.generateKeyPair({ bits: 1024 });
  const cert = forge.pki.createCertificate();
  cert.publicKey = keys.publicKey;
  cert.serialNumber = "4a";
  cert.validity.notBefore = new Date(Date.now() - 60_000);
  cert.validity.notAfter = new Date(Date.now() + 30 * 24 * 3_600_000);
  cert.setSubject(subject);
  cert.setIssuer(subject);
  cert.setExtensions([
    { name: "basicConstraints", cA: true, critical: true },
    { name: "keyUsage", keyCertSign: true, cRLSign: true, critical: true },
    keyIdentifier === "forge" ? { name: "subjectKeyIdentifier" } : sha256KeyIdentifier(keys.publicKey),
  ]);
  cert.sign(keys.privateKey, forge.md.sha256.create());
  return { certPem: forge.pki.certificateToPem(cert), keyPem: forge.pki.privateKeyToPem(keys.privateKey) };
}

/** A subject key identifier as Go writes it: a truncated SHA-256, not the SHA-1 forge computes. */
function sha256KeyIdentifier(publicKey: forge.pki.rsa.PublicKey): object {
  const spki = forge.asn1.toDer(forge.pki.publicKeyToAsn1(publicKey)).getBytes();
  const ski = createHash("sha256").update(Buffer.from(spki, "binary")).digest("hex").slice(0, 40);
  const { Class, Type } = forge.asn1;
  return {
    id: "2.5.29.14",
    value: forge.asn1.create(Class.UNIVERSAL, Type.OCTETSTRING, false, forge.util.hexToBytes(ski)),
  };
}

/**
 * `ca` with the first two RDNs of its subject (and issuer) made one multi-valued RDN, as `openssl req
 * -multivalue-rdn -subj "/O=Corp+OU=Platform/..."` writes it, signed again with its key.
 */
function withMultiValuedRdn(ca: KeyPair): KeyPair {
  const { Class, Type } = forge.asn1;
  const [block] = forge.pem.decode(ca.certPem);
  const certificate = forge.asn1.fromDer(block?.body ?? "");
  const [tbs] = certificate.value as forge.asn1.Asn1[];
  const fields = tbs?.value as forge.asn1.Asn1[];
  for (const at of [3, 5]) {
    const [first, second, ...rest] = (fields[at] as forge.asn1.Asn1).value as forge.asn1.Asn1[];
    const merged = forge.asn1.create(Class.UNIVERSAL, Type.SET, true, [
      ...((first?.value as forge.asn1.Asn1[]) ?? []),
      ...((second?.value as forge.asn1.Asn1[]) ?? []),
    ]);
    fields[at] = forge.asn1.create(Class.UNIVERSAL, Type.SEQUENCE, true, [merged, ...rest]);
  }
  const md = forge.md.sha256.create();
  md.update(forge.asn1.toDer(tbs as forge.asn1.Asn1).getBytes());
  const key = forge.pki.privateKeyFromPem(ca.keyPem);
  (certificate.value as forge.asn1.Asn1[])[2] = forge.asn1.create(
    Class.UNIVERSAL,
    Type.BITSTRING,
    false,
    `\u0000${key.sign(md)}`,
  );
  return {
    certPem: forge.pem.encode({ type: "CERTIFICATE", body: forge.asn1.toDer(certificate).getBytes() }),
    keyPem: ca.keyPem,
  };
}

function leafOf(ca: KeyPair): X509Certificate {
  const request = {
    commonName: "napwake-webhook.napwake-system.svc",
    dnsNames: ["napwake-webhook.napwake-system.svc"],
    usage: "server" as const,
    notBefore: new Date(),
    validForMs: 3_600_000,
  };
  return new X509Certificate(
    issueCertificate(ca, request, { randomSerial: () => "4b", keyBits: 1024 }).certPem,
  );
}

describe("serving certificates from a CA supplied by hand", () => {
  it("name a CA with a non-ASCII subject byte for byte, so they chain to it", () => {
    // UTF8String values, as `openssl req -utf8` and Go write them.
    const utf8 = forge.asn1.Type.UTF8 as unknown as forge.asn1.Class;
    const ca = foreignCa(
      [
        { shortName: "O", value: "Société Générale", valueTagClass: utf8 },
        { shortName: "CN", value: "Webhook CA", valueTagClass: utf8 },
      ],
      "forge",
    );
    const caCert = new X509Certificate(ca.certPem);
    const leaf = leafOf(ca);
    expect(leaf.issuer).toBe(caCert.subject);
    expect(leaf.checkIssued(caCert)).toBe(true);
  });

  it("name a CA whose subject has a multi-valued RDN (O=Corp+OU=Platform) as it is, so they chain to it", () => {
    const ca = withMultiValuedRdn(
      foreignCa(
        [
          { shortName: "O", value: "Corp" },
          { shortName: "OU", value: "Platform" },
          { shortName: "CN", value: "corp-webhook-ca" },
        ],
        "forge",
      ),
    );
    const caCert = new X509Certificate(ca.certPem);
    expect(caCert.subject).toBe("O=Corp + OU=Platform\nCN=corp-webhook-ca");
    const leaf = leafOf(ca);
    expect(leaf.issuer).toBe(caCert.subject);
    expect(leaf.checkIssued(caCert)).toBe(true);
    expect(leaf.verify(caCert.publicKey)).toBe(true);
  });

  it("name a CA by its own key identifier, however it was computed, so OpenSSL chains them", () => {
    const ca = foreignCa([{ shortName: "CN", value: "go-made-ca" }], "sha256");
    expect(leafOf(ca).checkIssued(new X509Certificate(ca.certPem))).toBe(true);
  });
});
