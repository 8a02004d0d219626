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
