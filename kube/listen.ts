import type { AddressInfo, Server } from "node:net";

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
