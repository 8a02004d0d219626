import { ApiException } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { type Attempt, describeApiError, type FailedRequest } from "./api-errors.ts";

const server = "https://127.0.0.1:6443";
const patchMw: Attempt = {
  verb: "patch",
  resource: "managedworkloads.napwake.dev",
  namespace: "shop",
  name: "web.deployment",
};
const listMw: Attempt = { verb: "list", resource: "managedworkloads.napwake.dev", namespace: null };
const getDeploy: Attempt = { verb: "get", resource: "deployments.apps", namespace: "shop", name: "web" };

describe("describeApiError", () => {
  it.each<[string, FailedRequest, Attempt, string]>([
    [
      "forbidden: names the verb, the resource and how to check",
      {
        code: 403,
        message: "HTTP-Code: 403",
        body: JSON.stringify({ message: 'user "dev" cannot patch resource "managedworkloads"' }),
      },
      patchMw,
      'no permission to patch managedworkloads.napwake.dev web.deployment in namespace shop (user "dev" cannot patch resource "managedworkloads"): ask for RBAC that allows it (check with: kubectl auth can-i patch managedworkloads.napwake.dev -n shop)',
    ],
    [
      "forbidden by an admission webhook: its refusal, not RBAC, which allows the request",
      {
        code: 403,
        message: "HTTP-Code: 403",
        body: JSON.stringify({
          message:
            'admission webhook "validation.gatekeeper.sh" denied the request: [ticket] needs a change ticket',
        }),
      },
      patchMw,
      'could not patch managedworkloads.napwake.dev web.deployment in namespace shop: admission webhook "validation.gatekeeper.sh" denied the request: [ticket] needs a change ticket',
    ],
    [
      "forbidden across namespaces",
      { code: 403, message: "HTTP-Code: 403", body: {} },
      listMw,
      "no permission to list managedworkloads.napwake.dev across all namespaces: ask for RBAC that allows it (check with: kubectl auth can-i list managedworkloads.napwake.dev -A)",
    ],
    [
      "unauthorized",
      { code: 401, message: "HTTP-Code: 401" },
      getDeploy,
      `the API server at ${server} did not accept your credentials (401 Unauthorized): log in again or check your kubeconfig`,
    ],
    [
      "no CRD",
      { code: 404, message: "HTTP-Code: 404" },
      listMw,
      "the API server does not know managedworkloads.napwake.dev: is Napwake installed (its ManagedWorkload CRD)?",
    ],
    [
      "no Rightsizing CRD",
      { code: 404, message: "HTTP-Code: 404" },
      { verb: "list", resource: "rightsizings.napwake.dev", namespace: "shop" },
      "the API server does not know rightsizings.napwake.dev: is Napwake installed (its Rightsizing CRD)?",
    ],
    ["not found", { code: 404, message: "x" }, getDeploy, "deployments.apps web not found in namespace shop"],
    [
      "a ManagedWorkload deleted since it was listed (the CRD is there)",
      { code: 404, message: "HTTP-Code: 404" },
      patchMw,
      "managedworkloads.napwake.dev web.deployment not found in namespace shop",
    ],
    [
      "another status, with the server's message",
      { code: 500, message: "HTTP-Code: 500", body: '{"message":"etcd timeout"}' },
      getDeploy,
      "could not get deployments.apps web in namespace shop: etcd timeout (HTTP 500)",
    ],
    [
      "no connection",
      { message: "connect ECONNREFUSED 127.0.0.1:6443", cause: { code: "ECONNREFUSED" } },
      listMw,
      `cannot reach the API server at ${server}: ECONNREFUSED (connect ECONNREFUSED 127.0.0.1:6443)`,
    ],
  ])("%s", (_, err, attempt, message) => {
    expect(describeApiError(err, attempt, server)).toBe(message);
  });
});

describe("describeApiError, on answers and failures that are not the API's", () => {
  const jsonError = () => {
    try {
      JSON.parse("<html><body>Please log in</body></html>");
    } catch (e) {
      return e as Error;
    }
    throw new Error("parsed");
  };
  it.each<[string, FailedRequest, string]>([
    [
      "a 503 with no body is named by its status, not by client-node's dump of the answer and its headers",
      new ApiException(503, "Unknown API Status Code!", "", { "content-length": "0" }) as FailedRequest,
      "could not list managedworkloads.napwake.dev across all namespaces: HTTP 503 Service Unavailable",
    ],
    [
      "a proxy's HTML page is not printed",
      new ApiException(
        502,
        "Unknown API Status Code!",
        "<html>\n<title>502 Bad Gateway</title>\n</html>",
        {},
      ) as FailedRequest,
      "could not list managedworkloads.napwake.dev across all namespaces: HTTP 502 Bad Gateway",
    ],
    [
      "a plain-text body gives its first line",
      new ApiException(
        500,
        "Unknown API Status Code!",
        "upstream connect error\nreset reason: overflow",
        {},
      ) as FailedRequest,
      "could not list managedworkloads.napwake.dev across all namespaces: upstream connect error (HTTP 500)",
    ],
    [
      "a credential plugin that is not installed is no HTTP status and no unreachable server",
      Object.assign(new Error("spawn gke-gcloud-auth-plugin ENOENT"), { code: "ENOENT" }),
      "could not list managedworkloads.napwake.dev across all namespaces: spawn gke-gcloud-auth-plugin ENOENT",
    ],
    [
      "a credential plugin that fails says why, on one line",
      new Error("error: token expired, run gcloud auth login\n"),
      "could not list managedworkloads.napwake.dev across all namespaces: error: token expired, run gcloud auth login",
    ],
    [
      "an answer that is not JSON (a login page, a wrong server URL) is no unreachable server",
      jsonError(),
      `the server at ${server} did not answer as a Kubernetes API server (a proxy's or login page?): check the kubeconfig's server URL`,
    ],
    [
      "a server that never answers is unreachable, by undici's code",
      { message: "fetch failed", cause: { code: "UND_ERR_HEADERS_TIMEOUT" } },
      `cannot reach the API server at ${server}: UND_ERR_HEADERS_TIMEOUT (fetch failed)`,
    ],
  ])("%s", (_, err, message) => {
    expect(describeApiError(err, listMw, server)).toBe(message);
  });
});
