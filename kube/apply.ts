import {
  type KubernetesObject,
  type KubernetesObjectApi,
  loadYaml,
  PatchStrategy,
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
