import { X509Certificate } from "node:crypto";
import { connect } from "node:tls";
import { ApiException, type V1Deployment } from "@kubernetes/client-node";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { retiredCasAnnotation } from "../../api/keys.ts";
import {
  type CaBundleSource,
  type JsonPatchOperation,
  publishCaBundle,
  reconcileCaBundles,
  type WebhookConfigurationRef,
  type WebhookConfigurations,
} from "../../certs/cabundle.ts";
import {
  type CertificateManager,
  createCertificateManager,
  kubeSecretStore,
  type SecretStore,
} from "../../certs/manager.ts";
import { parseRetiredCas, splitCertificates } from "../../certs/retired-cas.ts";
import { caFromSecret, serviceDnsNames } from "../../certs/rotation.ts";
import { serverSideApply } from "../../kube/apply.ts";
import { napwakeWebhooks } from "../../webhook/registry.ts";
import { createWebhookServer, type WebhookServer } from "../../webhook/server.ts";
import { harnessFieldManager } from "../cluster/bootstrap.ts";
import { injectedCaBundle, webhookInstall } from "../cluster/napwake-install.ts";
import {
  type Clients,
  clusterClients,
  createTestNamespace,
  deleteTestNamespace,
  eventually,
} from "./cluster.ts";

// 198.19.0.10 is test/integration/webhook.test.ts's, .20 webhook-admission.test.ts's.
const serverIp = "198.19.0.21";
const serviceName = "napwake-webhook";
const logger = pino({ level: "silent" });

function manager(
  clients: Clients,
  namespace: string,
  servingValidForMs?: number,
  opts: { caSecret?: string; previousCaGraceMs?: number; secrets?: SecretStore } = {},
): CertificateManager {
  return createCertificateManager({
    secrets: opts.secrets ?? kubeSecretStore(clients.core),
    caSecret: { namespace, name: opts.caSecret ?? "napwake-webhook-ca" },
    dnsNames: serviceDnsNames(namespace, serviceName),
    servingValidForMs,
    previousCaGraceMs: opts.previousCaGraceMs,
    now: () => new Date(),
    logger,
  });
}

const fingerprint = (pem: string | undefined) => new X509Certificate(pem ?? "").fingerprint256;
/** The fingerprints of the CAs in a PEM bundle, in order. */
const cas = (bundle: string | undefined) => splitCertificates(bundle ?? "").map(fingerprint);
const outcomes = (results: { outcome: string }[]) => results.map((r) => r.outcome);
/** The Napwake webhooks, with a lookup that finds the owner `ownerOf` names. */
const webhooksFor = (ownerOf: (name: string) => string | undefined) =>
  napwakeWebhooks({
    lookup: { ownerOf: (_ns, _kind, name) => ownerOf(name) },
    operatorUsername: "system:serviceaccount:napwake-system:napwake-operator",
    now: Date.now,
  });

/** A Deployment the test webhooks' lookup says a ManagedWorkload targets when its name starts `owned-`. */
function ownedDeployment(name: string): V1Deployment {
  return {
    metadata: { name },
    spec: {
      replicas: 1,
      selector: { matchLabels: { app: "a" } },
      template: { metadata: { labels: { app: "a" } }, spec: { containers: [{ name: "a", image: "a" }] } },
    },
  };
}

/** `api` whose server-side applies go through `apply`, given the object and the real apply. */
function withApplies(
  api: WebhookConfigurations,
  apply: (
    ref: WebhookConfigurationRef,
    operations: readonly JsonPatchOperation[],
    real: () => Promise<void>,
  ) => Promise<void>,
): WebhookConfigurations {
  return {
    read: (ref) => api.read(ref),
    patch: (ref, operations) => apply(ref, operations, () => api.patch(ref, operations)),
  };
}

/** The certificate the server presents to a new connection, as the API server would dial it (with SNI). */
function servedCertificate(
  port: number,
  namespace: string,
  caPem: string,
  service = serviceName,
): Promise<X509Certificate> {
  return new Promise((resolve, reject) => {
    const socket = connect({
      host: serverIp,
      port,
      servername: `${service}.${namespace}.svc`,
      ca: caPem,
    });
    socket.on("secureConnect", () => {
      const cert = socket.getPeerX509Certificate();
      socket.end();
      if (cert) resolve(cert);
      else reject(new Error("no peer certificate"));
    });
    socket.on("error", reject);
  });
}

