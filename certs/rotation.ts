import { createPrivateKey, X509Certificate } from "node:crypto";
import type { V1Secret } from "@kubernetes/client-node";
import type { KeyPair } from "./pki.ts";

/** Pure decisions of the certificate manager: when to renew, and whether a Secret holds a usable CA. */

export const hourMs = 3600_000;
export const defaultServingValidForMs = 24 * hourMs;
export const defaultCaValidForMs = 10 * 365 * 24 * hourMs;
/** Renew when this fraction of the certificate's life has passed, leaving a third to retry in. */
export const renewalFraction = 2 / 3;

/**
 * When to renew a certificate issued at `issuedAt` and valid until `notAfter`. Measured from the issue time,
 * not from notBefore, which the PKI backdates for clock skew.
 */
export function renewalTime(issuedAt: Date, notAfter: Date, fraction = renewalFraction): Date {
  const life = Math.max(0, notAfter.getTime() - issuedAt.getTime());
  return new Date(issuedAt.getTime() + life * fraction);
}

// setTimeout fires at once for delays above 2^31 - 1 ms (~24.8 days); longer waits are re-armed.
const maxTimerMs = 2 ** 31 - 1;

/** Milliseconds from `now` to `at`, between 0 (overdue: renew now) and the longest timer Node can arm. */
export function delayUntil(now: Date, at: Date): number {
  return Math.min(maxTimerMs, Math.max(0, at.getTime() - now.getTime()));
}

/** How long a serving certificate issued now may live: its configured life, cut at the CA's own expiry. */
export function servingLifetimeMs(now: Date, validForMs: number, caNotAfter: Date): number {
  return Math.min(validForMs, caNotAfter.getTime() - now.getTime());
}

/** The DNS names the API server may dial a Service by. It uses `<service>.<namespace>.svc`. */
export function serviceDnsNames(namespace: string, service: string): string[] {
  return [
    service,
    `${service}.${namespace}`,
    `${service}.${namespace}.svc`,
    `${service}.${namespace}.svc.cluster.local`,
  ];
}

export interface SecretRef {
  namespace: string;
  name: string;
}

/** The Secret holding the shared CA, as a `kubernetes.io/tls` Secret. */
export function caSecret(ref: SecretRef, ca: KeyPair, labels: Record<string, string> = {}): V1Secret {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { namespace: ref.namespace, name: ref.name, labels },
    type: "kubernetes.io/tls",
    data: {
      "tls.crt": Buffer.from(ca.certPem).toString("base64"),
      "tls.key": Buffer.from(ca.keyPem).toString("base64"),
    },
  };
}

/** The label Napwake gives the CA Secret it creates: only such a CA is replaced by Napwake when it ages. */
export const ownCaLabel = { "app.kubernetes.io/name": "napwake" } as const;

/** The common name Napwake gives each CA it makes: `napwake-webhook-ca-<ms since the epoch>`. */
export const ownCaCommonName = (atMs: number) => `napwake-webhook-ca-${atMs}`;
const ownCaSubject = /^CN=napwake-webhook-ca-\d+$/;

/**
 * Whether the CA in `secret` is Napwake's own and past two thirds of its life (or expired): then it is replaced
 * in the Secret, a third of its life ahead, so the replaced-CA hand-over (both CAs in the caBundle until every
 * replica follows) has years to run, where serving certificates cut at the CA's expiry would otherwise shorten
 * to nothing and the webhooks stop. A CA someone supplied is theirs to replace: Napwake's own is known by the
 * Secret's label and by the CA's name, since a CA supplied with `kubectl apply` keeps the label.
 */
export function caDueForReplacement(secret: V1Secret, now: Date): boolean {
  const labelled = Object.entries(ownCaLabel).every(([k, v]) => secret.metadata?.labels?.[k] === v);
  const certB64 = secret.data?.["tls.crt"];
  if (!labelled || !certB64) return false;
  try {
    const cert = new X509Certificate(Buffer.from(certB64, "base64").toString("utf8"));
    if (!ownCaSubject.test(cert.subject.trim())) return false;
    return now.getTime() >= renewalTime(cert.validFromDate, cert.validToDate).getTime();
  } catch {
    return false;
  }
}

/** The CA in `secret`, or what is wrong with it and how to fix it. */
export function caFromSecret(
  secret: V1Secret,
  now: Date,
): { ca: KeyPair; notAfter: Date } | { problem: string } {
  const where = `Secret ${secret.metadata?.namespace}/${secret.metadata?.name}`;
  const fix = "Fix: delete the Secret; a replica creates a new CA and the caBundle reconcile publishes it.";
  const certB64 = secret.data?.["tls.crt"];
  const keyB64 = secret.data?.["tls.key"];
  if (!certB64 || !keyB64) return { problem: `${where} has no tls.crt or tls.key. ${fix}` };
  const ca = {
    certPem: Buffer.from(certB64, "base64").toString("utf8"),
    keyPem: Buffer.from(keyB64, "base64").toString("utf8"),
  };
  try {
    const cert = new X509Certificate(ca.certPem);
    const key = createPrivateKey(ca.keyPem);
    // node-forge, which issues the serving certificates, signs with RSA keys only.
    if (key.asymmetricKeyType !== "rsa") {
      return {
        problem: `${where} holds a ${key.asymmetricKeyType} key; Napwake issues from an RSA CA only. ${fix}`,
      };
    }
    if (!cert.ca) return { problem: `${where} holds a certificate that is not a CA. ${fix}` };
    if (!cert.checkPrivateKey(key)) {
      return { problem: `${where}: tls.key does not match tls.crt. ${fix}` };
    }
    const notAfter = cert.validToDate;
    if (notAfter.getTime() <= now.getTime()) {
      return { problem: `${where} holds a CA that expired at ${notAfter.toISOString()}. ${fix}` };
    }
    // Served from now, its leaves would be refused as not yet valid (the API server's clock is this one's, near
    // enough): a CA made on a clock ahead is taken up when its time comes.
    const notBefore = cert.validFromDate;
    if (notBefore.getTime() > now.getTime()) {
      return {
        problem:
          `${where} holds a CA valid only from ${notBefore.toISOString()} (made on a clock ahead of this one); ` +
          `it is taken up then. ${fix}`,
      };
    }
    return { ca, notAfter };
  } catch (error) {
    return {
      problem: `${where} does not hold a PEM certificate and key: ${(error as Error).message}. ${fix}`,
    };
  }
}
