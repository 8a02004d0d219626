import { describe, expect, it } from "vitest";
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
