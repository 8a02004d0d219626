import type { CoreV1Api, V1Secret } from "@kubernetes/client-node";
import type { Logger as PinoLogger } from "pino";
import { fieldManager, retiredCasAnnotation } from "../api/keys.ts";
import { httpCode } from "../kube/errors.ts";
import { decideCaSwitch } from "./ca-switch.ts";
import {
  createCertificateAuthority,
  defaultPkiDeps,
  issueCertificate,
  type KeyPair,
  type PkiDeps,
} from "./pki.ts";
import {
  decideTrust,
  describeRetiredCas,
  type RetiredCa,
  splitCertificates,
  trustBundle,
  withRetiredCas,
} from "./retired-cas.ts";
import {
  caDueForReplacement,
  caFromSecret,
  caSecret,
  defaultCaValidForMs,
  defaultServingValidForMs,
  delayUntil,
  ownCaCommonName,
  ownCaLabel,
  renewalTime,
  type SecretRef,
  servingLifetimeMs,
} from "./rotation.ts";

type Logger = Pick<PinoLogger, "info" | "warn" | "error">;

/** The Secret calls the manager makes. */
export interface SecretStore {
  read(ref: SecretRef): Promise<V1Secret | undefined>;
  /** Creates the Secret; `"exists"` when someone else created it first (HTTP 409). */
  create(secret: V1Secret): Promise<"created" | "exists">;
  /**
   * Replaces the Secret, only if it is still at the resourceVersion it carries: `"conflict"` when someone
   * else wrote it meanwhile (HTTP 409) or deleted it (HTTP 404), to decide again from a fresh read.
   */
  update(secret: V1Secret): Promise<"updated" | "conflict">;
}

export function kubeSecretStore(core: CoreV1Api): SecretStore {
  return {
    async read(ref) {
      try {
        return await core.readNamespacedSecret({ namespace: ref.namespace, name: ref.name });
      } catch (error) {
        if (httpCode(error) === 404) return undefined;
        throw error;
      }
    },
    async create(secret) {
      try {
        await core.createNamespacedSecret({ namespace: secret.metadata?.namespace ?? "", body: secret });
        return "created";
      } catch (error) {
        if (httpCode(error) === 409) return "exists";
        throw error;
      }
    },
    async update(secret) {
      try {
        await core.replaceNamespacedSecret({
          namespace: secret.metadata?.namespace ?? "",
          name: secret.metadata?.name ?? "",
          body: secret,
          fieldManager,
        });
        return "updated";
      } catch (error) {
        const code = httpCode(error);
        if (code === 409 || code === 404) return "conflict";
        throw error;
      }
    },
  };
}

export interface Timers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

export interface CertificateManagerOptions {
  secrets: SecretStore;
  /** Where the CA shared by every replica lives. */
  caSecret: SecretRef;
  /** SANs of the serving certificate: see `serviceDnsNames`. */
  dnsNames: readonly string[];
  ipAddresses?: readonly string[];
  servingValidForMs?: number;
  caValidForMs?: number;
  /** After a failed renewal, try again this much later. */
  retryDelayMs?: number;
  /**
   * How long a replaced CA stays in the caBundle, from when a replica first learned it was replaced (recorded
   * in the CA Secret, so every replica keeps it until the same deadline). Default 15 minutes (three resyncs).
   */
  previousCaGraceMs?: number;
  now: () => Date;
  timers?: Timers;
  logger: Logger;
  pki?: PkiDeps;
}

export const defaultPreviousCaGraceMs = 15 * 60_000;

type Authority = { pair: KeyPair; notAfter: Date };

