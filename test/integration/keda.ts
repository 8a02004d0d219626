// KEDA in integration tests: its CRD, a ScaledObject on a cron trigger, and reading one back.
import { join } from "node:path";
import { type ScaledObject, scaledObjectApiVersion } from "../../controllers/managedworkload/autoscalers.ts";
import type { Clients } from "./cluster.ts";
import { installCrd } from "./crds.ts";

export const kedaApi = { group: "keda.sh", version: "v1alpha1", plural: "scaledobjects" };

/** KEDA's own ScaledObject CRD, as the kedacore/keda module ships it (copied by test/cluster/build-binaries.sh). */
export async function installKedaCrd(clients: Clients): Promise<void> {
  await installCrd(clients, join(clients.info.binDir, "keda-scaledobjects-crd.yaml"));
}

/** A ScaledObject that scales `target` to `desiredReplicas` from 08:00 to 18:00 UTC, and to zero otherwise. */
export function cronScaledObject(opts: {
  name: string;
  namespace?: string;
  target: string;
  maxReplicas: number;
  desiredReplicas: number;
}) {
  return {
    apiVersion: scaledObjectApiVersion,
    kind: "ScaledObject",
    metadata: { name: opts.name, ...(opts.namespace ? { namespace: opts.namespace } : {}) },
    spec: {
      scaleTargetRef: { name: opts.target },
      minReplicaCount: 0,
      maxReplicaCount: opts.maxReplicas,
      triggers: [
        {
          type: "cron",
          metadata: {
            timezone: "UTC",
            start: "0 8 * * *",
            end: "0 18 * * *",
            desiredReplicas: String(opts.desiredReplicas),
          },
        },
      ],
    },
  };
}

export async function readScaledObject(
  clients: Clients,
  namespace: string,
  name: string,
): Promise<ScaledObject> {
  return (await clients.custom.getNamespacedCustomObject({ ...kedaApi, namespace, name })) as ScaledObject;
}
