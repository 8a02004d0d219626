import {
  type CustomObjectsApi,
  type KubernetesObject,
  type KubernetesObjectApi,
  loadYaml,
  PatchStrategy,
  setHeaderOptions,
} from "@kubernetes/client-node";

/**
 * Writes `objects` with server-side apply under one field manager. Each object carries only the fields
 * this manager owns; `force` takes over fields another manager set (only for objects we own outright).
 * Objects of kinds the client knows (core kinds, CRDs) must be in the client's model form: read YAML with
 * `loadYaml`/`loadAllYaml`, or pass wire-form objects through `toClientModel` (once: the conversion is not
 * idempotent). Custom resources pass through as they are.
 */
export async function serverSideApply<T extends KubernetesObject>(
  api: KubernetesObjectApi,
  objects: readonly T[],
  fieldManager: string,
  opts: { force?: boolean } = {},
): Promise<T[]> {
  const applied: T[] = [];
  for (const object of objects) {
    applied.push(
      await api.patch(
        object,
        undefined,
        undefined,
        fieldManager,
        opts.force ?? false,
        PatchStrategy.ServerSideApply,
      ),
    );
  }
  return applied;
}

/**
 * The client serialises known kinds through its typed models, which name some fields differently from the
 * wire (`x-kubernetes-validations` is `xKubernetesValidations`, `default` is `_default`): a wire-form object
 * would silently lose them, CRD defaults and CEL rules among them. Reading the object as the client reads
 * YAML turns it into the model form the serialiser expects. Apply it to wire-form objects only, and once.
 */
export function toClientModel<T extends KubernetesObject>(object: T): T {
  return loadYaml<T>(JSON.stringify(object));
}

/** Request options that make a typed client's patch call a server-side apply. */
const serverSideApplyOptions = setHeaderOptions("Content-Type", PatchStrategy.ServerSideApply);

export type CustomResourceApi = Pick<
  CustomObjectsApi,
  "patchNamespacedCustomObjectStatus" | "patchClusterCustomObjectStatus"
>;

/**
 * Server-side applies the status of a custom resource (cluster-scoped when it has no namespace), only if the
 * object is still at the resourceVersion it was decided from (a 409 Conflict otherwise, to retry from a fresher
 * read): a status decided from a lagging cache never overwrites a newer one. Returns the new resourceVersion.
 */
export async function applyStatusIfUnchanged(
  api: CustomResourceApi,
  crd: { group: string; version: string; plural: string },
  object: {
    apiVersion: string;
    kind: string;
    metadata: { name: string; namespace?: string; resourceVersion?: string };
  },
  status: unknown,
  fieldManager: string,
): Promise<string> {
  const { name, namespace, resourceVersion } = object.metadata;
  const request = {
    group: crd.group,
    version: crd.version,
    plural: crd.plural,
    name,
    body: {
      apiVersion: object.apiVersion,
      kind: object.kind,
      metadata: { name, ...(namespace ? { namespace } : {}), resourceVersion },
      status,
    },
    fieldManager,
    force: true,
  };
  const written = (await (namespace
    ? api.patchNamespacedCustomObjectStatus({ ...request, namespace }, serverSideApplyOptions)
    : api.patchClusterCustomObjectStatus(request, serverSideApplyOptions))) as KubernetesObject;
  return written.metadata?.resourceVersion ?? "";
}
