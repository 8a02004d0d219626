import jsonpatch, { type Operation } from "fast-json-patch";

/** The parts of a Kubernetes object the handlers read. Everything else is carried along untouched. */
export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata?: {
    name?: string;
    generateName?: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    [key: string]: unknown;
  };
  [key: string]: unknown;
}

export type AdmissionOperation = "CREATE" | "UPDATE" | "DELETE" | "CONNECT";

/** `request` of an AdmissionReview v1 (the fields Napwake reads). */
export interface AdmissionRequest {
  uid: string;
  kind: { group: string; version: string; kind: string };
  resource: { group: string; version: string; resource: string };
  subResource?: string;
  name?: string;
  namespace?: string;
  operation: AdmissionOperation;
  userInfo: { username?: string; uid?: string; groups?: string[] };
  object?: KubeObject | null;
  oldObject?: KubeObject | null;
  dryRun?: boolean;
}

/** What a handler decides. A mutating handler's patch is computed from a mutated copy (see `mutationPatch`). */
export type AdmissionDecision =
  | { allowed: true; patch?: Operation[]; warnings?: string[] }
  | { allowed: false; code: number; message: string; warnings?: string[] };

export interface AdmissionResponse {
  uid: string;
  allowed: boolean;
  status?: { code: number; message: string };
  patchType?: "JSONPatch";
  /** base64 of the JSON Patch. */
  patch?: string;
  warnings?: string[];
}

export interface AdmissionReviewResponse {
  apiVersion: "admission.k8s.io/v1";
  kind: "AdmissionReview";
  response: AdmissionResponse;
}

export const admissionReviewVersion = "admission.k8s.io/v1";

const operations = new Set<string>(["CREATE", "UPDATE", "DELETE", "CONNECT"]);

/**
 * Checks that a request body is an AdmissionReview v1 with a request the handlers can read. Returns the
 * request, or a message for a 400 that says what is wrong.
 */
export function parseAdmissionReview(body: unknown): { request: AdmissionRequest } | { error: string } {
  if (!isRecord(body)) return { error: "the body must be a JSON object: an AdmissionReview" };
  if (body.apiVersion !== admissionReviewVersion) {
    return {
      error: `apiVersion must be ${admissionReviewVersion}, got ${JSON.stringify(body.apiVersion)}; list only "v1" in admissionReviewVersions`,
    };
  }
  if (body.kind !== "AdmissionReview") {
    return { error: `kind must be AdmissionReview, got ${JSON.stringify(body.kind)}` };
  }
  const request = body.request;
  if (!isRecord(request)) return { error: "request is missing: an AdmissionReview must carry a request" };
  if (typeof request.uid !== "string" || request.uid === "") {
    return { error: "request.uid must be a non-empty string" };
  }
  if (typeof request.operation !== "string" || !operations.has(request.operation)) {
    return { error: `request.operation must be one of ${[...operations].join(", ")}` };
  }
  if (!isRecord(request.kind) || typeof request.kind.kind !== "string") {
    return { error: "request.kind must be a group/version/kind object" };
  }
  if (!isRecord(request.resource) || typeof request.resource.resource !== "string") {
    return { error: "request.resource must be a group/version/resource object" };
  }
  const needsObject = request.operation === "CREATE" || request.operation === "UPDATE";
  if (needsObject && !isRecord(request.object)) {
    return { error: `request.object must be an object for ${request.operation}` };
  }
  if (request.operation === "UPDATE" && !isRecord(request.oldObject)) {
    return { error: "request.oldObject must be an object for UPDATE" };
  }
  if (request.userInfo !== undefined && !isRecord(request.userInfo)) {
    return { error: "request.userInfo must be an object" };
  }
  return {
    request: { ...request, userInfo: request.userInfo ?? {} } as unknown as AdmissionRequest,
  };
}

/** The AdmissionReview answering `uid` with `decision`. An empty patch is left out. */
export function admissionReview(uid: string, decision: AdmissionDecision): AdmissionReviewResponse {
  const response: AdmissionResponse = { uid, allowed: decision.allowed };
  if (decision.allowed) {
    if (decision.patch?.length) {
      response.patchType = "JSONPatch";
      response.patch = Buffer.from(JSON.stringify(decision.patch)).toString("base64");
    }
  } else {
    response.status = { code: decision.code, message: decision.message };
  }
  if (decision.warnings?.length) response.warnings = decision.warnings;
  return { apiVersion: admissionReviewVersion, kind: "AdmissionReview", response };
}

/**
 * The JSON Patch that turns `original` into `mutated`. Handlers mutate a deep copy (`structuredClone`) and
 * let this compute the patch: never hand-written operations.
 */
export function mutationPatch(original: KubeObject, mutated: KubeObject): Operation[] {
  return jsonpatch.compare(original, mutated);
}

/** Applies a patch to a copy of `object`: what the API server does with a mutating webhook's answer. */
export function applyMutation<T extends KubeObject>(object: T, patch: readonly Operation[]): T {
  return jsonpatch.applyPatch(structuredClone(object), [...patch], true, false).newDocument;
}

export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}
