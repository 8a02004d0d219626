import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { KubeConfig } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { loadKubeconfig } from "./kubeconfig.ts";

const dir = mkdtempSync(join(tmpdir(), "napwake-kubeconfig-"));

/** A kubeconfig file with one cluster, user and context named `name`, current when `current`. */
function file(name: string, server: string, current: string | null = name): string {
  const path = join(dir, `${name}-${Math.random().toString(36).slice(2)}.yaml`);
  writeFileSync(
    path,
    [
      "apiVersion: v1",
      "kind: Config",
      `clusters: [{ name: ${name}, cluster: { server: "${server}", certificate-authority: ca.crt } }]`,
      `users: [{ name: ${name}, user: { token: t } }]`,
      `contexts: [{ name: ${name}, context: { cluster: ${name}, user: ${name} } }]`,
      ...(current ? [`current-context: ${current}`] : []),
    ].join("\n"),
  );
  return path;
}

const loaded = (source: { file?: string; env?: string }) => {
  const kc = new KubeConfig();
  loadKubeconfig(kc, source);
  return kc;
};

describe("the kubeconfig, read as kubectl reads it", () => {
  it("takes the current context from the first file of KUBECONFIG that sets one", () => {
    const kc = loaded({
      env: [file("prod", "https://prod:6443"), file("staging", "https://staging:6443")].join(":"),
    });
    expect(kc.getCurrentContext()).toBe("prod");
    expect(kc.getCurrentCluster()?.server).toBe("https://prod:6443");
    expect(kc.getContextObject("staging")).toBeDefined();
  });

  it("goes past files that set no current context", () => {
    const kc = loaded({
      env: [file("ci", "https://ci:6443", null), file("dev", "https://dev:6443")].join(":"),
    });
    expect(kc.getCurrentContext()).toBe("dev");
  });

  it("skips a file that does not exist or is empty, and refuses a list of none that do, naming them", () => {
    const missing = join(dir, "absent.yaml");
    const empty = join(dir, "empty.yaml");
    writeFileSync(empty, "\n");
    const env = [missing, empty, file("prod", "https://prod:6443")].join(":");
    expect(loaded({ env }).getCurrentContext()).toBe("prod");
    expect(() => loaded({ env: missing })).toThrow(
      `none of the files KUBECONFIG names exists, or has anything in it: ${missing}`,
    );
  });

  it("keeps the first definition of a name defined twice", () => {
    const kc = loaded({
      env: [file("prod", "https://first:6443"), file("prod", "https://second:6443")].join(":"),
    });
    expect(kc.getCurrentCluster()?.server).toBe("https://first:6443");
  });

  it("reads --kubeconfig alone, whatever KUBECONFIG says", () => {
    const kc = loaded({ file: file("mine", "https://mine:6443"), env: file("prod", "https://prod:6443") });
    expect(kc.getCurrentContext()).toBe("mine");
    expect(kc.getContextObject("prod")).toBeNull();
  });

  it("reads relative paths against the file that names them", () => {
    const path = file("prod", "https://prod:6443");
    expect(loaded({ env: path }).getCurrentCluster()?.caFile).toBe(join(dir, "ca.crt"));
  });

  it("lets a plain-http server (kubectl proxy) through: there is no TLS to verify", () => {
    const kc = loaded({ env: file("proxy", "http://127.0.0.1:8001") });
    expect(kc.getCurrentCluster()?.skipTLSVerify).toBe(true);
    expect(loaded({ env: file("prod", "https://prod:6443") }).getCurrentCluster()?.skipTLSVerify).toBeFalsy();
  });
});
