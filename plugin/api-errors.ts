/** What went wrong with a request to the API server, in words a person can act on. Pure. */
import { STATUS_CODES } from "node:http";

/** The request that failed: `kubectl auth can-i <verb> <resource> -n <namespace>` checks the same. */
export interface Attempt {
  verb: "get" | "list" | "patch";
  /** Plural, with its group unless core/apps: `managedworkloads.napwake.dev`, `deployments.apps`. */
  resource: string;
  namespace: string | null;
  name?: string;
}

/**
 * The parts of an error we look at: from @kubernetes/client-node (ApiException: an HTTP status `code`), from the
 * network (a string `code` or `cause.code`), from a kubeconfig's credential plugin, or from parsing an answer.
 */
export interface FailedRequest {
  code?: number | string;
  body?: unknown;
  message: string;
  name?: string;
  cause?: unknown;
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
  }
  if (typeof err.code === "number") {
    // Not client-node's message: it holds the whole answer, headers and all.
    const named = `${err.code} ${STATUS_CODES[err.code] ?? ""}`.trim();
    return `could not ${attempt.verb} ${what} ${where}: ${reason ? `${reason} (HTTP ${err.code})` : `HTTP ${named}`}`;
  }
  const network = networkCode(err);
  if (network) return `cannot reach the API server at ${server}: ${network} (${firstLine(err.message)})`;
  if (err.name === "SyntaxError") {
    return `the server at ${server} did not answer as a Kubernetes API server (a proxy's or login page?): check the kubeconfig's server URL`;
  }
  // No answer to read: most often the kubeconfig's credential plugin (exec) failed, and says why.
  return `could not ${attempt.verb} ${what} ${where}: ${firstLine(err.message)}`;
}

/** The `message` of a Kubernetes Status in the body, or the first line of a short plain-text body; else "". */
function serverMessage(body: unknown): string {
  let parsed = body;
  if (typeof body === "string") {
    try {
      parsed = JSON.parse(body);
    } catch {
      const text = firstLine(body);
      return text.startsWith("<") ? "" : text;
    }
  }
  const message = (parsed as { message?: unknown } | null)?.message;
  return typeof message === "string" ? message : "";
}

/** A failure to connect or to hear back: its system or undici code (ECONNREFUSED, ENOTFOUND, UND_ERR_*). */
function networkCode(err: FailedRequest): string | undefined {
  const cause = (err.cause as { code?: unknown } | undefined)?.code;
  const code = typeof cause === "string" ? cause : typeof err.code === "string" ? err.code : undefined;
  return code && code !== "ENOENT" && /^(E[A-Z]+|UND_ERR_[A-Z_]+)$/.test(code) ? code : undefined;
}

function firstLine(text: string): string {
  const line = text.trim().split("\n")[0] ?? "";
  return line.length > 200 ? `${line.slice(0, 200)}…` : line;
}
