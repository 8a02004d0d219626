import { X509Certificate } from "node:crypto";

/**
 * The pure decision of when a replica may serve from the CA in the shared Secret.
 *
 * The API server trusts a replica only if the caBundle published in our webhook configurations holds the CA
 * its serving certificate comes from. So on learning that the shared CA was replaced, a replica keeps serving
 * from the CA it has until the caBundle that holds the new one is published (by itself or another replica:
 * every replica publishes the same bundle, computed from the shared Secret), and only then switches.
 */

/** Why a replica serves from the shared CA now, or keeps the one it serves from. */
export type CaSwitch =
  | {
      switchNow: true;
      why: "no serving certificate yet" | "the caBundle trusts the new CA" | "the CA served from has expired";
    }
  | { switchNow: false; why: "already serving from it" | "the caBundle does not trust the new CA yet" };

function fingerprint(pem: string): string | undefined {
  try {
    return new X509Certificate(pem).fingerprint256;
  } catch {
    return undefined;
  }
}

/**
 * Whether to serve from `shared` (the CA in the shared Secret) now:
 *
 * - with no serving certificate yet (`serving` undefined) there is nothing to protect: issue at once;
 * - from the CA served from already, there is nothing to switch;
 * - once `published` (the CAs our webhook configurations trust, as read or as just applied) holds `shared`;
 * - once the CA served from has expired (`servingNotAfter` passed): its serving certificates died with it,
 *   so the API server trusts none of them and switching is the only way back;
 * - otherwise not yet: keep serving from `serving`, which the published caBundle trusts.
 *
 * CAs are compared by fingerprint, so a PEM re-encoded in a bundle still matches; an unreadable entry of
 * `published` matches nothing.
 */
export function decideCaSwitch(input: {
  serving: string | undefined;
  shared: string;
  published: readonly string[];
  servingNotAfter: Date | undefined;
  now: Date;
}): CaSwitch {
  const { serving, shared } = input;
  if (serving === undefined) return { switchNow: true, why: "no serving certificate yet" };
  const next = fingerprint(shared);
  if (serving === shared || (next !== undefined && fingerprint(serving) === next)) {
    return { switchNow: false, why: "already serving from it" };
  }
  if (next !== undefined && input.published.some((pem) => fingerprint(pem) === next)) {
    return { switchNow: true, why: "the caBundle trusts the new CA" };
  }
  if (input.servingNotAfter !== undefined && input.servingNotAfter.getTime() <= input.now.getTime()) {
    return { switchNow: true, why: "the CA served from has expired" };
  }
  return { switchNow: false, why: "the caBundle does not trust the new CA yet" };
}
