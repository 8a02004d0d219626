import { ApiException, type V1CustomResourceDefinition } from "@kubernetes/client-node";
import { installCrdFile } from "../cluster/napwake-install.ts";
import { repoRoot } from "../cluster/paths.ts";
import type { Clients } from "./cluster.ts";

export { repoRoot };

/** Installs a CRD from a YAML file and waits until it is Established (idempotent; shared by test files). */
export async function installCrd(clients: Clients, path: string): Promise<V1CustomResourceDefinition> {
  const [crd] = await installCrdFile(clients.kc, path);
  if (!crd) throw new Error(`${path} holds no CustomResourceDefinition`);
  return crd;
}

/** The API server's message when `write` is refused; fails the test if it is accepted. */
export async function refusal(write: Promise<unknown>): Promise<string> {
  try {
    await write;
  } catch (err) {
    if (err instanceof ApiException) {
      const body = typeof err.body === "string" ? JSON.parse(err.body) : err.body;
      return String(body?.message ?? err.message);
    }
    throw err;
  }
  throw new Error("the API server accepted a write the test expected it to refuse");
}
