// The HTTP status of a failed API call, as @kubernetes/client-node reports it (ApiException.code).

/** The status code of an API error, or undefined for anything else (a network error, a bug). */
export function httpCode(err: unknown): number | undefined {
  const code = typeof err === "object" && err !== null ? (err as { code?: unknown }).code : undefined;
  return typeof code === "number" ? code : undefined;
}
