import { type KubernetesObject, type KubernetesObjectApi, PatchStrategy } from "@kubernetes/client-node";

/**
 * Writes `objects` with server-side apply under one field manager. Each object carries only the fields
 * this manager owns; `force` takes over fields another manager set (only for objects we own outright).
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
