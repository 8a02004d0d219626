import type { AddressInfo, Server, Socket } from "node:net";

/**
 * Starts `server` listening on `port` (on `host`, or on every interface) and resolves with the address it took.
 * A port in use rejects, rather than surfacing as an unhandled 'error' event.
 */
export function listen(server: Server, port: number, host?: string): Promise<AddressInfo> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    const listening = () => {
      server.off("error", reject);
      resolve(server.address() as AddressInfo);
    };
    if (host === undefined) server.listen(port, listening);
    else server.listen(port, host, listening);
  });
}

/**
 * The host that means every interface, IPv6 and IPv4 (a dual-stack socket): the API server and kubelet reach a
 * pod on whichever family the cluster gives it. Where the node has no IPv6, `listenOnEveryFamily` falls back to
 * 0.0.0.0, as Node does for a server given no host.
 */
export const everyInterface = "::";

/** Errors that say the node has no IPv6 to listen on. */
const noIpv6 = new Set(["EAFNOSUPPORT", "EADDRNOTAVAIL"]);

/** `listenOn(host)`, or on 0.0.0.0 when `host` is every interface and the node has no IPv6. */
export async function listenOnEveryFamily<T>(
  host: string,
  listenOn: (host: string) => Promise<T>,
): Promise<T> {
  try {
    return await listenOn(host);
  } catch (err) {
    const code = (err as { code?: unknown } | null)?.code;
    if (host === everyInterface && typeof code === "string" && noIpv6.has(code)) return listenOn("0.0.0.0");
    throw err;
  }
}

/**
 * Reports what a listening server fails at later (`accept` with no file descriptors left, EMFILE): with no
 * listener, Node throws such an 'error' event, which would end the process, while the server goes on listening.
 */
export function reportLaterErrors(server: Server, report: (err: Error) => void): void {
  server.on("error", report);
}

/**
 * Every connection `server` has, from its first byte, to end at a shutdown's deadline: `closeAllConnections`
 * leaves out one still in its TLS handshake, which would hold `close()` until the pod is killed.
 */
export function trackConnections(server: Server): { destroyAll(): void } {
  const sockets = new Set<Socket>();
  server.on("connection", (socket: Socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  return {
    destroyAll() {
      for (const socket of sockets) socket.destroy();
    },
  };
}
