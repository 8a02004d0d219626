import { X509Certificate } from "node:crypto";
import type { V1Secret } from "@kubernetes/client-node";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { createCertificateManager, type SecretStore } from "./manager.ts";
import { createCertificateAuthority, defaultPkiDeps } from "./pki.ts";
import { caSecret, type SecretRef } from "./rotation.ts";

const pki = { ...defaultPkiDeps, keyBits: 1024 };
const ref: SecretRef = { namespace: "napwake-system", name: "napwake-webhook-ca" };
const dnsNames = ["napwake-webhook.napwake-system.svc"];
const hour = 3600_000;
const logger = pino({ level: "silent" });
const settle = () => new Promise((resolve) => setImmediate(resolve));

/** An in-memory Secret store; `staleReads` makes the next reads miss, as when replicas race. */
function memoryStore() {
  const secrets = new Map<string, V1Secret>();
  const calls = { creates: 0, reads: 0 };
  let staleReads = 0;
  let failReads = false;
  const store: SecretStore = {
    async read(r) {
      calls.reads++;
      if (failReads) throw new Error("API server unreachable");
      if (staleReads > 0) {
        staleReads--;
        return undefined;
      }
      return structuredClone(secrets.get(`${r.namespace}/${r.name}`));
    },
    async create(secret) {
      calls.creates++;
      const key = `${secret.metadata?.namespace}/${secret.metadata?.name}`;
      if (secrets.has(key)) return "exists";
      secrets.set(key, structuredClone(secret));
      return "created";
    },
  };
  return {
    store,
    secrets,
    calls,
    missNextReads: (n: number) => {
      staleReads = n;
    },
    failReads: (fail: boolean) => {
      failReads = fail;
    },
  };
}

function fakeClock(start = new Date("2026-01-01T00:00:00Z")) {
  let now = start.getTime();
  const timers: { callback: () => void; ms: number; id: number }[] = [];
  let nextId = 1;
  return {
    now: () => new Date(now),
    advance: (ms: number) => {
      now += ms;
    },
    timers: {
      setTimeout: (callback: () => void, ms: number) => {
        const id = nextId++;
        timers.push({ callback, ms, id });
        return id;
      },
      clearTimeout: (id: unknown) => {
        const index = timers.findIndex((t) => t.id === id);
        if (index >= 0) timers.splice(index, 1);
      },
    },
    pending: () => timers.map((t) => t.ms),
    /** Moves the clock to the next timer and fires it. */
    async fire() {
      const timer = timers.shift();
      if (!timer) throw new Error("no timer armed");
      now += timer.ms;
      timer.callback();
      await settle();
    },
  };
}

function manager(store: SecretStore, clock: ReturnType<typeof fakeClock>, servingValidForMs = 24 * hour) {
  return createCertificateManager({
    secrets: store,
    caSecret: ref,
    dnsNames,
    servingValidForMs,
    now: clock.now,
    timers: clock.timers,
    logger,
    pki,
  });
}

const serial = (pem: string | undefined) => new X509Certificate(pem ?? "").serialNumber;

