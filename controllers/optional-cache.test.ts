import { ApiException } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { worthReporting } from "./caches.ts";
import { optionalCache } from "./optional-cache.ts";

describe("a cache of a resource that may be installed later", () => {
  it("is there at once when the resource exists", async () => {
    const cache = await optionalCache(async () => "watching", 10);
    expect(cache.current).toBe("watching");
    cache.stop();
  });

  it("is picked up by a later attempt once the resource is installed, without a restart", async () => {
    let installed = false;
    const misses: unknown[] = [];
    const cache = await optionalCache(
      async () => {
        if (!installed) throw new Error("404: the server could not find the requested resource");
        return "watching";
      },
      5,
      (err) => misses.push(err),
    );
    expect(cache.current).toBeUndefined();
    installed = true;
    await new Promise((r) => setTimeout(r, 50));
    expect(cache.current).toBe("watching");
    expect(misses.length).toBeGreaterThanOrEqual(1);
    cache.stop();
  });

  it("stops trying when stopped", async () => {
    let attempts = 0;
    const cache = await optionalCache(async () => {
      attempts++;
      throw new Error("not installed");
    }, 5);
    cache.stop();
    const after = attempts;
    await new Promise((r) => setTimeout(r, 40));
    expect(attempts).toBe(after);
    expect(cache.current).toBeUndefined();
  });
});

describe("a failed look for an optional resource", () => {
  it.each([
    { name: "is quiet when the resource is not installed", code: 404, warns: false },
    { name: "warns when Napwake may not read it", code: 403, warns: true },
    { name: "warns when the API server fails", code: 503, warns: true },
  ])("$name", ({ code, warns }) => {
    expect(worthReporting(new ApiException(code, "", "", {}))).toBe(warns);
  });
});
