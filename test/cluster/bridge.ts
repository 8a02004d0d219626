import { connect, createServer, type Server, type Socket } from "node:net";

/**
 * Byte pipes between the host's network namespace and the cluster's: a Unix socket is a file, and both
 * namespaces see the same files. One side listens on the socket and dials inside the cluster; the other
 * listens on a host loopback port and dials the socket.
 */
export function listen(server: Server, target: number | string, host?: string): Promise<Server> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    const done = () => {
      server.off("error", reject);
      resolve(server);
    };
    if (typeof target === "string") server.listen(target, done);
    else server.listen(target, host, done);
  });
}

export interface PipeServer {
  server: Server;
  /** Stops accepting and drops the connections it holds. */
  close(): Promise<void>;
}

/** Accepts connections and pipes each to the socket `dial` opens; a failed dial closes the client. */
export function pipeServer(dial: () => Socket): PipeServer {
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    sockets.add(client);
    client.once("close", () => sockets.delete(client));
    let upstream: Socket;
    try {
      upstream = dial();
    } catch {
      client.destroy();
      return;
    }
    client.pipe(upstream).pipe(client);
    upstream.on("error", () => client.destroy());
    client.on("error", () => upstream.destroy());
    client.once("close", () => upstream.destroy());
    upstream.once("close", () => client.destroy());
  });
  return {
    server,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        for (const socket of sockets) socket.destroy();
      }),
  };
}

export function dialUnix(path: string): () => Socket {
  return () => connect({ path });
}

export function dialTcp(host: string, port: number): () => Socket {
  return () => connect({ host, port });
}
