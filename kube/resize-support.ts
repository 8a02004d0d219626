import type { ConfigurationOptions, V1APIResourceList } from "@kubernetes/client-node";
import { withinDeadline } from "./abort.ts";
import { type Clock, systemClock } from "./clock.ts";

/** The core API's resource list, as CoreV1Api serves it. */
export type CoreResources = {
  getAPIResources(param?: undefined, options?: ConfigurationOptions): Promise<V1APIResourceList>;
};

/**
 * Whether the API server offers in-place pod resize (the pods/resize subresource, Kubernetes 1.33+). Asked as a
 * leader starts: an API server that does not answer within `timeoutMs` is taken for one without it, so a start
 * never waits on it (a leader that cannot start cannot step down and campaign again either).
 */
export async function inPlaceResizeAvailable(
  core: CoreResources,
  log: { warn(o: object, m: string): void },
  timeoutMs = 10_000,
  clock: Clock = systemClock,
): Promise<boolean> {
  try {
    const resources = await withinDeadline(
      timeoutMs,
      `the API server did not list its core resources within ${timeoutMs} ms`,
      (options) => core.getAPIResources(undefined, options),
      clock,
    );
    return resources.resources.some((r) => r.name === "pods/resize");
  } catch (err) {
    log.warn({ err: String(err) }, "could not tell whether in-place pod resize is available; assuming not");
    return false;
  }
}
