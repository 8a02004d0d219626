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
  cert.setIssuer(caCert.subject.attributes);
  cert.setExtensions([
    { name: "basicConstraints", cA: false },
    { name: "keyUsage", digitalSignature: true, keyEncipherment: true, critical: true },
    extendedKeyUsage(req.usage),
    ...subjectAltNames(req),
    { name: "authorityKeyIdentifier", keyIdentifier: keyIdentifierOf(caCert) },
  ]);
  return {
    certPem: signedWithCaSubject(cert, ca.certPem, caKey),
    keyPem: forge.pki.privateKeyToPem(keys.privateKey),
  };
}

const { Class, Type } = forge.asn1;

/**
 * `cert` signed by the CA, its issuer the CA's subject byte for byte as the CA's own DER holds it, as verifiers
 * match them: rebuilt from forge's attributes, a UTF8String value is encoded again ("Société Générale") and a
 * multi-valued RDN ("O=Corp+OU=Platform") is split in two, and the leaves would chain to nothing.
 */
function signedWithCaSubject(
  cert: forge.pki.Certificate,
  caCertPem: string,
  caKey: forge.pki.rsa.PrivateKey,
): string {
  const sha256WithRsa = forge.pki.oids.sha256WithRSAEncryption as string;
  cert.siginfo.algorithmOid = sha256WithRsa;
  cert.signatureOid = sha256WithRsa;
  // forge's own builder of the signed part (not in its type declarations).
  const tbs = (
    forge.pki as unknown as { getTBSCertificate(c: forge.pki.Certificate): forge.asn1.Asn1 }
  ).getTBSCertificate(cert);
  // A v3 TBSCertificate: [0] version, serialNumber, signature, issuer, validity, subject, ...
  (tbs.value as forge.asn1.Asn1[])[3] = subjectOf(caCertPem);
  const md = forge.md.sha256.create();
  md.update(forge.asn1.toDer(tbs).getBytes());
  const algorithm = forge.asn1.create(Class.UNIVERSAL, Type.SEQUENCE, true, [
    forge.asn1.create(Class.UNIVERSAL, Type.OID, false, forge.asn1.oidToDer(sha256WithRsa).getBytes()),
    forge.asn1.create(Class.UNIVERSAL, Type.NULL, false, ""),
  ]);
  const signature = forge.asn1.create(Class.UNIVERSAL, Type.BITSTRING, false, `\u0000${caKey.sign(md)}`);
  const certificate = forge.asn1.create(Class.UNIVERSAL, Type.SEQUENCE, true, [tbs, algorithm, signature]);
  return forge.pem.encode({ type: "CERTIFICATE", body: forge.asn1.toDer(certificate).getBytes() });
}

/** The subject Name of a PEM certificate, as its DER holds it. */
function subjectOf(certPem: string): forge.asn1.Asn1 {
  const [block] = forge.pem.decode(certPem);
  const certificate = forge.asn1.fromDer(block?.body ?? "");
  const tbs = (certificate.value as forge.asn1.Asn1[])[0]?.value as forge.asn1.Asn1[];
  // The version, [0], is absent from a v1 certificate.
  const offset = tbs[0]?.tagClass === Class.CONTEXT_SPECIFIC ? 1 : 0;
  const subject = tbs[4 + offset];
  if (!subject) throw new Error("the CA certificate has no subject");
  return subject;
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