describe("certificate manager on the real API server", () => {
  let clients: Clients;
  let namespace: string;
  let server: WebhookServer | undefined;
  const servers: WebhookServer[] = [];
  const namespaces: string[] = [];
  const managers: CertificateManager[] = [];
  const refs: WebhookConfigurationRef[] = [];

  beforeAll(async () => {
    clients = clusterClients();
    namespace = await createTestNamespace(clients, "certs");
  });

  /**
   * Webhook configurations of their own: by default calling nobody (they select no namespace that exists),
   * or a server on `port` behind `service` for the namespaces given.
   */
  async function installConfigurations(
    name: string,
    calls: { service: string; port: number; onlyNamespaces: string[] } = {
      service: name,
      port: 9,
      onlyNamespaces: [`${namespace}-none`],
    },
  ): Promise<WebhookConfigurationRef[]> {
    const own: WebhookConfigurationRef[] = [
      { kind: "MutatingWebhookConfiguration", name },
      { kind: "ValidatingWebhookConfiguration", name },
    ];
    refs.push(...own);
    await serverSideApply(
      clients.objects,
      webhookInstall({ namespace, configuration: name, ip: serverIp, excludeNamespaces: [], ...calls }),
      harnessFieldManager,
    );
    return own;
  }

  /** One publish of `replica`'s caBundle to `own`, by what it did to each configuration. */
  const publishTo = async (own: WebhookConfigurationRef[], replica: CaBundleSource): Promise<string[]> =>
    outcomes(await publishCaBundle(clients.webhookConfigurations, own, replica));

  /** The CAs the caBundle of every webhook of the configurations `name` trusts (they must all agree). */
  async function published(name: string): Promise<string[]> {
    const bundle = await injectedCaBundle(clients.kc, name);
    return cas(Buffer.from(bundle ?? "", "base64").toString("utf8"));
  }

  afterAll(async () => {
    for (const ref of refs) {
      await clients.objects
        .delete({
          apiVersion: "admissionregistration.k8s.io/v1",
          kind: ref.kind,
          metadata: { name: ref.name },
        })
        .catch(() => undefined);
    }
    for (const m of managers) m.stop();
    await server?.close();
    for (const s of servers) await s.close();
    for (const ns of namespaces) await deleteTestNamespace(clients, ns);
    await deleteTestNamespace(clients, namespace);
  });

  it("shares one CA between replicas that race to create it", async () => {
    const replicas = [manager(clients, namespace), manager(clients, namespace), manager(clients, namespace)];
    managers.push(...replicas);
    await Promise.all(replicas.map((m) => m.start()));
    const cas = new Set(replicas.map((m) => m.caPem()));
    expect(cas.size).toBe(1);
    const secret = await clients.core.readNamespacedSecret({ namespace, name: "napwake-webhook-ca" });
    expect(secret.type).toBe("kubernetes.io/tls");
    const stored = caFromSecret(secret, new Date());
    expect("ca" in stored && stored.ca.certPem).toBe(replicas[0]?.caPem());
  });

  it("serves a rotated certificate without a restart, and the API server accepts it", async () => {
    // 9 s certificates, renewed every 6 s.
    const certificates = manager(clients, namespace, 9_000);
    managers.push(certificates);
    await certificates.start();
    const caPem = certificates.caPem() ?? "";
    const webhooks = webhooksFor((name) => (name.startsWith("owned-") ? "the-owner" : undefined));
    // Short keep-alive: the API server must open new connections, which get the current certificate.
    server = createWebhookServer({
      webhooks,
      certificates,
      logger,
      keepAliveTimeoutMs: 500,
    });
    const { port } = await server.listen(serverIp, 0);
    refs.push(
      { kind: "MutatingWebhookConfiguration", name: `napwake-${namespace}` },
      { kind: "ValidatingWebhookConfiguration", name: `napwake-${namespace}` },
    );
    await serverSideApply(
      clients.objects,
      webhookInstall({
        namespace,
        service: serviceName,
        configuration: `napwake-${namespace}`,
        ip: serverIp,
        port,
        excludeNamespaces: [],
        onlyNamespaces: [namespace],
      }),
      harnessFieldManager,
    );
    await reconcileCaBundles(clients.webhookConfigurations, refs, caPem);

    const first = await servedCertificate(port, namespace, caPem);
    await eventually("the manager rotates the serving certificate", async () => {
      const served = await servedCertificate(port, namespace, caPem);
      return served.serialNumber !== first.serialNumber ? served : undefined;
    });
    // Once the first certificate has expired, only a rotated one can get a stamp through.
    await eventually("the first certificate expires", async () =>
      Date.now() > first.validToDate.getTime() + 1_000 ? true : undefined,
    );
    let attempt = 0;
    const stamped = await eventually("a Deployment is stamped through a rotated certificate", async () => {
      const created = await clients.apps.createNamespacedDeployment({
        namespace,
        body: ownedDeployment(`owned-${attempt++}`),
      });
      return created.metadata?.annotations?.["napwake.dev/managed-by"] ? created : undefined;
    });
    expect(stamped.metadata?.annotations?.["napwake.dev/managed-by"]).toBe("the-owner");
    expect((await servedCertificate(port, namespace, caPem)).serialNumber).not.toBe(first.serialNumber);
  });

  it("a replica created after the CA was replaced publishes the same caBundle, with both CAs, as one that followed it", async () => {
    const caSecret = "napwake-webhook-ca-replaced";
    const name = `napwake-${namespace}-replaced`;
    const own = await installConfigurations(name);
    const first = manager(clients, namespace, undefined, { caSecret });
    managers.push(first);
    await first.start();
    const previous = first.caPem();
    expect(await publishTo(own, first)).toEqual(["updated", "updated"]);

    // Replaced as the docs say: the Secret deleted, `first` creates a new CA at its next resync and follows it.
    await clients.core.deleteNamespacedSecret({ namespace, name: caSecret });
    const followedAt = Date.now();
    await publishCaBundle(clients.webhookConfigurations, own, first);
    const current = first.caPem();
    expect(fingerprint(current)).not.toBe(fingerprint(previous));
    const secret = await clients.core.readNamespacedSecret({ namespace, name: caSecret });
    const recorded = parseRetiredCas(
      secret.metadata?.annotations?.[retiredCasAnnotation],
      new Date(),
      15 * 60_000,
    );
    expect(recorded.retired.map((ca) => fingerprint(ca.pem))).toEqual([fingerprint(previous)]);
    const until = recorded.retired[0]?.until.getTime() ?? 0;
    expect(until).toBeGreaterThanOrEqual(followedAt + 15 * 60_000);
    expect(until).toBeLessThanOrEqual(Date.now() + 15 * 60_000);

    // A replica started now never served from the previous CA, yet publishes it too, until the same deadline.
    const second = manager(clients, namespace, undefined, { caSecret });
    managers.push(second);
    await second.start();
    expect(second.caPem()).toBe(current);
    expect(cas(second.caBundlePem())).toEqual([fingerprint(current), fingerprint(previous)]);
    expect(second.caBundlePem()).toBe(first.caBundlePem());
    expect(await publishTo(own, second)).toEqual(["unchanged", "unchanged"]);
    expect(await publishTo(own, first)).toEqual(["unchanged", "unchanged"]);
    expect(await published(name)).toEqual([fingerprint(current), fingerprint(previous)]);
  });

  it("a replica that creates the CA after the Secret was deleted keeps the CA the webhooks trust until its deadline", async () => {
    const caSecret = "napwake-webhook-ca-recreated";
    const name = `napwake-${namespace}-recreated`;
    const own = await installConfigurations(name);
    const graceMs = 10_000;
    const first = manager(clients, namespace, undefined, { caSecret, previousCaGraceMs: graceMs });
    managers.push(first);
    await first.start();
    const previous = first.caPem();
    await publishCaBundle(clients.webhookConfigurations, own, first);

    // A new replica starts before `first` resyncs: it creates the new CA, and learns of the previous one
    // only from the published caBundle.
    await clients.core.deleteNamespacedSecret({ namespace, name: caSecret });
    const second = manager(clients, namespace, undefined, { caSecret, previousCaGraceMs: graceMs });
    managers.push(second);
    await second.start();
    const current = second.caPem();
    expect(await publishTo(own, second)).toEqual(["updated", "updated"]);
    expect(await published(name)).toEqual([fingerprint(current), fingerprint(previous)]);
    // `first` follows the new CA at its resync, and has nothing to change in the caBundle.
    expect(await publishTo(own, first)).toEqual(["unchanged", "unchanged"]);
    expect(first.caPem()).toBe(current);

    // After the recorded deadline both drop it, and the caBundle published before does not bring it back.
    const secret = await clients.core.readNamespacedSecret({ namespace, name: caSecret });
    const [record] = parseRetiredCas(
      secret.metadata?.annotations?.[retiredCasAnnotation],
      new Date(),
      graceMs,
    ).retired;
    await eventually("the recorded deadline passes", async () =>
      Date.now() > (record?.until.getTime() ?? 0) ? true : undefined,
    );
    expect(await publishTo(own, first)).toEqual(["updated", "updated"]);
    expect(await publishTo(own, second)).toEqual(["unchanged", "unchanged"]);
    expect(await published(name)).toEqual([fingerprint(current)]);
  });

  it("a replica that cannot read the CA Secret publishes nothing, so it does not drop the CA the others switched to", async () => {
    const caSecret = "napwake-webhook-ca-unreadable";
    const name = `napwake-${namespace}-unreadable`;
    const own = await installConfigurations(name);
    const first = manager(clients, namespace, undefined, { caSecret });
    const store = kubeSecretStore(clients.core);
    let reads = true;
    const flaky: SecretStore = {
      ...store,
      read: (ref) => (reads ? store.read(ref) : Promise.reject(new Error("the API server timed out"))),
    };
    const second = manager(clients, namespace, undefined, { caSecret, secrets: flaky });
    managers.push(first, second);
    await first.start();
    await second.start();
    const previous = first.caPem();
    await publishCaBundle(clients.webhookConfigurations, own, first);

    // `first` creates a new CA and publishes both; `second` cannot read the Secret at its resync.
    await clients.core.deleteNamespacedSecret({ namespace, name: caSecret });
    await publishCaBundle(clients.webhookConfigurations, own, first);
    const current = first.caPem();
    expect(await published(name)).toEqual([fingerprint(current), fingerprint(previous)]);
    reads = false;
    expect(await publishTo(own, second)).toEqual(["skipped", "skipped"]);
    expect(await published(name)).toEqual([fingerprint(current), fingerprint(previous)]);

    // Once it reads the Secret again, it follows and publishes the same caBundle.
    reads = true;
    expect(await publishTo(own, second)).toEqual(["unchanged", "unchanged"]);
    expect(second.caPem()).toBe(current);
  });

  it("switches a replica's serving certificate to a replaced CA only once the webhook configurations trust it", async () => {
    const caSecret = "napwake-webhook-ca-switch";
    const service = "napwake-webhook-switch";
    const name = `napwake-${namespace}-switch`;
    // The workloads these webhooks are called for, in a namespace of their own (the rotation test's are
    // called for the test namespace).
    const workloads = await createTestNamespace(clients, "certs-switch");
    namespaces.push(workloads);
    const replica = createCertificateManager({
      secrets: kubeSecretStore(clients.core),
      caSecret: { namespace, name: caSecret },
      dnsNames: serviceDnsNames(namespace, service),
      now: () => new Date(),
      logger,
    });
    managers.push(replica);
    await replica.start();
    const webhooks = webhooksFor((n) => (n.startsWith("owned-") ? "the-owner" : undefined));
    // Short keep-alive: the API server opens new connections, which get the current certificate.
    const switching = createWebhookServer({
      webhooks,
      certificates: replica,
      logger,
      keepAliveTimeoutMs: 500,
    });
    servers.push(switching);
    const { port } = await switching.listen(serverIp, 0);
    const own = await installConfigurations(name, { service, port, onlyNamespaces: [workloads] });
    expect(await publishTo(own, replica)).toEqual(["updated", "updated"]);
    const previous = replica.caPem() ?? "";
    let attempt = 0;
    /** Whether the API server got the mutating webhook's stamp on a new Deployment through the replica. */
    const stamped = async () => {
      const created = await clients.apps.createNamespacedDeployment({
        namespace: workloads,
        body: ownedDeployment(`owned-${attempt++}`),
      });
      return created.metadata?.annotations?.["napwake.dev/managed-by"] === "the-owner" ? true : undefined;
    };
    await eventually("the API server calls the replica's webhooks", stamped);
    /** Whether the API server got the validating webhook's refusal of a malformed annotation (it fails open). */
    const refused = async () => {
      const body = ownedDeployment(`bad-${attempt++}`);
      body.metadata = { ...body.metadata, annotations: { "napwake.dev/paused-from": "zero" } };
      try {
        await clients.apps.createNamespacedDeployment({ namespace: workloads, body });
        return false;
      } catch (error) {
        if (error instanceof ApiException && String(error.body).includes("workloads.validate.napwake.dev")) {
          return true;
        }
        throw error;
      }
    };
    await eventually("the API server calls the replica's validating webhook", async () =>
      (await refused()) ? true : undefined,
    );
    const served = (caPem: string) => servedCertificate(port, namespace, caPem, service);

    // The CA replaced as the docs say (the Secret deleted): the replica creates the new CA at its next resync,
    // whose caBundle apply fails.
    await clients.core.deleteNamespacedSecret({ namespace, name: caSecret });
    const failing = withApplies(clients.webhookConfigurations, async () => {
      throw new Error("the API server timed out");
    });
    await expect(publishCaBundle(failing, own, replica)).rejects.toThrow("the API server timed out");
    const stored = caFromSecret(
      await clients.core.readNamespacedSecret({ namespace, name: caSecret }),
      new Date(),
    );
    const replaced = "ca" in stored ? stored.ca.certPem : "";
    expect(fingerprint(replaced)).not.toBe(fingerprint(previous));
    expect(cas(replica.caBundlePem())).toEqual([fingerprint(replaced), fingerprint(previous)]);
    // It keeps serving from the CA the configurations trust, and the API server keeps calling it.
    expect(await published(name)).toEqual([fingerprint(previous)]);
    expect(replica.caPem()).toBe(previous);
    expect((await served(previous)).checkIssued(new X509Certificate(previous))).toBe(true);
    expect(await stamped()).toBe(true);

    // A publish that reaches the mutating configuration only, then one that fails: the validating webhook
    // trusts the previous CA alone, so the replica keeps it, and the API server keeps calling both webhooks.
    const validatingFails = withApplies(clients.webhookConfigurations, async (ref, _operations, real) => {
      if (ref.kind === "ValidatingWebhookConfiguration") throw new Error("the API server timed out");
      return real();
    });
    await expect(publishCaBundle(validatingFails, own, replica)).rejects.toThrow("the API server timed out");
    await expect(publishCaBundle(failing, own, replica)).rejects.toThrow("the API server timed out");
    expect(replica.caPem()).toBe(previous);
    expect(await refused()).toBe(true);
    expect(await stamped()).toBe(true);

    // The next publish succeeds: the replica switches once both configurations trust the new CA, not before.
    const landed: { trusts: string[]; servingFrom: string }[] = [];
    const recording = withApplies(clients.webhookConfigurations, async (_ref, operations, real) => {
      await real();
      const set = operations.find((o) => o.op === "add" && o.path.endsWith("/caBundle"));
      landed.push({
        trusts: cas(Buffer.from(set && "value" in set ? String(set.value) : "", "base64").toString("utf8")),
        servingFrom: fingerprint(replica.caPem()),
      });
    });
    let landedAtSwitch: number | undefined;
    const unsubscribe = replica.subscribe(() => {
      landedAtSwitch ??= landed.length;
    });
    expect(outcomes(await publishCaBundle(recording, own, replica))).toEqual(["unchanged", "updated"]);
    unsubscribe();
    expect(landed).toEqual([
      { trusts: [fingerprint(replaced), fingerprint(previous)], servingFrom: fingerprint(previous) },
    ]);
    expect(landedAtSwitch).toBe(1);
    expect(await published(name)).toEqual([fingerprint(replaced), fingerprint(previous)]);
    expect(replica.caPem()).toBe(replaced);
    expect((await served(replaced)).checkIssued(new X509Certificate(replaced))).toBe(true);
    await eventually("the API server calls the replica through its certificate from the new CA", stamped);
    expect(await refused()).toBe(true);
  });
});
