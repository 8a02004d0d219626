/** What went wrong with a request to the API server, in words a person can act on. Pure. */

/** The request that failed: `kubectl auth can-i <verb> <resource> -n <namespace>` checks the same. */
export interface Attempt {
  verb: "get" | "list" | "patch";
  /** Plural, with its group unless core/apps: `managedworkloads.napwake.dev`, `deployments.apps`. */
  resource: string;
  namespace: string | null;
  name?: string;
}

/** The parts of an error from @kubernetes/client-node (ApiException) or from the network we look at. */
export interface FailedRequest {
  code?: number;
  body?: unknown;
  message: string;
  cause?: { code?: string };
}

/** Napwake's own resources: a 404 on one of them means its CRD is missing, not an object. */
const napwakeCrds: Record<string, string> = {
  "managedworkloads.napwake.dev": "ManagedWorkload",
  "rightsizings.napwake.dev": "Rightsizing",
};

export function describeApiError(err: FailedRequest, attempt: Attempt, server: string): string {
  const where = attempt.namespace === null ? "across all namespaces" : `in namespace ${attempt.namespace}`;
  const what = attempt.name ? `${attempt.resource} ${attempt.name}` : attempt.resource;
  const reason = serverMessage(err.body);
  switch (err.code) {
    case 401:
      return `the API server at ${server} did not accept your credentials (401 Unauthorized): log in again or check your kubeconfig`;
    case 403: {
      // A validating webhook's refusal comes as a 403 too (controller-runtime's, Gatekeeper's); RBAC allows it.
      if (reason.startsWith("admission webhook"))
        return `could not ${attempt.verb} ${what} ${where}: ${reason}`;
      const check = `kubectl auth can-i ${attempt.verb} ${attempt.resource}${attempt.namespace === null ? " -A" : ` -n ${attempt.namespace}`}`;
      return `no permission to ${attempt.verb} ${what} ${where}${reason ? ` (${reason})` : ""}: ask for RBAC that allows it (check with: ${check})`;
    }
    case 404: {
      // A list that finds no resource means the CRD is missing; a named object missing is just that.
      const crd = attempt.name ? undefined : napwakeCrds[attempt.resource];
      return crd
        ? `the API server does not know ${attempt.resource}: is Napwake installed (its ${crd} CRD)?`
        : `${what} not found ${where}`;
    }
    case undefined:
      return `cannot reach the API server at ${server}: ${networkReason(err)}`;
    default:
      return `could not ${attempt.verb} ${what} ${where}: ${reason || err.message} (HTTP ${err.code})`;
  }
}

function serverMessage(body: unknown): string {
  let parsed = body;
  if (typeof body === "string") {
    try {
      parsed = JSON.parse(body);
    } catch {
      return body;
    }
  }
  const message = (parsed as { message?: unknown } | null)?.message;
  return typeof message === "string" ? message : "";
}

function networkReason(err: FailedRequest): string {
  return err.cause?.code ? `${err.cause.code} (${err.message})` : err.message;
}
