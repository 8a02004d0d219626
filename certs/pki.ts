import { randomBytes } from "node:crypto";
import forge from "node-forge";

/** A certificate and its private key, both PEM-encoded. */
export interface KeyPair {
  certPem: string;
  keyPem: string;
}

export type CertificateUsage = "server" | "client" | "server-and-client";

export interface CertificateRequest {
  commonName: string;
  /** X.509 organisations; Kubernetes reads them as the groups of a client certificate. */
  organizations?: string[];
  dnsNames?: string[];
  ipAddresses?: string[];
  usage: CertificateUsage;
  notBefore: Date;
  validForMs: number;
}

export interface AuthorityRequest {
  commonName: string;
  notBefore: Date;
  validForMs: number;
}

/** Injected so tests can make serial numbers and keys deterministic or cheap. */
export interface PkiDeps {
  randomSerial: () => string;
  keyBits: number;
}

export const defaultPkiDeps: PkiDeps = {
  randomSerial: () => serialFrom(randomBytes(16)),
  keyBits: 2048,
};

/**
 * A serial of 126 random bits: the top bit cleared so DER does not read it as negative, the next one set so its
 * first byte is never zero (a DER INTEGER must not start with a zero byte before one under 0x80, and node-forge
 * strips only one: OpenSSL and Go then refuse the certificate).
 */
export function serialFrom(bytes: Buffer): string {
  const serial = Buffer.from(bytes);
  serial[0] = ((serial[0] ?? 0) & 0x7f) | 0x40;
  return serial.toString("hex");
}

// Clock skew between replicas and the API server must not make a fresh certificate "not yet valid".
const backdateMs = 5 * 60 * 1000;

export function createCertificateAuthority(req: AuthorityRequest, deps: PkiDeps = defaultPkiDeps): KeyPair {
  const keys = forge.pki.rsa.generateKeyPair({ bits: deps.keyBits });
  const cert = baseCertificate(keys.publicKey, req.commonName, req.notBefore, req.validForMs, deps);
  cert.setIssuer(cert.subject.attributes);
  cert.setExtensions([
    { name: "basicConstraints", cA: true, critical: true },
    { name: "keyUsage", keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    { name: "subjectKeyIdentifier" },
  ]);
  cert.sign(keys.privateKey, forge.md.sha256.create());
  return toPem(cert, keys.privateKey);
}

export function issueCertificate(
  ca: KeyPair,
  req: CertificateRequest,
  deps: PkiDeps = defaultPkiDeps,
): KeyPair {
  const caCert = forge.pki.certificateFromPem(ca.certPem);
  const caKey = forge.pki.privateKeyFromPem(ca.keyPem);
  const keys = forge.pki.rsa.generateKeyPair({ bits: deps.keyBits });
  const cert = baseCertificate(keys.publicKey, req.commonName, req.notBefore, req.validForMs, deps);
  if (req.organizations?.length) {
    cert.setSubject([
      ...req.organizations.map((value) => ({ shortName: "O", value })),
      { shortName: "CN", value: req.commonName },
    ]);
  }
  cert.setIssuer(issuerOf(caCert));
  cert.setExtensions([
    { name: "basicConstraints", cA: false },
    { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
    extendedKeyUsage(req.usage),
    ...subjectAltNames(req),
    { name: "authorityKeyIdentifier", keyIdentifier: keyIdentifierOf(caCert) },
  ]);
  cert.sign(caKey, forge.md.sha256.create());
  return toPem(cert, keys.privateKey);
}

/**
 * The CA's subject as a leaf's issuer, byte for byte, as verifiers match them: forge reads a UTF8String value as
 * its raw bytes and would encode them again (a CA of "Société Générale" would issue leaves nobody trusts).
 */
function issuerOf(caCert: forge.pki.Certificate): forge.pki.CertificateField[] {
  return caCert.subject.attributes.map((attribute) =>
    (attribute.valueTagClass as number) === forge.asn1.Type.UTF8 && typeof attribute.value === "string"
      ? { ...attribute, value: forge.util.decodeUtf8(attribute.value) }
      : attribute,
  );
}

/**
 * The key identifier a leaf names its CA by: the CA's own, as OpenSSL matches it, and computed (as forge and
 * Napwake's CAs do) only for a CA that has none.
 */
function keyIdentifierOf(caCert: forge.pki.Certificate): string {
  const own = caCert.getExtension("subjectKeyIdentifier") as { subjectKeyIdentifier?: string } | undefined;
  return own?.subjectKeyIdentifier
    ? forge.util.hexToBytes(own.subjectKeyIdentifier)
    : caCert.generateSubjectKeyIdentifier().getBytes();
}

/** Validity window of a PEM certificate, for renewal decisions. */
export function certificateValidity(certPem: string): { notBefore: Date; notAfter: Date } {
  const cert = forge.pki.certificateFromPem(certPem);
  return { notBefore: cert.validity.notBefore, notAfter: cert.validity.notAfter };
}

function baseCertificate(
  publicKey: forge.pki.rsa.PublicKey,
  commonName: string,
  notBefore: Date,
  validForMs: number,
  deps: PkiDeps,
): forge.pki.Certificate {
  const cert = forge.pki.createCertificate();
  cert.publicKey = publicKey;
  cert.serialNumber = deps.randomSerial();
  cert.validity.notBefore = new Date(notBefore.getTime() - backdateMs);
  cert.validity.notAfter = new Date(notBefore.getTime() + validForMs);
  cert.setSubject([{ shortName: "CN", value: commonName }]);
  return cert;
}

function extendedKeyUsage(usage: CertificateUsage) {
  return {
    name: "extKeyUsage",
    serverAuth: usage !== "client",
    clientAuth: usage !== "server",
  };
}

function subjectAltNames(req: CertificateRequest) {
  const names = [
    ...(req.dnsNames ?? []).map((value) => ({ type: 2, value })),
    ...(req.ipAddresses ?? []).map((ip) => ({ type: 7, ip })),
  ];
  return names.length ? [{ name: "subjectAltName", altNames: names }] : [];
}

function toPem(cert: forge.pki.Certificate, key: forge.pki.rsa.PrivateKey): KeyPair {
  return { certPem: forge.pki.certificateToPem(cert), keyPem: forge.pki.privateKeyToPem(key) };
}
