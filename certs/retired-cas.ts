import { X509Certificate } from "node:crypto";
import type { V1Secret } from "@kubernetes/client-node";

/**
 * Pure decisions about replaced CAs: which ones the caBundle keeps, and until when.
 *
 * Every replica serves a certificate from the CA in the shared Secret, but follows a replaced CA only at its
 * next refresh, so for a while some replicas still serve from the previous one. The caBundle must trust every
 * CA a replica may still serve from, and every replica must publish the same caBundle (they all apply it).
 * So the facts are shared: the CA Secret records each replaced CA with the end of its grace (an annotation),
 * and every replica, one started after the switch included, computes the caBundle from the Secret alone.
 */

/**
 * On the CA Secret: the CAs replaced within the last grace periods, as a JSON array of
 * `{"until": "<RFC 3339>", "certificate": "<PEM>"}`. Kept here rather than in api/keys.ts: it is internal to
 * certs/, on a Secret only Napwake writes.
 */
export const retiredCasAnnotation = "napwake.dev/retired-cas";

/** The record keeps at most this many replaced CAs, the latest to retire. */
export const maxRetiredCas = 8;

/** A CA that signed serving certificates until it was replaced. */
export interface RetiredCa {
  /** The CA certificate, PEM. */
  pem: string;
  /** The end of its grace: the caBundle trusts it until then. */
  until: Date;
}

const pemCertificate = /-----BEGIN CERTIFICATE-----[\s\S]*?-----END CERTIFICATE-----/g;
const rfc3339 = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/;

function certificate(pem: string): X509Certificate | undefined {
  try {
    return new X509Certificate(pem);
  } catch {
    return undefined;
  }
}

/** The identity of a certificate, whatever the line endings of its PEM. */
function fingerprint(pem: string): string | undefined {
  return certificate(pem)?.fingerprint256;
}

/** The PEM certificates of a bundle (a caBundle, a file), in order. */
export function splitCertificates(bundle: string): string[] {
  return bundle.match(pemCertificate) ?? [];
}

/**
 * The record in the annotation's value, and what is wrong with each part it skips: unreadable JSON, an
 * unparsable deadline, a deadline further ahead than a grace period (with clock skew) can reach, a certificate
 * that is not a CA. What is skipped is dropped from the record at the next write.
 */
export function parseRetiredCas(
  value: string | undefined,
  now: Date,
  graceMs: number,
): { retired: RetiredCa[]; problems: string[] } {
  if (value === undefined || value.trim() === "") return { retired: [], problems: [] };
  let entries: unknown;
  try {
    entries = JSON.parse(value);
  } catch (error) {
    return { retired: [], problems: [`not JSON: ${(error as Error).message}`] };
  }
  if (!Array.isArray(entries)) return { retired: [], problems: ["not a JSON array"] };
  const retired: RetiredCa[] = [];
  const problems: string[] = [];
  const latestMs = now.getTime() + 2 * graceMs;
  for (const [index, entry] of entries.entries()) {
    const { until, certificate: pem } = (typeof entry === "object" && entry !== null ? entry : {}) as Record<
      string,
      unknown
    >;
    const untilMs = typeof until === "string" && rfc3339.test(until) ? Date.parse(until) : Number.NaN;
    const cert = typeof pem === "string" ? certificate(pem) : undefined;
    const problem = Number.isNaN(untilMs)
      ? `until ${JSON.stringify(until)} is not an RFC 3339 time`
      : untilMs > latestMs
        ? `until ${until} is further ahead than a grace period reaches`
        : !cert
          ? "certificate is not a PEM certificate"
          : !cert.ca
            ? "certificate is not a CA"
            : undefined;
    if (problem || !cert) problems.push(`entry ${index}: ${problem}`);
    else retired.push({ pem: cert.toString(), until: new Date(untilMs) });
  }
  return { retired, problems };
}

/** The annotation's value for `retired`; undefined (no annotation) when there is none. */
export function formatRetiredCas(retired: readonly RetiredCa[]): string | undefined {
  if (retired.length === 0) return undefined;
  return JSON.stringify(retired.map((ca) => ({ until: ca.until.toISOString(), certificate: ca.pem })));
}

/** `secret` with the record set to `value` (the annotation removed when undefined), for a write. */
export function withRetiredCas(secret: V1Secret, value: string | undefined): V1Secret {
  const { [retiredCasAnnotation]: _, ...others } = secret.metadata?.annotations ?? {};
  const annotations = value === undefined ? others : { ...others, [retiredCasAnnotation]: value };
  return { ...secret, metadata: { ...secret.metadata, annotations } };
}

/** The record as a log shows it: whose CA, until when. */
export function describeRetiredCas(retired: readonly RetiredCa[]): { subject: string; until: string }[] {
  return retired.map((ca) => ({
    subject: certificate(ca.pem)?.subject ?? "?",
    until: ca.until.toISOString(),
  }));
}

