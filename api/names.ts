import { createHash } from "node:crypto";

/** The longest object name the API server takes (a DNS subdomain). */
export const MAX_NAME_LENGTH = 253;

/**
 * `<workload>.<kind in lower case>`, the name of an object that stands for one workload (its ManagedWorkload by
 * opt-in, its Rightsizing): a Deployment and a StatefulSet may share a name. A workload name too long for that is
 * cut and given a hash of the whole, so the name stays valid and the workload's own.
 */
export function workloadObjectName(kind: string, workload: string): string {
  const suffix = `.${kind.toLowerCase()}`;
  if (workload.length + suffix.length <= MAX_NAME_LENGTH) return `${workload}${suffix}`;
  const hash = createHash("sha256").update(`${kind}/${workload}`).digest("hex").slice(0, 10);
  return `${endAlphanumeric(workload.slice(0, MAX_NAME_LENGTH - suffix.length - hash.length - 1))}-${hash}${suffix}`;
}

/** A cut name that ends as a DNS name must: not in "." or "-". */
export function endAlphanumeric(cut: string): string {
  return cut.replace(/[.-]+$/, "");
}
