import type { V1EndpointSlice, V1Service } from "@kubernetes/client-node";

/** An address one can dial for a Service port. */
export interface Endpoint {
  ip: string;
  port: number;
  /** The pod behind the address, when the slice names it. */
  pod?: string;
}

export const serviceNameLabel = "kubernetes.io/service-name";

/**
 * The ready endpoints for one port of a Service, as kube-proxy would pick them: EndpointSlices labelled
 * with the Service name, endpoints whose `ready` condition is not false, the slice port named like the
 * Service port. `servicePort` is the Service port's number or name.
 */
export function readyEndpoints(
  service: V1Service,
  slices: readonly V1EndpointSlice[],
  servicePort: number | string,
): Endpoint[] {
  const port = service.spec?.ports?.find((p) => p.port === servicePort || p.name === servicePort);
  if (!port) return [];
  // The slice port carries the Service port's name ("" when the Service has a single unnamed port).
  const portName = port.name ?? "";
  const seen = new Set<string>();
  const result: Endpoint[] = [];
  for (const slice of slices) {
    if (slice.metadata?.labels?.[serviceNameLabel] !== service.metadata?.name) continue;
    if (slice.addressType !== "IPv4") continue;
    const slicePort = slice.ports?.find((p) => (p.name ?? "") === portName);
    if (slicePort?.port === undefined) continue;
    for (const endpoint of slice.endpoints ?? []) {
      // Per the EndpointSlice API, an unknown ready condition means ready.
      if (endpoint.conditions?.ready === false) continue;
      for (const ip of endpoint.addresses) {
        const key = `${ip}:${slicePort.port}`;
        if (seen.has(key)) continue;
        seen.add(key);
        const pod = endpoint.targetRef?.kind === "Pod" ? endpoint.targetRef.name : undefined;
        result.push({ ip, port: slicePort.port, ...(pod ? { pod } : {}) });
      }
    }
  }
  return result;
}
