import { createPrivateKey, X509Certificate } from "node:crypto";
import { type FSWatcher, watch } from "node:fs";
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import type { KeyPair } from "../certs/pki.ts";
import type { ServingCertificates } from "../certs/serving-tls.ts";
import type { Logger } from "./server.ts";

export interface FileCertificateSource extends ServingCertificates {
  /** Reads the files once and starts watching them. Resolves even if they are missing (not ready yet). */
  start(): Promise<void>;
  stop(): void;
}

/** What is wrong with a certificate and key read from files, or undefined when they make a usable pair. */
export function keyPairProblem(pair: KeyPair): string | undefined {
  try {
    const cert = new X509Certificate(pair.certPem);
    if (!cert.checkPrivateKey(createPrivateKey(pair.keyPem))) return "tls.key does not match tls.crt";
    return undefined;
  } catch (error) {
    return error instanceof Error ? error.message : String(error);
  }
}

/**
 * The serving certificate from `<dir>/tls.crt` and `<dir>/tls.key`, as cert-manager's Secret is mounted
 * (--cert-source=cert-manager): re-read when the directory changes (a Secret volume swaps a symlink) and
 * every `pollMs` as a fallback. A half-written pair (certificate renewed, key not yet) is skipped, keeping
 * the previous one until both match.
 */
export function fileCertificateSource(options: {
  dir: string;
  logger: Logger;
  pollMs?: number;
}): FileCertificateSource {
  const { dir, logger } = options;
  const listeners = new Set<() => void>();
  let pair: KeyPair | undefined;
  let watcher: FSWatcher | undefined;
  let timer: NodeJS.Timeout | undefined;
  let stopped = false;
  let lastProblem: string | undefined;
  let reading: Promise<void> = Promise.resolve();

  async function reload(): Promise<void> {
    let next: KeyPair;
    try {
      const [certPem, keyPem] = await Promise.all([
        readFile(join(dir, "tls.crt"), "utf8"),
        readFile(join(dir, "tls.key"), "utf8"),
      ]);
      next = { certPem, keyPem };
    } catch (error) {
      report(`cannot read tls.crt and tls.key in ${dir}: ${(error as Error).message}`);
      return;
    }
    if (pair && pair.certPem === next.certPem && pair.keyPem === next.keyPem) return;
    const problem = keyPairProblem(next);
    if (problem) {
      report(`the certificate in ${dir} is not usable yet: ${problem}`);
      return;
    }
    pair = next;
    lastProblem = undefined;
    logger.info({ dir }, "certificates: serving certificate read from files");
    for (const listener of listeners) {
      try {
        listener();
      } catch (error) {
        logger.error({ err: error }, "certificates: a listener failed");
      }
    }
  }

  // Said once per distinct problem, not at every poll.
  function report(problem: string): void {
    if (problem !== lastProblem) logger.warn({ dir }, `certificates: ${problem}`);
    lastProblem = problem;
  }

  const schedule = () => {
    reading = reading.then(reload);
    return reading;
  };

  return {
    async start() {
      stopped = false;
      await schedule();
      // Stopped while the first read ran: nothing to watch for.
      if (stopped) return;
      try {
        watcher = watch(dir, () => void schedule());
        watcher.on("error", () => undefined);
      } catch {
        // The directory does not exist yet: polling picks the files up when it does.
      }
      timer = setInterval(() => void schedule(), options.pollMs ?? 30_000);
    },
    stop() {
      stopped = true;
      watcher?.close();
      clearInterval(timer);
    },
    current: () => pair,
    subscribe(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
