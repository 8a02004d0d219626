import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeAll, describe, expect, it } from "vitest";
import { createCertificateAuthority, issueCertificate, type KeyPair } from "../certs/pki.ts";
import { type FileCertificateSource, fileCertificateSource, keyPairProblem } from "./file-certificates.ts";

const silent = { info: () => undefined, warn: () => undefined, error: () => undefined };
const pki = { randomSerial: () => "01", keyBits: 1024 };

function serving(ca: KeyPair): KeyPair {
  return issueCertificate(
    ca,
    {
      commonName: "napwake-webhook",
      dnsNames: ["napwake-webhook"],
      usage: "server",
      notBefore: new Date(),
      validForMs: 3600_000,
    },
    pki,
  );
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 10));
  expect(check()).toBe(true);
}

describe("fileCertificateSource", () => {
  let ca: KeyPair;
  let first: KeyPair;
  let second: KeyPair;
  let dir: string;
  let source: FileCertificateSource | undefined;

  beforeAll(() => {
    ca = createCertificateAuthority(
      { commonName: "test-ca", notBefore: new Date(), validForMs: 3600_000 },
      pki,
    );
    first = serving(ca);
    second = serving(ca);
  });

  afterEach(async () => {
    source?.stop();
    await rm(dir, { recursive: true, force: true });
  });

  const write = async (pair: KeyPair) => {
    await writeFile(join(dir, "tls.crt"), pair.certPem);
    await writeFile(join(dir, "tls.key"), pair.keyPem);
  };

  it("loads tls.crt and tls.key, and reloads and tells listeners when they change", async () => {
    dir = await mkdtemp(join(tmpdir(), "napwake-tls-"));
    await write(first);
    source = fileCertificateSource({ dir, logger: silent, pollMs: 20 });
    let changes = 0;
    source.subscribe(() => changes++);
    await source.start();
    expect(source.current()).toEqual(first);
    await write(second);
    await until(() => source?.current()?.certPem === second.certPem);
    expect(source.current()).toEqual(second);
    expect(changes).toBe(2);
  });

  it("neither watches nor polls once stopped while its first read was under way", async () => {
    dir = await mkdtemp(join(tmpdir(), "napwake-tls-"));
    await write(first);
    source = fileCertificateSource({ dir, logger: silent, pollMs: 20 });
    let changes = 0;
    source.subscribe(() => changes++);
    const starting = source.start();
    source.stop();
    await starting;
    const before = changes;
    await write(second);
    // Ten polls' worth: a source still polling would have read the new pair by now.
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(changes).toBe(before);
    expect(source.current()?.certPem).not.toBe(second.certPem);
  });

  it("is not loaded while the files are missing, and picks them up when they appear", async () => {
    dir = await mkdtemp(join(tmpdir(), "napwake-tls-"));
    source = fileCertificateSource({ dir, logger: silent, pollMs: 20 });
    await source.start();
    expect(source.current()).toBeUndefined();
    await write(first);
    await until(() => source?.current() !== undefined);
  });

  it("keeps the previous pair while the key does not match the certificate", async () => {
    dir = await mkdtemp(join(tmpdir(), "napwake-tls-"));
    await write(first);
    source = fileCertificateSource({ dir, logger: silent, pollMs: 20 });
    await source.start();
    await writeFile(join(dir, "tls.crt"), second.certPem);
    await new Promise((r) => setTimeout(r, 100));
    expect(source.current()).toEqual(first);
  });
});

describe("keyPairProblem", () => {
  it.each([
    {
      name: "a matching pair",
      pair: () =>
        serving(
          createCertificateAuthority({ commonName: "c", notBefore: new Date(), validForMs: 3600_000 }, pki),
        ),
      problem: undefined,
    },
    { name: "garbage", pair: () => ({ certPem: "x", keyPem: "y" }), problem: expect.any(String) },
  ])("says what is wrong with $name", ({ pair, problem }) => {
    expect(keyPairProblem(pair())).toEqual(problem);
  });
});
