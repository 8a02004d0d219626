import type { AdmissionDecision, AdmissionRequest } from "./admission.ts";
import { namespaceMetadataProblems } from "./metadata-rules.ts";

/** Validating: a Namespace's malformed or unread `napwake.dev/` metadata is refused with the fix. */
export function validateNamespace(request: AdmissionRequest): AdmissionDecision {
  if (request.kind.group !== "" || request.kind.kind !== "Namespace" || !request.object)
    return { allowed: true };
  const old = request.operation === "UPDATE" ? request.oldObject?.metadata : undefined;
  const problems = namespaceMetadataProblems(request.object.metadata, old);
  if (!problems.length) return { allowed: true };
  const name = request.object.metadata?.name || request.name || "(generated name)";
  return { allowed: false, code: 422, message: `Napwake refuses Namespace ${name}: ${problems.join("; ")}` };
}
