import { ApiException } from "@kubernetes/client-node";
import { describe, expect, it } from "vitest";
import { notInstalled } from "./caches.ts";
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
      { onMissing: (err) => misses.push(err) },
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
    { name: "says it is not installed when the API server does not serve it", code: 404, absent: true },
    { name: "says nothing when Napwake may not read it", code: 403, absent: false },
    { name: "says nothing when the API server fails", code: 503, absent: false },
  ])("$name", ({ code, absent }) => {
    expect(notInstalled(new ApiException(code, "", "", {}))).toBe(absent);
  });
});

describe("a first look that does not answer", () => {
  const failing = (code: number) => new ApiException(code, "", "", {});

  it("is retried until the resource answers, so readers never take a failure for its absence", async () => {
    const answers = [failing(503), failing(403), "watching"];
    const misses: unknown[] = [];
    const cache = await optionalCache(
      async () => {
        const next = answers.shift();
        if (next instanceof Error) throw next;
        return next;
      },
      1_000,
      { onMissing: (err) => misses.push(err), isAbsent: notInstalled, firstRetryMs: 1 },
    );
    expect(cache.current).toBe("watching");
    expect(misses).toHaveLength(2);
    cache.stop();
  });

  it("is done when the resource is not installed, and looked for again later", async () => {
    const answers: (Error | string)[] = [failing(503), failing(404), failing(404), "watching"];
    const cache = await optionalCache(
      async () => {
        const next = answers.shift();
        if (next instanceof Error) throw next;
        return next;
      },
      5,
      { isAbsent: notInstalled, firstRetryMs: 1 },
    );
    expect(cache.current).toBeUndefined();
    expect(answers).toHaveLength(2);
    await new Promise((r) => setTimeout(r, 60));
    expect(cache.current).toBe("watching");
    cache.stop();
  });
});
