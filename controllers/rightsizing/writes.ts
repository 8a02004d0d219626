import type { CustomObjectsApi, KubernetesObjectApi } from "@kubernetes/client-node";
import { withOwnConditions } from "../../api/conditions.ts";
import { rightsizingConditionTypes } from "../../api/keys.ts";
import {
  type Rightsizing,
  type RightsizingStatus,
  rightsizingCrd,
  rightsizingName,
} from "../../api/rightsizing.ts";
import {
  type RightsizingPolicy,
  type RightsizingPolicyStatus,
  rightsizingPolicyPlural,
} from "../../api/rightsizingpolicy.ts";
import { applyStatusIfUnchanged, serverSideApply } from "../../kube/apply.ts";
import { httpCode } from "../../kube/errors.ts";
import type { CoveredWorkload } from "./coverage.ts";
import { policyConditionType } from "./policy-status.ts";

/** Every write the rightsizing controller makes. None of them touches a workload. */
export interface RightsizingWrites {
  /** Creates (or takes over) the workload's Rightsizing object, owned by the workload. */
  create(workload: CoveredWorkload): Promise<Rightsizing>;
  /** Conditional on the version decided from; returns the new resourceVersion. */
  writeStatus(object: Rightsizing, status: RightsizingStatus): Promise<string>;
  remove(namespace: string, name: string): Promise<void>;
  /** A RightsizingPolicy's status, conditional on the version decided from; returns the new resourceVersion. */
  writePolicyStatus(policy: RightsizingPolicy, status: RightsizingPolicyStatus): Promise<string>;
}

export function rightsizingWrites(clients: {
  custom: CustomObjectsApi;
  objects: KubernetesObjectApi;
  fieldManager: string;
}): RightsizingWrites {
  const { custom, objects, fieldManager } = clients;
  const crd = { group: rightsizingCrd.group, version: rightsizingCrd.version, plural: rightsizingCrd.plural };
  return {
    async create(w) {
      const name = rightsizingName(w.kind, w.name);
      const [applied] = await serverSideApply(
        objects,
        [
          {
            apiVersion: rightsizingCrd.apiVersion,
            kind: rightsizingCrd.kind,
            metadata: {
              name,
              namespace: w.namespace,
              ownerReferences: [
                { apiVersion: "apps/v1", kind: w.kind, name: w.name, uid: w.uid, blockOwnerDeletion: false },
              ],
            },
            spec: { targetRef: { kind: w.kind, name: w.name } },
          },
        ],
        fieldManager,
        { force: true },
      );
      return applied as unknown as Rightsizing;
    },
    writeStatus: (object, status) =>
      applyStatusIfUnchanged(
        custom,
        crd,
        object,
        withOwnConditions(status, rightsizingConditionTypes),
        fieldManager,
      ),
    writePolicyStatus: (policy, status) =>
      applyStatusIfUnchanged(
        custom,
        { group: crd.group, version: crd.version, plural: rightsizingPolicyPlural },
        policy,
        withOwnConditions(status, [policyConditionType]),
        fieldManager,
      ),
    async remove(namespace, name) {
      try {
        await custom.deleteNamespacedCustomObject({ ...crd, namespace, name });
      } catch (err) {
        if (httpCode(err) !== 404) throw err;
      }
    },
  };
}
