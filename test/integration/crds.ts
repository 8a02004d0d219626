import { readFile } from "node:fs/promises";
import { join } from "node:path";
import {
  ApiException,
  ApiextensionsV1Api,
  loadYaml,
  type V1CustomResourceDefinition,
} from "@kubernetes/client-node";
import { fieldManager } from "../../api/keys.ts";
import { serverSideApply } from "../../kube/apply.ts";
import { type Clients, eventually } from "./cluster.ts";

/** The repository's root, for manifests. */
export const repoRoot = join(import.meta.dirname, "../..");

/**
 * Installs a CRD from a YAML file and waits until it is Established. CRDs are cluster-scoped and shared by
 * every test file, so this is idempotent: a forced server-side apply under Napwake's field manager.
 */
export async function installCrd(clients: Clients, path: string): Promise<V1CustomResourceDefinition> {
  // loadYaml, not a plain YAML parse: the client serializes through its typed models, which drop keys they
  // do not know by their wire name (`default`, `x-kubernetes-validations`) from a plain object.
  const crd = loadYaml<V1CustomResourceDefinition>(await readFile(path, "utf8"));
  const name = crd.metadata?.name ?? "";
  await serverSideApply(clients.objects, [crd], fieldManager, { force: true });
  const apiext = clients.kc.makeApiClient(ApiextensionsV1Api);
  return eventually(`CRD ${name} Established`, async () => {
    const live = await apiext.readCustomResourceDefinition({ name });
    const established = live.status?.conditions?.some((c) => c.type === "Established" && c.status === "True");
    return established ? live : undefined;
  });
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
