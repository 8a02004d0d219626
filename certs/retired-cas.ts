import { X509Certificate } from "node:crypto";
import type { V1Secret } from "@kubernetes/client-node";
import { retiredCasAnnotation } from "../api/keys.ts";

/**
 * Pure decisions about replaced CAs: which ones the caBundle keeps, and until when.
 *
 * Every replica serves a certificate from the CA in the shared Secret, but follows a replaced CA only at its
 * next refresh, so for a while some replicas still serve from the previous one. The caBundle must trust every
 * CA a replica may still serve from, and every replica must publish the same caBundle (they all apply it).
 * So the facts are shared: the CA Secret records each replaced CA with the end of its grace (an annotation),
 * and every replica, one started after the switch included, computes the caBundle from the Secret alone.
 */

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

/** The PEM certificates of a bundle (a caBundle, a file), in order. */
export function splitCertificates(bundle: string): string[] {
  return bundle.match(pemCertificate) ?? [];
}

/** `pem` retired until `until`, or why it cannot be: not a PEM certificate, not a CA. */
function retiredCa(pem: unknown, until: Date): RetiredCa | string {
  const cert = typeof pem === "string" ? certificate(pem) : undefined;
  if (!cert) return "certificate is not a PEM certificate";
  if (!cert.ca) return `certificate ${cert.subject} is not a CA`;
  return { pem: cert.toString(), until };
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
    const ca = Number.isNaN(untilMs)
      ? `until ${JSON.stringify(until)} is not an RFC 3339 time`
      : untilMs > latestMs
        ? `until ${until} is further ahead than a grace period reaches`
        : retiredCa(pem, new Date(untilMs));
    if (typeof ca === "string") problems.push(`entry ${index}: ${ca}`);
    else retired.push(ca);
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
 * The record to keep, in the one form every replica writes and publishes: each CA once (the first deadline
 * met wins), its PEM as `X509Certificate` writes it, latest to retire first (the fingerprint breaks ties).
 *
 * - A CA stays recorded for one grace period after its deadline, out of the caBundle, so that a caBundle
 *   published before the deadline does not bring it back; then it is forgotten.
 * - The current CA, an expired CA (it trusts nothing) and CAs past the `maxRetiredCas` latest are dropped.
 */
function keptRetiredCas(
  current: string,
  candidates: readonly RetiredCa[],
  now: Date,
  graceMs: number,
): RetiredCa[] {
  const nowMs = now.getTime();
  const seen = new Set([certificate(current)?.fingerprint256]);
  const kept: { ca: RetiredCa; fingerprint: string }[] = [];
  for (const { pem, until } of candidates) {
    const cert = certificate(pem);
    if (!cert || seen.has(cert.fingerprint256)) continue;
    seen.add(cert.fingerprint256);
    if (until.getTime() + graceMs <= nowMs || cert.validToDate.getTime() <= nowMs) continue;
    kept.push({ ca: { pem: cert.toString(), until }, fingerprint: cert.fingerprint256 });
  }
  return kept
    .sort((a, b) => b.ca.until.getTime() - a.ca.until.getTime() || a.fingerprint.localeCompare(b.fingerprint))
    .slice(0, maxRetiredCas)
    .map(({ ca }) => ca);
}

/**
 * What a replica makes of the CA Secret it read: the record to keep (`record`, the annotation's new value,
 * to write if it differs from the one read) and the replaced CAs to publish with the current one (see
 * `trustBundle`).
 *
 * - A recorded CA keeps its recorded deadline: the first replica to retire a CA sets it, every other one (and
 *   every replica started later) reads it, so all drop it together.
 * - `known` is what this replica decided before: it may hold what a failed write did not record, or what the
 *   record lost with a deleted Secret. Each keeps its deadline.
 * - `learned` are the CAs this replica knows were trusted (the one it served from, the published ones): one
 *   that is neither recorded nor known is retired with a grace ending `graceMs` from now.
 *
 * Unreadable parts of the record and learned certificates that are not CAs are skipped and reported in
 * `problems`.
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
  const until = new Date(now.getTime() + graceMs);
  const learned = input.learned.map((pem) => retiredCa(pem, until));
  const retired = keptRetiredCas(
    current,
    [...recorded.retired, ...input.known, ...learned.filter((ca) => typeof ca !== "string")],
    now,
    graceMs,
  );
  return {
    retired,
    record: formatRetiredCas(retired),
    problems: [
      ...recorded.problems.map((problem) => `${retiredCasAnnotation}: ${problem}`),
      ...learned
        .filter((ca) => typeof ca === "string")
        .map((problem) => `a trusted CA to retire: ${problem}`),
    ],
  };
}

/**
 * The caBundle to publish: the current CA as the Secret holds it (alone, the bundle is its tls.crt), then each
 * CA of `retired` (as `decideTrust` gives them, in the one form every replica publishes) whose deadline has not
 * passed and which has not expired. So replicas that read the same Secret publish identical bytes.
 */
export function trustBundle(current: string, retired: readonly RetiredCa[], now: Date): string {
  const nowMs = now.getTime();
  const live = retired.filter(
    (ca) => ca.until.getTime() > nowMs && (certificate(ca.pem)?.validToDate.getTime() ?? 0) > nowMs,
  );
  if (live.length === 0) return current;
  const separator = current.endsWith("\n") ? "" : "\n";
  return `${current}${separator}${live.map((ca) => ca.pem).join("")}`;
}
