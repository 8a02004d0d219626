// The TLS side of the operator's HTTPS servers (admission webhooks, /metrics): one serving certificate,
// swapped in place when it rotates, with no restart and no dropped connection.

import { X509Certificate } from "node:crypto";
import { createSecureContext, type SecureContext, type SecureContextOptions } from "node:tls";
import type { Logger as PinoLogger } from "pino";
import type { KeyPair } from "./pki.ts";

/** The serving key and certificate, and a way to hear when they change (rotation): certs/manager.ts is one. */
export interface ServingCertificates {
  current(): KeyPair | undefined;
  /** Calls `listener` after each change; returns the unsubscribe function. */
  subscribe(listener: () => void): () => void;
}

type Logger = Pick<PinoLogger, "info" | "error">;

/** What `servingTls` needs of an HTTPS server: node's https.Server has it. */
export interface SecureContextTarget {
  setSecureContext(options: SecureContextOptions): void;
}

export interface ServingTls {
  /** Spread into the HTTPS server's options: HTTP/1.1 only, TLS 1.2 or later, the current certificate. */
  readonly serverOptions: {
    SNICallback: (servername: string, callback: (err: Error | null, ctx?: SecureContext) => void) => void;
    ALPNProtocols: string[];
    minVersion: "TLSv1.2";
  };
  /** Loads the current certificate into `server` and follows its rotations; returns the stop function. */
  follow(server: SecureContextTarget): () => void;
  /** A certificate has been loaded. */
  loaded(): boolean;
}

/**
 * Clients sending SNI get the current context from the SNI callback; clients without (probes and scrapes by
 * IP) get the server's default context, which each load swaps with setSecureContext. A certificate that does
 * not load is logged and the previous one kept.
 */
export function servingTls(certificates: ServingCertificates, logger: Logger, name: string): ServingTls {
  let context: SecureContext | undefined;
  const load = (server: SecureContextTarget) => {
    const pair = certificates.current();
    if (!pair) return;
    try {
      const material = { cert: pair.certPem, key: pair.keyPem };
      const next = createSecureContext(material);
      server.setSecureContext(material);
      context = next;
      const x = new X509Certificate(pair.certPem);
      logger.info(
        { serial: x.serialNumber, validTo: x.validTo, subjectAltName: x.subjectAltName },
        `${name}: serving certificate loaded`,
      );
    } catch (error) {
      logger.error({ err: error }, `${name}: serving certificate rejected, keeping the previous one`);
    }
  };
  return {
    serverOptions: {
      SNICallback: (_servername, callback) =>
        context ? callback(null, context) : callback(new Error("no serving certificate loaded yet")),
      ALPNProtocols: ["http/1.1"],
      minVersion: "TLSv1.2",
    },
    follow(server) {
      const unsubscribe = certificates.subscribe(() => load(server));
      load(server);
      return unsubscribe;
    },
    loaded: () => context !== undefined,
  };
}
