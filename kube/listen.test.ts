import { connect, createServer, type Server } from "node:net";
import { networkInterfaces } from "node:os";
import { afterEach, describe, expect, it } from "vitest";
import { everyInterface, listen, listenOnEveryFamily, reportLaterErrors } from "./listen.ts";

const failing = (code: string) => Object.assign(new Error(`listen ${code}`), { code });

describe("listening on every family", () => {
  it.each([
    {
      name: "falls back to IPv4 where the node has no IPv6",
      host: everyInterface,
      code: "EAFNOSUPPORT",
      tried: ["::", "0.0.0.0"],
    },
    {
      name: "falls back to IPv4 where IPv6 is off on the node",
      host: everyInterface,
      code: "EADDRNOTAVAIL",
      tried: ["::", "0.0.0.0"],
    },
    { name: "does not hide a port in use", host: everyInterface, code: "EADDRINUSE", tried: ["::"] },
    {
      name: "does not move a host that was asked for",
      host: "198.19.0.5",
      code: "EADDRNOTAVAIL",
      tried: ["198.19.0.5"],
    },
  ])("$name", async ({ host, code, tried }) => {
    const hosts: string[] = [];
    const result = listenOnEveryFamily(host, async (on) => {
      hosts.push(on);
      if (hosts.length === 1) throw failing(code);
      return on;
    });
    if (tried.length === 2) await expect(result).resolves.toBe("0.0.0.0");
    else await expect(result).rejects.toThrow(code);
    expect(hosts).toEqual(tried);
  });
});

describe("a server on every interface", () => {
  let server: Server | undefined;
  afterEach(() => server?.close());

  const reaches = (host: string, port: number) =>
    new Promise<boolean>((resolve) => {
      const socket = connect({ host, port }, () => {
        socket.end();
        resolve(true);
      });
      socket.on("error", () => resolve(false));
    });
  const hasIpv6Loopback = Object.values(networkInterfaces())
    .flat()
    .some((a) => a?.address === "::1");

  it("is reached over IPv4, and over IPv6 where the node has it", async () => {
    server = createServer((socket) => socket.end());
    const address = await listenOnEveryFamily(everyInterface, (on) => listen(server as Server, 0, on));
    expect(await reaches("127.0.0.1", address.port)).toBe(true);
    if (hasIpv6Loopback) expect(await reaches("::1", address.port)).toBe(true);
  });

  it("reports what it fails at once listening, rather than ending the process", async () => {
    server = createServer();
    await listen(server, 0, "127.0.0.1");
    const reported: string[] = [];
    reportLaterErrors(server, (err) => reported.push(err.message));
    expect(() => server?.emit("error", failing("EMFILE"))).not.toThrow();
    expect(reported).toEqual(["listen EMFILE"]);
  });
});
