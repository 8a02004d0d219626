import { readFile } from "node:fs/promises";
import { AuthenticationV1Api, AuthorizationV1Api, RbacAuthorizationV1Api } from "@kubernetes/client-node";
import pino from "pino";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { issueCertificate } from "../../certs/pki.ts";
import { createMetrics } from "../../kube/metrics.ts";
import { subjectAccessReviewAuthorizer, tokenReviewAuthenticator } from "../../kube/metrics-auth.ts";
import { createMetricsServer, type MetricsServer } from "../../kube/metrics-server.ts";
import { httpsGet } from "../cluster/probe.ts";
import {
  type Clients,
  clusterClients,
  createTestNamespace,
  deleteTestNamespace,
  eventually,
} from "./cluster.ts";

// An address of the test range 198.19.0.0/24 (test/cluster/layout.ts) no other test listens on:
// .10 is webhook.test.ts's, .20 webhook-admission.test.ts's, .21 certs-manager.test.ts's.
const serverIp = "198.19.0.30";

/** The metrics server in the test process, its TokenReviews and SubjectAccessReviews answered by the real API server. */
describe("the metrics endpoint authenticates and authorizes scrapers with the API server", () => {
  let clients: Clients;
  let rbac: RbacAuthorizationV1Api;
  let namespace: string;
  let server: MetricsServer;
  let port: number;
  let caPem: string;
  const tokens: Record<"reader" | "stranger", string> = { reader: "", stranger: "" };
  const clusterRole = () => `napwake-metrics-test-${namespace}`;

  beforeAll(async () => {
    clients = clusterClients();
    rbac = clients.kc.makeApiClient(RbacAuthorizationV1Api);
    namespace = await createTestNamespace(clients, "metrics-server");
    const ca = {
      certPem: await readFile(clients.info.caCert, "utf8"),
      keyPem: await readFile(clients.info.caKey, "utf8"),
    };
    caPem = ca.certPem;
    const serving = issueCertificate(ca, {
      commonName: "napwake-metrics",
      dnsNames: ["napwake-metrics.napwake-system.svc"],
      ipAddresses: [serverIp],
      usage: "server",
      notBefore: new Date(),
      validForMs: 3600_000,
    });

    const metrics = createMetrics({ workloadsByPhase: () => ({ Awake: 2, Paused: 1 }) });
    metrics.queueMetrics("managedworkload").reconciled("done", "wake", 12);
    server = createMetricsServer({
      metrics,
      certificates: { current: () => serving, subscribe: () => () => undefined },
      authenticator: tokenReviewAuthenticator(clients.kc.makeApiClient(AuthenticationV1Api)),
      authorizer: subjectAccessReviewAuthorizer(clients.kc.makeApiClient(AuthorizationV1Api)),
      logger: pino({ level: "silent" }),
    });
    port = (await server.listen(serverIp, 0)).port;

    await rbac.createClusterRole({
      body: {
        metadata: { name: clusterRole() },
        rules: [{ nonResourceURLs: ["/metrics"], verbs: ["get"] }],
      },
    });
    for (const name of ["reader", "stranger"] as const) {
      await clients.core.createNamespacedServiceAccount({ namespace, body: { metadata: { name } } });
    }
    await rbac.createClusterRoleBinding({
      body: {
        metadata: { name: clusterRole() },
        roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: clusterRole() },
        subjects: [{ kind: "ServiceAccount", name: "reader", namespace }],
      },
    });
    for (const name of ["reader", "stranger"] as const) {
      const request = await clients.core.createNamespacedServiceAccountToken({
        name,
        namespace,
        body: { spec: { expirationSeconds: 600 } },
      });
      tokens[name] = request.status?.token ?? "";
    }
  });

  afterAll(async () => {
    await server?.close();
    await rbac?.deleteClusterRoleBinding({ name: clusterRole() }).catch(() => undefined);
    await rbac?.deleteClusterRole({ name: clusterRole() }).catch(() => undefined);
    if (namespace) await deleteTestNamespace(clients, namespace);
  });

  const scrape = (authorization?: string) =>
    httpsGet(
      `https://${serverIp}:${port}/metrics`,
      { ca: caPem },
      { headers: authorization ? { authorization } : {} },
    );

  it("serves the metrics to a service account bound to get /metrics", async () => {
    expect(tokens.reader).not.toBe("");
    // RBAC reaches the authorizer's cache a moment after the binding is created.
    const reply = await eventually("a 200 for the reader", async () => {
      const r = await scrape(`Bearer ${tokens.reader}`);
      return r.status === 200 ? r : undefined;
    });
    expect(reply.body).toContain("napwake_reconcile_total");
    expect(reply.body).toContain('napwake_workloads{phase="Paused"} 1');
    expect(reply.body).toContain("process_cpu_user_seconds_total");
  });

  it("refuses a valid token whose user may not get /metrics with 403", async () => {
    expect(tokens.stranger).not.toBe("");
    expect((await scrape(`Bearer ${tokens.stranger}`)).status).toBe(403);
  });

  it.each([
    ["no Authorization header", undefined],
    ["a garbage token", "Bearer not-a-token"],
    ["a token that looks like a JWT but is forged", "Bearer eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln"],
    ["Basic credentials", "Basic YWRtaW46YWRtaW4="],
  ])("refuses %s with 401", async (_what, authorization) => {
    expect((await scrape(authorization)).status).toBe(401);
  });
});