export interface CertificateManager {
  /** Gets (or creates) the shared CA and issues the first serving certificate. Throws if it cannot. */
  start(): Promise<void>;
  stop(): void;
  /** The current serving certificate and key. */
  current(): KeyPair | undefined;
  /**
   * The PEM of the CA that signed the current serving certificate. After the shared CA was replaced, the
   * previous one until the caBundle that trusts the new one is published (see `refresh`).
   */
  caPem(): string | undefined;
  /**
   * The caBundle to publish: the CA in the shared Secret, and each replaced CA until the deadline recorded
   * with it in the Secret, so replicas still serving from it stay trusted until they have followed (see
   * `refresh`). Computed from the Secret alone, so every replica, one started after the switch included,
   * publishes the same bundle.
   */
  caBundlePem(): string | undefined;
  /** When the current serving certificate will be renewed. */
  renewsAt(): Date | undefined;
  /**
   * Re-reads the shared CA. When it was replaced (by another replica, or by this one creating a new CA after
   * the Secret was deleted), the replica switches to it only where `decideCaSwitch` allows: if `trusted` (the
   * CAs the caBundle of every one of our webhooks holds) holds it already (another replica published it), at
   * once; otherwise it keeps serving from its CA, which the published caBundle trusts, until `bundlePublished`
   * says the caBundle holding the new one (which `caBundlePem` gives from now on) is published; or at once if
   * its CA has expired. A switch issues a serving certificate from the new CA and tells the subscribers. An
   * unreadable Secret changes nothing but that: the CA last read is switched to where `trusted` holds it.
   *
   * Every CA this replica knows was trusted and is no longer the current one is recorded in the Secret as
   * replaced, with a deadline, unless it is recorded already: the CA it served from, and the CAs in
   * `published` (the PEM certificates the caBundle of any of our webhooks trusts now, which a replica started
   * after the switch knows of only from there).
   *
   * Resolves true when it read the Secret, so `caBundlePem` is current; false when it did not (the Secret
   * could not be read, or the manager is not started): the caBundle it has then may lack a CA another replica
   * switched to, and must not be published.
   */
  refresh(published?: readonly string[], trusted?: readonly string[]): Promise<boolean>;
  /**
   * Says that the caBundle `pem` (as `caBundlePem` gave it) is now what our webhook configurations trust: a
   * replica waiting for the shared CA to be published switches to it if `pem` holds it.
   */
  bundlePublished(pem: string): void;
  subscribe(listener: () => void): () => void;
}

/**
 * Keeps a short-lived serving certificate, issued locally from a CA shared through a Secret. Replicas race
 * to create the CA safely: the create fails on conflict and the loser re-reads the winner's. The certificate
 * is renewed at two thirds of its life; each renewal re-reads the CA but falls back to the one it has if the
 * API server is unreachable, so renewal never depends on it. A replaced CA is served from only once the
 * caBundle that trusts it is published (see `refresh`): a renewal that finds one renews from the CA it has,
 * and the caBundle publish its subscribers run switches.
 * Replaced CAs are recorded in the Secret (see certs/retired-cas.ts), written only if the Secret is unchanged
 * since it was read, so replicas that retire CAs at once all end up in the record.
 */
