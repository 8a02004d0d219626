import { generateKeyPairSync } from "node:crypto";
import { mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { createCertificateAuthority, issueCertificate, type KeyPair } from "../../certs/pki.ts";
import { type ClusterPaths, network } from "./layout.ts";

const year = 365 * 24 * 3600_000;

export interface ClusterPki {
  caCert: string;
  caKey: string;
  apiServerCert: string;
  apiServerKey: string;
  frontProxyCaCert: string;
  frontProxyClientCert: string;
  frontProxyClientKey: string;
  serviceAccountKey: string;
  serviceAccountPub: string;
  /** A client identity per component, so RBAC sees who does what. */
  clients: Record<ClientName, { cert: string; key: string }>;
}

export type ClientName = "admin" | "controller-manager" | "scheduler" | "kwok" | "metrics-server";

const clientSubjects: Record<ClientName, { commonName: string; organizations?: string[] }> = {
  admin: { commonName: "napwake-admin", organizations: ["system:masters"] },
  "controller-manager": { commonName: "system:kube-controller-manager" },
  scheduler: { commonName: "system:kube-scheduler" },
  // kwok writes node and pod status for every fake kubelet.
  kwok: { commonName: "kwok-controller", organizations: ["system:masters"] },
  "metrics-server": { commonName: "metrics-server", organizations: ["system:masters"] },
};

/** Creates the cluster's CAs, serving and client certificates and the service-account key pair. */
export async function writeClusterPki(paths: ClusterPaths, now: Date): Promise<ClusterPki> {
  await mkdir(paths.pki, { recursive: true });
  const file = (name: string) => join(paths.pki, name);
  const save = async (name: string, pair: KeyPair) => {
    await writeFile(file(`${name}.crt`), pair.certPem);
    await writeFile(file(`${name}.key`), pair.keyPem, { mode: 0o600 });
    return { cert: file(`${name}.crt`), key: file(`${name}.key`) };
  };

  const ca = createCertificateAuthority({ commonName: "napwake-local-ca", notBefore: now, validForMs: year });
  const frontProxyCa = createCertificateAuthority({
    commonName: "napwake-front-proxy-ca",
    notBefore: now,
    validForMs: year,
  });
  const caFiles = await save("ca", ca);
  const frontProxyCaFiles = await save("front-proxy-ca", frontProxyCa);
  const apiServer = await save(
    "apiserver",
    issueCertificate(ca, {
      commonName: "kube-apiserver",
      dnsNames: ["localhost", "kubernetes", "kubernetes.default", "kubernetes.default.svc"],
      ipAddresses: ["127.0.0.1", network.apiServerIp, network.kubernetesServiceIp],
      usage: "server",
      notBefore: now,
      validForMs: year,
    }),
  );
  const frontProxyClient = await save(
    "front-proxy-client",
    issueCertificate(frontProxyCa, {
      commonName: "front-proxy-client",
      usage: "client",
      notBefore: now,
      validForMs: year,
    }),
  );
  const clients = {} as ClusterPki["clients"];
  for (const [name, subject] of Object.entries(clientSubjects) as [
    ClientName,
    (typeof clientSubjects)[ClientName],
  ][]) {
    clients[name] = await save(
      `client-${name}`,
      issueCertificate(ca, { ...subject, usage: "client", notBefore: now, validForMs: year }),
    );
  }

  const sa = generateKeyPairSync("rsa", { modulusLength: 2048 });
  await writeFile(file("sa.key"), sa.privateKey.export({ type: "pkcs1", format: "pem" }), { mode: 0o600 });
  await writeFile(file("sa.pub"), sa.publicKey.export({ type: "spki", format: "pem" }));

  return {
    caCert: caFiles.cert,
    caKey: caFiles.key,
    apiServerCert: apiServer.cert,
    apiServerKey: apiServer.key,
    frontProxyCaCert: frontProxyCaFiles.cert,
    frontProxyClientCert: frontProxyClient.cert,
    frontProxyClientKey: frontProxyClient.key,
    serviceAccountKey: file("sa.key"),
    serviceAccountPub: file("sa.pub"),
    clients,
  };
}

/** A kubeconfig that embeds its files' paths; `server` decides which address it dials. */
export function kubeconfigYaml(opts: {
  server: string;
  caCert: string;
  clientCert: string;
  clientKey: string;
}): string {
  return `apiVersion: v1
kind: Config
clusters:
- name: napwake-local
  cluster:
    server: ${opts.server}
    certificate-authority: ${opts.caCert}
contexts:
- name: napwake-local
  context:
    cluster: napwake-local
    user: napwake-local
    namespace: default
current-context: napwake-local
users:
- name: napwake-local
  user:
    client-certificate: ${opts.clientCert}
    client-key: ${opts.clientKey}
`;
}
