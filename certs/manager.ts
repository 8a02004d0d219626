import type { CoreV1Api, V1Secret } from "@kubernetes/client-node";
import type { Logger as PinoLogger } from "pino";
import { httpCode } from "../kube/errors.ts";
import {
  createCertificateAuthority,
  defaultPkiDeps,
  issueCertificate,
  type KeyPair,
  type PkiDeps,
} from "./pki.ts";
import {
  caFromSecret,
  caSecret,
  defaultCaValidForMs,
  defaultServingValidForMs,
  delayUntil,
  renewalTime,
  type SecretRef,
  servingLifetimeMs,
} from "./rotation.ts";

type Logger = Pick<PinoLogger, "info" | "warn" | "error">;

/** The two Secret calls the manager makes. */
export interface SecretStore {
  read(ref: SecretRef): Promise<V1Secret | undefined>;
  /** Creates the Secret; `"exists"` when someone else created it first (HTTP 409). */
  create(secret: V1Secret): Promise<"created" | "exists">;
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
  /** How long the previous CA stays in the caBundle after a switch. Default 15 minutes (three resyncs). */
  previousCaGraceMs?: number;
  now: () => Date;
  timers?: Timers;
  logger: Logger;
  pki?: PkiDeps;
}

export const defaultPreviousCaGraceMs = 15 * 60_000;

export interface CertificateManager {
  /** Gets (or creates) the shared CA and issues the first serving certificate. Throws if it cannot. */
  start(): Promise<void>;
  stop(): void;
  /** The current serving certificate and key. */
  current(): KeyPair | undefined;
  /** The PEM of the CA that signed the current serving certificate. */
  caPem(): string | undefined;
  /**
   * The caBundle to publish: the current CA, and for `previousCaGraceMs` after a switch to a replaced CA the
   * previous one too, so replicas still serving from it stay trusted until they have followed (see `refresh`).
   */
  caBundlePem(): string | undefined;
  /** When the current serving certificate will be renewed. */
  renewsAt(): Date | undefined;
  /**
   * Re-reads the shared CA and, when another replica replaced it, issues a serving certificate from the new
   * one at once (subscribers are told), so replicas converge on a replaced CA within one refresh rather than
   * at their next renewal. An unreadable Secret changes nothing.
   */
  refresh(): Promise<void>;
  subscribe(listener: () => void): () => void;
}

/**
 * Keeps a short-lived serving certificate, issued locally from a CA shared through a Secret. Replicas race
 * to create the CA safely: the create fails on conflict and the loser re-reads the winner's. The certificate
 * is renewed at two thirds of its life; each renewal re-reads the CA (so replicas converge on a replaced CA)
 * but falls back to the one it has if the API server is unreachable, so renewal never depends on it.
 */
export function createCertificateManager(options: CertificateManagerOptions): CertificateManager {
  const { logger, now } = options;
  const timers = options.timers ?? {
    setTimeout: (callback, ms) => setTimeout(callback, ms),
    clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
  };
  const pki = options.pki ?? defaultPkiDeps;
  const listeners = new Set<() => void>();
  let ca: { pair: KeyPair; notAfter: Date } | undefined;
  let previousCa: { pem: string; until: number } | undefined;
  let serving: KeyPair | undefined;
  let renewAt: Date | undefined;
  let timer: unknown;
  let stopped = false;

  async function loadCa(): Promise<{ pair: KeyPair; notAfter: Date }> {
    const ref = options.caSecret;
    let secret = await options.secrets.read(ref);
    if (!secret) {
      const fresh = createCertificateAuthority(
        {
          // An X.509 PrintableString: letters, digits and a few marks; Go refuses a CA named with '@' or '_'.
          commonName: `napwake-webhook-ca-${now().getTime()}`,
          notBefore: now(),
          validForMs: options.caValidForMs ?? defaultCaValidForMs,
        },
        pki,
      );
      const outcome = await options.secrets.create(
        caSecret(ref, fresh, { "app.kubernetes.io/name": "napwake" }),
      );
      logger.info(
        { secret: `${ref.namespace}/${ref.name}`, outcome },
        "certificates: CA Secret created or found",
      );
      secret = await options.secrets.read(ref);
      if (!secret) throw new Error(`Secret ${ref.namespace}/${ref.name} vanished right after it was created`);
    }
    const parsed = caFromSecret(secret, now());
    if ("problem" in parsed) throw new Error(parsed.problem);
    return { pair: parsed.ca, notAfter: parsed.notAfter };
  }

  function issue(authority: { pair: KeyPair; notAfter: Date }): void {
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
    if (ca && ca.pair.certPem !== authority.pair.certPem) {
      previousCa = {
        pem: ca.pair.certPem,
        until: issuedAt.getTime() + (options.previousCaGraceMs ?? defaultPreviousCaGraceMs),
      };
    }
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
    let authority = ca;
    try {
      authority = await loadCa();
    } catch (error) {
      logger.warn(
        { err: error },
        "certificates: could not re-read the CA Secret, renewing with the CA in memory",
      );
    }
    if (stopped) return;
    try {
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
      issue(await loadCa());
      if (renewAt) schedule(renewAt);
    },
    stop() {
      stopped = true;
      timers.clearTimeout(timer);
    },
    current: () => serving,
    caPem: () => ca?.pair.certPem,
    caBundlePem() {
      if (!ca) return undefined;
      const keepPrevious = previousCa && now().getTime() < previousCa.until;
      return keepPrevious ? `${ca.pair.certPem.trimEnd()}\n${previousCa?.pem.trimEnd()}\n` : ca.pair.certPem;
    },
    renewsAt: () => renewAt,
    async refresh() {
      if (stopped || !ca) return;
      let authority: { pair: KeyPair; notAfter: Date };
      try {
        authority = await loadCa();
      } catch (error) {
        logger.warn({ err: error }, "certificates: could not re-read the CA Secret; keeping the current CA");
        return;
      }
      if (stopped || authority.pair.certPem === ca?.pair.certPem) return;
      logger.info({}, "certificates: the shared CA was replaced; issuing a serving certificate from it");
      try {
        issue(authority);
        if (renewAt) schedule(renewAt);
      } catch (error) {
        logger.error(
          { err: error },
          "certificates: could not issue from the replaced CA; renewal will retry",
        );
      }
    },
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