export function createCertificateManager(options: CertificateManagerOptions): CertificateManager {
  const { logger, now } = options;
  const timers = options.timers ?? {
    setTimeout: (callback, ms) => setTimeout(callback, ms),
    clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
  };
  const pki = options.pki ?? defaultPkiDeps;
  const listeners = new Set<() => void>();
  const graceMs = options.previousCaGraceMs ?? defaultPreviousCaGraceMs;
  const secretName = `${options.caSecret.namespace}/${options.caSecret.name}`;
  /** The CA this replica serves from. */
  let ca: Authority | undefined;
  /**
   * The CA in the shared Secret and its record of replaced CAs, as last read (and written). Its CA differs
   * from `ca` from when a replaced CA is read until the caBundle that trusts it is published.
   */
  let shared: { authority: Authority; retired: RetiredCa[] } | undefined;
  let serving: KeyPair | undefined;
  let renewAt: Date | undefined;
  let timer: unknown;
  let stopped = false;

  function newCa(): KeyPair {
    return createCertificateAuthority(
      {
        // An X.509 PrintableString: letters, digits and a few marks; Go refuses a CA named with '@' or '_'.
        commonName: ownCaCommonName(now().getTime()),
        notBefore: now(),
        validForMs: options.caValidForMs ?? defaultCaValidForMs,
      },
      pki,
    );
  }

  /**
   * Writes a new CA over an aging one of Napwake's (see `caDueForReplacement`), only if the Secret is unchanged
   * since `secret` was read (a replica that lost the race reads the winner's). The old CA is then a replaced one,
   * as after a Secret deleted by hand. Returns the Secret as it now stands; a write that fails is logged, and the
   * old CA serves on until the next attempt.
   */
  async function replaceAgingCa(secret: V1Secret): Promise<V1Secret | undefined> {
    const fresh = caSecret(options.caSecret, newCa());
    try {
      const outcome = await options.secrets.update({ ...secret, data: fresh.data });
      // A conflict: another replica replaced it first, or the Secret changed; the read below shows which.
      if (outcome === "updated") {
        logger.info({ secret: secretName }, "certificates: the CA was past two thirds of its life; replaced");
      }
    } catch (error) {
      logger.warn(
        { err: error, secret: secretName },
        "certificates: could not replace the aging CA; retrying later",
      );
      return secret;
    }
    return options.secrets.read(options.caSecret);
  }

  async function readOrCreateCa(): Promise<V1Secret> {
    const ref = options.caSecret;
    let secret = await options.secrets.read(ref);
    if (secret && caDueForReplacement(secret, now())) secret = await replaceAgingCa(secret);
    if (!secret) {
      const outcome = await options.secrets.create(caSecret(ref, newCa(), ownCaLabel));
      logger.info(
        { secret: `${ref.namespace}/${ref.name}`, outcome },
        "certificates: CA Secret created or found",
      );
      secret = await options.secrets.read(ref);
      if (!secret) throw new Error(`Secret ${secretName} vanished right after it was created`);
    }
    return secret;
  }

  /**
   * Reads (or creates) the shared CA and brings the Secret's record of replaced CAs up to date: adds this
   * replica's CA if the Secret holds another one, and the `published` ones; drops those long past their
   * deadline. Written only if the Secret is unchanged since the read; on a conflict, read and decide again.
   * A record that cannot be written is kept in memory, so this replica still publishes it. Returns the CA.
   */
  async function loadCa(published: readonly string[] = []): Promise<Authority> {
    for (let attempt = 1; ; attempt++) {
      const secret = await readOrCreateCa();
      const at = now();
      const parsed = caFromSecret(secret, at);
      if ("problem" in parsed) throw new Error(parsed.problem);
      const authority = { pair: parsed.ca, notAfter: parsed.notAfter };
      const value = secret.metadata?.annotations?.[retiredCasAnnotation];
      const decided = decideTrust({
        current: authority.pair.certPem,
        record: value,
        known: shared?.retired ?? [],
        learned: [
          ...(ca && ca.pair.certPem !== authority.pair.certPem ? [ca.pair.certPem] : []),
          ...published,
        ],
        now: at,
        graceMs,
      });
      if (attempt === 1) {
        for (const problem of decided.problems) {
          logger.warn(
            { secret: secretName, problem },
            "certificates: ignoring a replaced CA that cannot be read",
          );
        }
      }
      shared = { authority, retired: decided.retired };
      if (decided.record === value) return authority;
      const outcome = await writeRecord(secret, decided);
      if (outcome !== "conflict") return authority;
      if (attempt >= 3) {
        logger.warn(
          { secret: secretName },
          "certificates: the CA Secret kept changing; recording the replaced CAs at the next refresh",
        );
        return authority;
      }
    }
  }

  /** Writes the record on the CA Secret as read; a failure is logged (the record is published from memory). */
  async function writeRecord(
    secret: V1Secret,
    decided: { retired: RetiredCa[]; record: string | undefined },
  ): Promise<"updated" | "conflict" | "failed"> {
    try {
      const outcome = await options.secrets.update(withRetiredCas(secret, decided.record));
      if (outcome === "updated") {
        logger.info(
          { secret: secretName, retired: describeRetiredCas(decided.retired) },
          "certificates: replaced CAs recorded",
        );
      }
      return outcome;
    } catch (error) {
      logger.warn(
        { err: error, secret: secretName },
        "certificates: could not record the replaced CAs; publishing them from memory",
      );
      return "failed";
    }
  }

  function issue(authority: Authority): void {
    const issuedAt = now();
    const validForMs = servingLifetimeMs(
      issuedAt,
      options.servingValidForMs ?? defaultServingValidForMs,
      authority.notAfter,
    );
    if (validForMs <= 0) throw new Error("the CA has expired; delete its Secret so a new one is created");
    serving = issueCertificate(
      authority.pair,
      {
        commonName: options.dnsNames[0] ?? "napwake-webhook",
        dnsNames: [...options.dnsNames],
        ipAddresses: [...(options.ipAddresses ?? [])],
        usage: "server",
        notBefore: issuedAt,
        validForMs,
      },
      pki,
    );
    ca = authority;
    renewAt = renewalTime(issuedAt, new Date(issuedAt.getTime() + validForMs));
    logger.info({ renewAt: renewAt.toISOString(), validForMs }, "certificates: serving certificate issued");
    for (const listener of listeners) {
      try {
        listener();
      } catch (error) {
        logger.error({ err: error }, "certificates: a listener failed");
      }
    }
  }

  /** The CA to serve from, given the CAs `published` trusts: the shared one where `decideCaSwitch` allows. */
  function servingFrom(published: readonly string[]): Authority | undefined {
    if (!shared) return ca;
    const decision = decideCaSwitch({
      serving: ca?.pair.certPem,
      shared: shared.authority.pair.certPem,
      published,
      servingNotAfter: ca?.notAfter,
      now: now(),
    });
    if (decision.why === "the caBundle does not trust the new CA yet") {
      logger.info(
        { secret: secretName },
        "certificates: the shared CA was replaced; serving from the current one until the caBundle that trusts the new one is published",
      );
    } else if (decision.switchNow && ca) {
      logger.info({ secret: secretName, why: decision.why }, "certificates: switching to the shared CA");
    }
    return decision.switchNow ? shared.authority : ca;
  }

  /** Switches to the shared CA if `published` allows it (see `servingFrom`); a failure is left to renewal. */
  function follow(published: readonly string[]): void {
    if (stopped || !ca) return;
    const authority = servingFrom(published);
    if (!authority || authority === ca) return;
    try {
      issue(authority);
      if (renewAt) schedule(renewAt);
    } catch (error) {
      logger.error({ err: error }, "certificates: could not issue from the replaced CA; renewal will retry");
    }
  }

  function schedule(at: Date): void {
    if (stopped) return;
    timers.clearTimeout(timer);
    timer = timers.setTimeout(
      () => {
        // A long wait is armed in pieces (timers cap at ~24.8 days): re-check before renewing.
        if (now().getTime() < at.getTime()) schedule(at);
        else void renew();
      },
      delayUntil(now(), at),
    );
  }

  async function renew(): Promise<void> {
    try {
      await loadCa();
    } catch (error) {
      logger.warn(
        { err: error },
        "certificates: could not re-read the CA Secret, renewing with the CA in memory",
      );
    }
    if (stopped) return;
    try {
      // The published CAs are not known here: a replaced CA waits for the caBundle publish the renewal's
      // subscribers run, unless the CA served from has expired.
      const authority = servingFrom([]);
      if (!authority) throw new Error("no CA");
      issue(authority);
      if (renewAt) schedule(renewAt);
    } catch (error) {
      const retryAt = new Date(now().getTime() + (options.retryDelayMs ?? 30_000));
      logger.error({ err: error, retryAt: retryAt.toISOString() }, "certificates: renewal failed");
      schedule(retryAt);
    }
  }

  return {
    async start() {
      stopped = false;
      await loadCa();
      // The first time there is nothing served to protect: issue from the shared CA at once.
      const authority = servingFrom([]);
      if (!authority) throw new Error("no CA");
      issue(authority);
      if (renewAt) schedule(renewAt);
    },
    stop() {
      stopped = true;
      timers.clearTimeout(timer);
    },
    current: () => serving,
    caPem: () => ca?.pair.certPem,
    caBundlePem: () =>
      shared ? trustBundle(shared.authority.pair.certPem, shared.retired, now()) : undefined,
    renewsAt: () => renewAt,
    async refresh(published = [], trusted = []) {
      if (stopped || !ca) return false;
      let read = true;
      try {
        await loadCa(published);
      } catch (error) {
        logger.warn({ err: error }, "certificates: could not re-read the CA Secret; publishing no caBundle");
        read = false;
      }
      // A CA every webhook trusts is safe to serve from even when the Secret was not read just now.
      follow(trusted);
      // The renewal timer runs on the monotonic clock, which stands still while a host is suspended; validity
      // is wall-clock time, so a resync past the renewal time renews.
      if (renewAt && now().getTime() >= renewAt.getTime()) await renew();
      return read;
    },
    bundlePublished(pem) {
      follow(splitCertificates(pem));
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