describe("certificate manager", () => {
  it("creates the CA Secret when absent and issues a serving certificate from it", async () => {
    const memory = memoryStore();
    const clock = fakeClock();
    const m = manager(memory.store, clock);
    await m.start();
    expect(memory.secrets.get("napwake-system/napwake-webhook-ca")?.type).toBe("kubernetes.io/tls");
    const cert = new X509Certificate(m.current()?.certPem ?? "");
    expect(cert.checkIssued(new X509Certificate(m.caPem() ?? ""))).toBe(true);
    expect(cert.subjectAltName).toContain("DNS:napwake-webhook.napwake-system.svc");
    expect(cert.validToDate).toEqual(new Date(clock.now().getTime() + 24 * hour));
    expect(m.renewsAt()).toEqual(new Date(clock.now().getTime() + 16 * hour));
    expect(clock.pending()).toEqual([16 * hour]);
  });

  it("names the CA with PrintableString characters only, which Go's x509 parser insists on", async () => {
    const m = manager(memoryStore().store, fakeClock());
    await m.start();
    const subject = new X509Certificate(m.caPem() ?? "").subject;
    expect(subject).toMatch(/^CN=[A-Za-z0-9 '()+,\-./:=?]+$/);
  });

  it("lets replicas race to create the CA: the loser re-reads and uses the winner's", async () => {
    const memory = memoryStore();
    const clock = fakeClock();
    const a = manager(memory.store, clock);
    const b = manager(memory.store, clock);
    // Both see no Secret, both create; one create fails on conflict.
    memory.missNextReads(2);
    await Promise.all([a.start(), b.start()]);
    expect(memory.calls.creates).toBe(2);
    expect(a.caPem()).toBe(b.caPem());
    expect(
      new X509Certificate(b.current()?.certPem ?? "").checkIssued(new X509Certificate(a.caPem() ?? "")),
    ).toBe(true);
  });

  it("uses a CA another replica stored", async () => {
    const memory = memoryStore();
    const ca = createCertificateAuthority(
      { commonName: "shared", notBefore: new Date(), validForMs: 24 * hour * 365 },
      pki,
    );
    memory.secrets.set("napwake-system/napwake-webhook-ca", caSecret(ref, ca));
    const m = manager(memory.store, fakeClock(new Date()));
    await m.start();
    expect(m.caPem()).toBe(ca.certPem);
    expect(memory.calls.creates).toBe(0);
  });

  it("follows a CA another replica replaced at the next refresh, and tells its subscribers", async () => {
    const memory = memoryStore();
    const clock = fakeClock(new Date());
    const m = manager(memory.store, clock);
    await m.start();
    let told = 0;
    m.subscribe(() => told++);
    await m.refresh();
    expect(told).toBe(0);
    expect(m.caBundlePem()).toBe(m.caPem());
    const before = m.caPem();
    const replaced = createCertificateAuthority(
      { commonName: "replaced", notBefore: new Date(), validForMs: 24 * hour * 365 },
      pki,
    );
    memory.secrets.set("napwake-system/napwake-webhook-ca", caSecret(ref, replaced));
    await m.refresh();
    expect(told).toBe(1);
    expect(m.caPem()).toBe(replaced.certPem);
    // Both CAs are published for a while, so a replica still serving from the old one stays trusted.
    const bundle = m.caBundlePem() ?? "";
    expect(bundle).toContain(replaced.certPem.trim());
    expect(bundle).toContain(before?.trim());
    clock.advance(16 * 60_000);
    expect(m.caBundlePem()).toBe(replaced.certPem);
    expect(
      new X509Certificate(m.current()?.certPem ?? "").checkIssued(new X509Certificate(replaced.certPem)),
    ).toBe(true);
  });

  it("keeps its CA when the Secret cannot be read at a refresh", async () => {
    const memory = memoryStore();
    const m = manager(memory.store, fakeClock(new Date()));
    await m.start();
    const before = m.caPem();
    memory.failReads(true);
    await m.refresh();
    expect(m.caPem()).toBe(before);
  });

  it("refuses to start on a Secret that holds no CA, saying how to fix it", async () => {
    const memory = memoryStore();
    memory.secrets.set("napwake-system/napwake-webhook-ca", { metadata: ref, data: { "tls.crt": "eA==" } });
    await expect(manager(memory.store, fakeClock()).start()).rejects.toThrow(/Fix: delete the Secret/);
  });

  it("renews at two thirds of the life, tells its subscribers, and arms the next renewal", async () => {
    const memory = memoryStore();
    const clock = fakeClock();
    const m = manager(memory.store, clock, 30_000);
    await m.start();
    const first = m.current();
    let notified = 0;
    m.subscribe(() => notified++);
    await clock.fire();
    expect(clock.now()).toEqual(new Date("2026-01-01T00:00:20Z"));
    expect(notified).toBe(1);
    expect(serial(m.current()?.certPem)).not.toBe(serial(first?.certPem));
    expect(clock.pending()).toEqual([20_000]);
  });

  it("renews with the CA in memory when the API server is unreachable", async () => {
    const memory = memoryStore();
    const clock = fakeClock();
    const m = manager(memory.store, clock, 30_000);
    await m.start();
    const ca = m.caPem();
    const first = m.current();
    memory.failReads(true);
    await clock.fire();
    expect(serial(m.current()?.certPem)).not.toBe(serial(first?.certPem));
    expect(m.caPem()).toBe(ca);
  });

  it("retries later when it cannot issue", async () => {
    const memory = memoryStore();
    const clock = fakeClock();
    const m = createCertificateManager({
      secrets: memory.store,
      caSecret: ref,
      dnsNames,
      servingValidForMs: 24 * hour,
      caValidForMs: 20 * hour,
      retryDelayMs: 5_000,
      now: clock.now,
      timers: clock.timers,
      logger,
      pki,
    });
    await m.start();
    // The serving certificate is cut at the CA's expiry (20 h), renewed at 13 h 20 min.
    expect(clock.pending()).toEqual([(20 * hour * 2) / 3]);
    clock.advance(7 * hour); // past the CA's expiry when the renewal fires
    await clock.fire();
    expect(clock.pending()).toEqual([5_000]);
  });

  it("stops renewing when stopped", async () => {
    const clock = fakeClock();
    const m = manager(memoryStore().store, clock);
    await m.start();
    m.stop();
    expect(clock.pending()).toEqual([]);
  });
});
