import { X509Certificate } from "node:crypto";
import type { V1Secret } from "@kubernetes/client-node";
import pino from "pino";
import { describe, expect, it } from "vitest";
import { retiredCasAnnotation } from "../api/keys.ts";
import { publishCaBundle, type WebhookConfigurationRef, type WebhookConfigurations } from "./cabundle.ts";
import {
  type CertificateManager,
  type CertificateManagerOptions,
  createCertificateManager,
  type SecretStore,
} from "./manager.ts";
import { createCertificateAuthority, defaultPkiDeps } from "./pki.ts";
import { parseRetiredCas, splitCertificates } from "./retired-cas.ts";
import { caSecret, type SecretRef } from "./rotation.ts";

const pki = { ...defaultPkiDeps, keyBits: 1024 };
const ref: SecretRef = { namespace: "napwake-system", name: "napwake-webhook-ca" };
const dnsNames = ["napwake-webhook.napwake-system.svc"];
const hour = 3600_000;
const logger = pino({ level: "silent" });
const settle = () => new Promise((resolve) => setImmediate(resolve));

/**
 * An in-memory Secret store with resourceVersions, updates refused on a stale one as the API server does;
 * `staleReads` makes the next reads miss, as when replicas race.
 */
function memoryStore() {
  const secrets = new Map<string, V1Secret>();
  const calls = { creates: 0, reads: 0, updates: 0, conflicts: 0 };
  let staleReads = 0;
  let failReads = false;
  let failUpdates = false;
  let version = 0;
  const stamped = (secret: V1Secret): V1Secret => ({
    ...structuredClone(secret),
    metadata: { ...secret.metadata, resourceVersion: String(++version) },
  });
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
      secrets.set(key, stamped(secret));
      return "created";
    },
    async update(secret) {
      if (failUpdates) throw new Error("forbidden");
      const key = `${secret.metadata?.namespace}/${secret.metadata?.name}`;
      const stored = secrets.get(key);
      if (!stored || stored.metadata?.resourceVersion !== secret.metadata?.resourceVersion) {
        calls.conflicts++;
        return "conflict";
      }
      calls.updates++;
      secrets.set(key, stamped(secret));
      return "updated";
    },
  };
  return {
    store,
    secrets,
    calls,
    /** Replaces the CA Secret as a person would (kubectl replace): a new CA, no annotations. */
    replaceCa(pem: { certPem: string; keyPem: string }) {
      secrets.set("napwake-system/napwake-webhook-ca", stamped(caSecret(ref, pem)));
    },
    /** The replaced CAs recorded on the CA Secret. */
    recorded(now: Date) {
      const secret = secrets.get("napwake-system/napwake-webhook-ca");
      return parseRetiredCas(secret?.metadata?.annotations?.[retiredCasAnnotation], now, 15 * 60_000);
    },
    failUpdates: (fail: boolean) => {
      failUpdates = fail;
    },
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

function manager(
  store: SecretStore,
  clock: ReturnType<typeof fakeClock>,
  servingValidForMs = 24 * hour,
  more: Partial<CertificateManagerOptions> = {},
) {
  return createCertificateManager({
    secrets: store,
    caSecret: ref,
    dnsNames,
    servingValidForMs,
    now: clock.now,
    timers: clock.timers,
    logger,
    pki,
    ...more,
  });
}

const serial = (pem: string | undefined) => new X509Certificate(pem ?? "").serialNumber;
const fingerprint = (pem: string | undefined) => new X509Certificate(pem ?? "").fingerprint256;
/** The fingerprints of the CAs in a bundle, in order. */
const cas = (bundle: string | undefined) => splitCertificates(bundle ?? "").map(fingerprint);
const newCa = (commonName: string) =>
  createCertificateAuthority({ commonName, notBefore: new Date(), validForMs: 24 * hour * 365 }, pki);

/** A logger that keeps the warnings. */
function warningsLogger() {
  const warnings: { fields: object; message: string }[] = [];
  const log = {
    info: () => undefined,
    error: () => undefined,
    warn: (fields: object, message: string) => warnings.push({ fields, message }),
  };
  return { logger: log as unknown as CertificateManagerOptions["logger"], warnings };
}

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

  it("follows a CA another replica replaced once its caBundle is published, and tells its subscribers", async () => {
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
    const replaced = newCa("replaced");
    memory.replaceCa(replaced);
    await m.refresh([before ?? ""]);
    expect(told).toBe(0);
    expect(m.caPem()).toBe(before);
    // Both CAs are published for a while, so a replica still serving from the old one stays trusted.
    expect(cas(m.caBundlePem())).toEqual([fingerprint(replaced.certPem), fingerprint(before)]);
    m.bundlePublished(m.caBundlePem() ?? "");
    expect(told).toBe(1);
    expect(m.caPem()).toBe(replaced.certPem);
    clock.advance(16 * 60_000);
    expect(m.caBundlePem()).toBe(replaced.certPem);
    expect(
      new X509Certificate(m.current()?.certPem ?? "").checkIssued(new X509Certificate(replaced.certPem)),
    ).toBe(true);
  });

  it("records the CA it served from in the Secret when it follows a replaced one, with the grace's deadline", async () => {
    const memory = memoryStore();
    const clock = fakeClock(new Date());
    const m = manager(memory.store, clock);
    await m.start();
    const before = m.caPem();
    memory.replaceCa(newCa("replaced"));
    clock.advance(2 * 60_000);
    await m.refresh();
    expect(memory.recorded(clock.now())).toEqual({
      retired: [
        {
          pem: new X509Certificate(before ?? "").toString(),
          until: new Date(clock.now().getTime() + 15 * 60_000),
        },
      ],
      problems: [],
    });
  });

  it("a replica started after the switch publishes the same caBundle as one that saw it, until the recorded deadline", async () => {
    const memory = memoryStore();
    const clock = fakeClock(new Date());
    const early = manager(memory.store, clock);
    await early.start();
    const previous = early.caPem();
    const replaced = newCa("replaced");
    memory.replaceCa(replaced);
    await early.refresh();
    clock.advance(5 * 60_000);
    const late = manager(memory.store, clock);
    await late.start();
    expect(late.caPem()).toBe(replaced.certPem);
    expect(cas(late.caBundlePem())).toEqual([fingerprint(replaced.certPem), fingerprint(previous)]);
    expect(late.caBundlePem()).toBe(early.caBundlePem());
    // Both drop it at the deadline recorded when `early` followed, not 15 minutes after `late` started.
    clock.advance(10 * 60_000);
    await late.refresh();
    expect(cas(late.caBundlePem())).toEqual([fingerprint(replaced.certPem)]);
    expect(early.caBundlePem()).toBe(late.caBundlePem());
  });

  it("replicas that follow a replaced CA together record the previous one once, with one deadline", async () => {
    const memory = memoryStore();
    const clock = fakeClock(new Date());
    const replicas = [
      manager(memory.store, clock),
      manager(memory.store, clock),
      manager(memory.store, clock),
    ];
    for (const r of replicas) await r.start();
    const previous = replicas[0]?.caPem();
    memory.replaceCa(newCa("replaced"));
    await Promise.all(replicas.map((r) => r.refresh()));
    expect(memory.calls.updates).toBe(1);
    expect(memory.calls.conflicts).toBeGreaterThan(0);
    expect(memory.recorded(clock.now()).retired.map((ca) => fingerprint(ca.pem))).toEqual([
      fingerprint(previous),
    ]);
    expect(new Set(replicas.map((r) => r.caBundlePem())).size).toBe(1);
  });

  it("a replica that creates the CA after the Secret was deleted keeps the CA the webhooks still trust", async () => {
    const memory = memoryStore();
    const clock = fakeClock(new Date());
    const early = manager(memory.store, clock);
    await early.start();
    const previous = early.caPem() ?? "";
    memory.secrets.delete("napwake-system/napwake-webhook-ca");
    const late = manager(memory.store, clock);
    await late.start();
    // What the caBundle reconcile passes: the CAs published in the webhook configurations.
    await late.refresh([previous]);
    const current = late.caPem();
    expect(cas(late.caBundlePem())).toEqual([fingerprint(current), fingerprint(previous)]);
    // `late` publishes its bundle; `early` reads it in the configurations at its resync.
    const bundle = splitCertificates(late.caBundlePem() ?? "");
    await early.refresh(bundle, bundle);
    expect(early.caPem()).toBe(current);
    expect(early.caBundlePem()).toBe(late.caBundlePem());
  });

  it("ignores a corrupt record with a warning, and replaces it with a readable one", async () => {
    const memory = memoryStore();
    const secret = caSecret(ref, newCa("shared"));
    memory.secrets.set("napwake-system/napwake-webhook-ca", {
      ...secret,
      metadata: { ...secret.metadata, annotations: { [retiredCasAnnotation]: "{not json" } },
    });
    const { logger: log, warnings } = warningsLogger();
    const m = manager(memory.store, fakeClock(new Date()), 24 * hour, { logger: log });
    await m.start();
    expect(cas(m.caBundlePem())).toEqual([fingerprint(m.caPem())]);
    expect(warnings).toEqual([
      {
        fields: expect.objectContaining({ problem: expect.stringContaining("not JSON") }),
        message: "certificates: ignoring a replaced CA that cannot be read",
      },
    ]);
    const annotations = memory.secrets.get("napwake-system/napwake-webhook-ca")?.metadata?.annotations ?? {};
    expect(retiredCasAnnotation in annotations).toBe(false);
  });

  it("publishes a replaced CA from memory when the Secret cannot be written, and records it once it can", async () => {
    const memory = memoryStore();
    const clock = fakeClock(new Date());
    const m = manager(memory.store, clock);
    await m.start();
    const previous = m.caPem();
    const replaced = newCa("replaced");
    memory.replaceCa(replaced);
    memory.failUpdates(true);
    await m.refresh();
    expect(cas(m.caBundlePem())).toEqual([fingerprint(replaced.certPem), fingerprint(previous)]);
    expect(memory.recorded(clock.now()).retired).toEqual([]);
    const deadline = clock.now().getTime() + 15 * 60_000;
    clock.advance(5 * 60_000);
    memory.failUpdates(false);
    await m.refresh();
    expect(memory.recorded(clock.now()).retired.map((ca) => ca.until.getTime())).toEqual([deadline]);
  });

  it("keeps its CA when the Secret cannot be read at a refresh, and says its caBundle is not current", async () => {
    const memory = memoryStore();
    const m = manager(memory.store, fakeClock(new Date()));
    expect(await m.refresh()).toBe(false);
    await m.start();
    expect(await m.refresh()).toBe(true);
    const before = m.caPem();
    memory.failReads(true);
    expect(await m.refresh()).toBe(false);
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

  it("renews at a resync once the wall clock passed the renewal time its timer (monotonic, stopped while the host was suspended) has not reached", async () => {
    const memory = memoryStore();
    const clock = fakeClock();
    const m = manager(memory.store, clock, 24 * hour);
    await m.start();
    const first = m.current();
    // 10 h up, then 15 h suspended: the wall clock is past the renewal at 16 h, the timer has 6 h to go.
    clock.advance(25 * hour);
    await m.refresh([m.caPem() ?? ""], [m.caPem() ?? ""]);
    expect(serial(m.current()?.certPem)).not.toBe(serial(first?.certPem));
    expect(new X509Certificate(m.current()?.certPem ?? "").validToDate.getTime()).toBeGreaterThan(
      clock.now().getTime(),
    );
    expect(clock.pending()).toEqual([16 * hour]);
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

  it("retries later when it cannot issue from a CA someone supplied that has expired", async () => {
    const memory = memoryStore();
    const clock = fakeClock();
    memory.replaceCa(
      createCertificateAuthority(
        { commonName: "supplied", notBefore: clock.now(), validForMs: 20 * hour },
        pki,
      ),
    );
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

  it("replaces its own CA two thirds into its life, and keeps the old one trusted until every replica follows", async () => {
    const memory = memoryStore();
    const clock = fakeClock(new Date());
    const opts = { caValidForMs: 30 * 24 * hour };
    const first = manager(memory.store, clock, 24 * hour, opts);
    const second = manager(memory.store, clock, 24 * hour, opts);
    await first.start();
    await second.start();
    const old = first.caPem();
    clock.advance(19 * 24 * hour);
    await first.refresh([old ?? ""], [old ?? ""]);
    expect(first.caPem()).toBe(old); // not yet: two thirds of 30 days is 20
    clock.advance(24 * hour);
    await first.refresh([old ?? ""], [old ?? ""]);
    const stored = memory.secrets.get("napwake-system/napwake-webhook-ca");
    const replacement = Buffer.from(stored?.data?.["tls.crt"] ?? "", "base64").toString();
    expect(fingerprint(replacement)).not.toBe(fingerprint(old));
    expect(stored?.metadata?.labels).toEqual({ "app.kubernetes.io/name": "napwake" });
    // Both CAs in the caBundle; each replica serves from the old one until that bundle is published.
    expect(cas(first.caBundlePem())).toEqual([fingerprint(replacement), fingerprint(old)]);
    expect(first.caPem()).toBe(old);
    first.bundlePublished(first.caBundlePem() ?? "");
    expect(first.caPem()).toBe(replacement);
    const bundle = splitCertificates(first.caBundlePem() ?? "");
    await second.refresh(bundle, bundle);
    expect(second.caPem()).toBe(replacement);
    expect(second.caBundlePem()).toBe(first.caBundlePem());
  });

  it.each<{ how: string; labels: Record<string, string> }>([
    { how: "kubectl replace (the Secret's labels dropped)", labels: {} },
    {
      how: "kubectl apply (the label Napwake gave the Secret kept)",
      labels: { "app.kubernetes.io/name": "napwake" },
    },
  ])("leaves a CA someone supplied with $how to them, however old", async ({ labels }) => {
    const memory = memoryStore();
    const clock = fakeClock(new Date());
    const supplied = createCertificateAuthority(
      { commonName: "supplied", notBefore: clock.now(), validForMs: 30 * 24 * hour },
      pki,
    );
    memory.secrets.set("napwake-system/napwake-webhook-ca", {
      ...caSecret(ref, supplied, labels),
      metadata: { ...caSecret(ref, supplied, labels).metadata, resourceVersion: "1" },
    });
    const m = manager(memory.store, clock);
    await m.start();
    clock.advance(25 * 24 * hour);
    await m.refresh([supplied.certPem], [supplied.certPem]);
    expect(m.caPem()).toBe(supplied.certPem);
    expect(memory.calls.updates).toBe(0);
  });

  it("stops renewing when stopped", async () => {
    const clock = fakeClock();
    const m = manager(memoryStore().store, clock);
    await m.start();
    m.stop();
    expect(clock.pending()).toEqual([]);
  });
});

/**
 * Our two webhook configurations as the API server holds them, each with one Service-backed webhook, for
 * `publishCaBundle`. `failApplies` makes every apply fail, or those to one kind; `events` tells what happened
 * in order: each apply, and each serving certificate of a `watch`ed replica, with the CA it comes from.
 */
function webhookApi() {
  const caBundles = new Map<string, string | undefined>();
  const events: string[] = [];
  let failApplies: boolean | WebhookConfigurationRef["kind"] = false;
  const api: WebhookConfigurations = {
    async read(ref) {
      const caBundle = caBundles.get(ref.kind);
      return { webhooks: [{ name: "w", clientConfig: { service: { name: "napwake-webhook" }, caBundle } }] };
    },
    async patch(ref, operations) {
      if (failApplies === true || failApplies === ref.kind) {
        events.push(`${ref.kind} apply failed`);
        throw Object.assign(new Error("etcd timeout"), { code: 504 });
      }
      const set = operations.find((o) => o.op === "add" && o.path.endsWith("/caBundle"));
      caBundles.set(ref.kind, set && "value" in set ? String(set.value) : undefined);
      events.push(`${ref.kind} applied`);
    },
  };
  /** The PEM CAs both configurations trust (they must agree). */
  const trustedPems = () => {
    const bundles = new Set(caBundles.values());
    expect(bundles.size).toBe(1);
    const [bundle] = bundles;
    return splitCertificates(Buffer.from(bundle ?? "", "base64").toString("utf8"));
  };
  return {
    api,
    events,
    trustedPems,
    /** The fingerprints of the CAs both configurations trust. */
    trusted: () => trustedPems().map(fingerprint),
    failApplies: (fail: boolean | WebhookConfigurationRef["kind"]) => {
      failApplies = fail;
    },
    /** Makes `m` note in `events` each serving certificate it issues, with the CA it comes from. */
    watch(m: CertificateManager, names: Map<string | undefined, string>) {
      m.subscribe(() => events.push(`serving from ${names.get(fingerprint(m.caPem())) ?? "?"}`));
    },
  };
}

const webhookRefs: WebhookConfigurationRef[] = [
  { kind: "MutatingWebhookConfiguration", name: "napwake" },
  { kind: "ValidatingWebhookConfiguration", name: "napwake" },
];

/** Whether `m` serves a certificate issued by the CA `caPem`. */
const servesFrom = (m: CertificateManager, caPem: string | undefined) =>
  new X509Certificate(m.current()?.certPem ?? "").checkIssued(new X509Certificate(caPem ?? ""));

describe("certificate manager switching to a replaced CA", () => {
  /** A replica started and published (its caBundle trusts its CA), and a new CA in the Secret. */
  async function replicaAfterReplacement() {
    const memory = memoryStore();
    const clock = fakeClock(new Date());
    const m = manager(memory.store, clock);
    await m.start();
    const web = webhookApi();
    await publishCaBundle(web.api, webhookRefs, m);
    web.events.length = 0;
    const previous = m.caPem() ?? "";
    const replaced = newCa("replaced");
    memory.replaceCa(replaced);
    const names = new Map([
      [fingerprint(previous), "previous"],
      [fingerprint(replaced.certPem), "replaced"],
    ]);
    web.watch(m, names);
    return { memory, clock, m, web, previous, replaced: replaced.certPem };
  }

  it("keeps serving from the previous CA while the caBundle with the replaced one cannot be published", async () => {
    const { m, web, previous, replaced } = await replicaAfterReplacement();
    const before = m.current();
    web.failApplies(true);
    await expect(publishCaBundle(web.api, webhookRefs, m)).rejects.toThrow("etcd timeout");
    expect(m.caPem()).toBe(previous);
    expect(m.current()).toBe(before);
    expect(servesFrom(m, previous)).toBe(true);
    expect(web.trusted()).toEqual([fingerprint(previous)]);
    // Its caBundle holds both, for the next attempt.
    expect(cas(m.caBundlePem())).toEqual([fingerprint(replaced), fingerprint(previous)]);
    expect(web.events).toEqual(["MutatingWebhookConfiguration apply failed"]);
  });

  it("switches to the replaced CA only after the caBundle that trusts it is published", async () => {
    const { m, web, previous, replaced } = await replicaAfterReplacement();
    await publishCaBundle(web.api, webhookRefs, m);
    expect(web.events).toEqual([
      "MutatingWebhookConfiguration applied",
      "ValidatingWebhookConfiguration applied",
      "serving from replaced",
    ]);
    expect(web.trusted()).toEqual([fingerprint(replaced), fingerprint(previous)]);
    expect(m.caPem()).toBe(replaced);
    expect(servesFrom(m, replaced)).toBe(true);
  });

  it("switches after a failed publish once a later one succeeds", async () => {
    const { m, web, replaced } = await replicaAfterReplacement();
    web.failApplies(true);
    await expect(publishCaBundle(web.api, webhookRefs, m)).rejects.toThrow("etcd timeout");
    web.failApplies(false);
    await publishCaBundle(web.api, webhookRefs, m);
    expect(web.events).toEqual([
      "MutatingWebhookConfiguration apply failed",
      "MutatingWebhookConfiguration applied",
      "ValidatingWebhookConfiguration applied",
      "serving from replaced",
    ]);
    expect(servesFrom(m, replaced)).toBe(true);
  });

  it("keeps the previous CA while the caBundle with the replaced one reached one configuration only", async () => {
    const { m, web, previous, replaced } = await replicaAfterReplacement();
    web.failApplies("ValidatingWebhookConfiguration");
    await expect(publishCaBundle(web.api, webhookRefs, m)).rejects.toThrow("etcd timeout");
    // Its next reconcile reads the mutating webhook trusting both CAs, the validating one the previous only.
    web.failApplies(true);
    await expect(publishCaBundle(web.api, webhookRefs, m)).rejects.toThrow("etcd timeout");
    expect(servesFrom(m, previous)).toBe(true);
    web.failApplies(false);
    await publishCaBundle(web.api, webhookRefs, m);
    expect(web.events).toEqual([
      "MutatingWebhookConfiguration applied",
      "ValidatingWebhookConfiguration apply failed",
      "ValidatingWebhookConfiguration apply failed",
      "ValidatingWebhookConfiguration applied",
      "serving from replaced",
    ]);
    expect(servesFrom(m, replaced)).toBe(true);
  });

  it("switches to the CA it read before when every webhook trusts it, though the Secret cannot be read now", async () => {
    const { memory, clock, m, web, previous, replaced } = await replicaAfterReplacement();
    web.failApplies(true);
    await expect(publishCaBundle(web.api, webhookRefs, m)).rejects.toThrow("etcd timeout");
    web.failApplies(false);
    const other = manager(memory.store, clock);
    await other.start();
    await publishCaBundle(web.api, webhookRefs, other);
    expect(web.trusted()).toEqual([fingerprint(replaced), fingerprint(previous)]);
    memory.failReads(true);
    web.events.length = 0;
    const results = await publishCaBundle(web.api, webhookRefs, m);
    expect(results.map((r) => r.outcome)).toEqual(["skipped", "skipped"]);
    expect(web.events).toEqual(["serving from replaced"]);
    expect(servesFrom(m, replaced)).toBe(true);
  });

  it("switches at its resync, before publishing, when another replica published the caBundle that trusts the replaced CA", async () => {
    const { memory, clock, m, web, previous, replaced } = await replicaAfterReplacement();
    // What its caBundle reconcile passes: the CAs the configurations trust, the previous one only.
    await m.refresh(web.trustedPems(), web.trustedPems());
    expect(servesFrom(m, previous)).toBe(true);
    const other = manager(memory.store, clock);
    await other.start();
    await publishCaBundle(web.api, webhookRefs, other);
    web.events.length = 0;
    await m.refresh(web.trustedPems(), web.trustedPems());
    expect(web.events).toEqual(["serving from replaced"]);
    expect(servesFrom(m, replaced)).toBe(true);
  });

  it("serves from a CA it created after the Secret was deleted only once the caBundle that trusts it is published", async () => {
    const memory = memoryStore();
    const clock = fakeClock(new Date());
    const m = manager(memory.store, clock);
    await m.start();
    const web = webhookApi();
    await publishCaBundle(web.api, webhookRefs, m);
    const previous = m.caPem();
    memory.secrets.delete("napwake-system/napwake-webhook-ca");
    web.failApplies(true);
    await expect(publishCaBundle(web.api, webhookRefs, m)).rejects.toThrow("etcd timeout");
    const created = memory.secrets.get("napwake-system/napwake-webhook-ca");
    expect(created).toBeDefined();
    expect(m.caPem()).toBe(previous);
    expect(servesFrom(m, previous)).toBe(true);
    web.failApplies(false);
    await publishCaBundle(web.api, webhookRefs, m);
    expect(fingerprint(m.caPem())).not.toBe(fingerprint(previous));
    expect(web.trusted()).toEqual([fingerprint(m.caPem()), fingerprint(previous)]);
  });

  it("renews from the previous CA when its renewal finds a replaced one, leaving the switch to the publish", async () => {
    const memory = memoryStore();
    const clock = fakeClock(new Date());
    const m = manager(memory.store, clock, 30_000);
    await m.start();
    const previous = m.caPem();
    const first = m.current();
    const replaced = newCa("replaced");
    memory.replaceCa(replaced);
    await clock.fire();
    expect(serial(m.current()?.certPem)).not.toBe(serial(first?.certPem));
    expect(m.caPem()).toBe(previous);
    expect(servesFrom(m, previous)).toBe(true);
    m.bundlePublished(m.caBundlePem() ?? "");
    expect(servesFrom(m, replaced.certPem)).toBe(true);
  });

  it("switches at once, unpublished, when the CA it serves from has expired: nothing trusts its certificates", async () => {
    const memory = memoryStore();
    const clock = fakeClock(new Date());
    const m = manager(memory.store, clock, 24 * hour, { caValidForMs: 2 * hour });
    await m.start();
    const previous = m.caPem() ?? "";
    const replaced = newCa("replaced");
    memory.replaceCa(replaced);
    clock.advance(2 * hour - 60_000);
    await m.refresh([previous]);
    expect(servesFrom(m, previous)).toBe(true);
    clock.advance(2 * 60_000);
    await m.refresh([previous]);
    expect(servesFrom(m, replaced.certPem)).toBe(true);
  });

  it("keeps the previous CA when told of a published caBundle that lacks the replaced one", async () => {
    const { m, previous } = await replicaAfterReplacement();
    await m.refresh([previous]);
    m.bundlePublished(previous);
    expect(servesFrom(m, previous)).toBe(true);
  });
});