/**
 * The CAs in `pems` that can be retired now, with a grace ending `graceMs` from now, and what is wrong with
 * the others (not a certificate, not a CA). For CAs a replica learns were trusted: the one it served from, the
 * ones published in the webhook configurations.
 */
function retiringNow(
  pems: readonly string[],
  now: Date,
  graceMs: number,
): { retiring: RetiredCa[]; problems: string[] } {
  const retiring: RetiredCa[] = [];
  const problems: string[] = [];
  for (const pem of pems) {
    const cert = certificate(pem);
    if (!cert) problems.push("not a PEM certificate");
    else if (!cert.ca) problems.push(`${cert.subject} is not a CA`);
    else retiring.push({ pem: cert.toString(), until: new Date(now.getTime() + graceMs) });
  }
  return { retiring, problems };
}

/** Latest to retire first; the fingerprint breaks ties, so every replica orders alike. */
function byUntilThenFingerprint(a: RetiredCa, b: RetiredCa): number {
  return (
    b.until.getTime() - a.until.getTime() ||
    (fingerprint(a.pem) ?? "").localeCompare(fingerprint(b.pem) ?? "")
  );
}

/**
 * The record to keep in the CA Secret.
 *
 * - A recorded CA keeps its recorded deadline: the first replica to retire a CA sets it, every other one (and
 *   every replica started later) reads it, so all drop it together.
 * - A CA in `retiring` that the record lacks is added with its own deadline.
 * - A CA stays recorded for one grace period after its deadline, out of the caBundle, so that a caBundle
 *   published before the deadline does not bring it back; then it is forgotten.
 * - The current CA, an expired CA (it trusts nothing) and CAs past the `maxRetiredCas` latest are dropped.
 */
function decideRetiredCas(input: {
  /** The CA in the Secret. */
  current: string;
  recorded: readonly RetiredCa[];
  retiring: readonly RetiredCa[];
  now: Date;
  graceMs: number;
}): RetiredCa[] {
  const nowMs = input.now.getTime();
  const seen = new Set([fingerprint(input.current)]);
  const kept: RetiredCa[] = [];
  for (const ca of [...input.recorded, ...input.retiring]) {
    const cert = certificate(ca.pem);
    if (!cert || seen.has(cert.fingerprint256)) continue;
    seen.add(cert.fingerprint256);
    if (ca.until.getTime() + input.graceMs <= nowMs) continue;
    if (cert.validToDate.getTime() <= nowMs) continue;
    kept.push(ca);
  }
  return kept.sort(byUntilThenFingerprint).slice(0, maxRetiredCas);
}

/**
 * What a replica makes of the CA Secret it read: the record to keep (`record`, the annotation's new value,
 * to write if it differs from the one read) and the replaced CAs to publish with the current one (see
 * `trustBundle`). `known` is what this replica decided before (it may hold what a failed write did not
 * record); `learned` are the CAs it knows were trusted: the one it served from, the published ones.
 * Unreadable parts of the record and learned entries that are not CAs are skipped and reported in `problems`.
 */
export function decideTrust(input: {
  current: string;
  record: string | undefined;
  known: readonly RetiredCa[];
  learned: readonly string[];
  now: Date;
  graceMs: number;
}): { retired: RetiredCa[]; record: string | undefined; problems: string[] } {
  const { current, now, graceMs } = input;
  const recorded = parseRetiredCas(input.record, now, graceMs);
  const learned = retiringNow(input.learned, now, graceMs);
  const retired = decideRetiredCas({
    current,
    recorded: recorded.retired,
    retiring: [...input.known, ...learned.retiring],
    now,
    graceMs,
  });
  return {
    retired,
    record: formatRetiredCas(retired),
    problems: [
      ...recorded.problems.map((problem) => `${retiredCasAnnotation}: ${problem}`),
      ...learned.problems.map((problem) => `a trusted CA to retire: ${problem}`),
    ],
  };
}

/**
 * The caBundle to publish: the current CA, then each retired CA whose deadline has not passed and which has
 * not expired, latest to retire first. The current CA as the Secret holds it (alone, the bundle is its
 * tls.crt), the retired ones each written the same way, so replicas publish identical bytes.
 */
export function trustBundle(current: string, retired: readonly RetiredCa[], now: Date): string {
  const nowMs = now.getTime();
  const seen = new Set([fingerprint(current)]);
  const live = retired
    .filter((ca) => {
      const cert = certificate(ca.pem);
      if (!cert || seen.has(cert.fingerprint256)) return false;
      seen.add(cert.fingerprint256);
      return ca.until.getTime() > nowMs && cert.validToDate.getTime() > nowMs;
    })
    .sort(byUntilThenFingerprint);
  if (live.length === 0) return current;
  const separator = current.endsWith("\n") ? "" : "\n";
  return `${current}${separator}${live.map((ca) => certificate(ca.pem)?.toString() ?? ca.pem).join("")}`;
}
