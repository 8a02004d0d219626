import { afterEach, describe, expect, it, vi } from "vitest";
import { FakeClock } from "./clock.ts";
import {
  AccessCache,
  type Authenticator,
  type Authorizer,
  bearerToken,
  createAccessCheck,
  guardRequest,
  subjectAccessReviewAuthorizer,
  tokenKey,
  tokenReviewAuthenticator,
  type UserInfo,
  type Verdict,
} from "./metrics-auth.ts";

describe("bearerToken", () => {
  it.each([
    ["Bearer abc.def", "abc.def"],
    ["bearer abc", "abc"],
    ["BEARER  abc ", "abc"],
    [undefined, undefined],
    ["", undefined],
    ["Bearer", undefined],
    ["Bearer ", undefined],
    ["Basic dXNlcjpwdw==", undefined],
    ["Bearer a b", undefined],
    ["Bearerabc", undefined],
    [`Bearer ${"x".repeat(8193)}`, undefined],
  ])("%j -> %j", (header, token) => {
    expect(bearerToken(header)).toBe(token);
  });
});

describe("guardRequest", () => {
  it.each([
    ["GET", "/metrics", {}, null],
    ["GET", "/metrics?x=1", {}, null],
    ["GET", "/metrics", { "content-length": "0" }, null],
    ["GET", "/", {}, 404],
    ["GET", "/metrics/", {}, 404],
    ["GET", "/metricsx", {}, 404],
    ["POST", "/metrics", {}, 405],
    ["HEAD", "/metrics", {}, 405],
    ["GET", "/metrics", { "content-length": "5" }, 413],
    ["GET", "/metrics", { "transfer-encoding": "chunked" }, 413],
    ["GET", `/metrics?${"a".repeat(3000)}`, {}, 414],
  ])("%s %s %j -> %j", (method, url, headers, status) => {
    expect(guardRequest({ method, url, headers }, "/metrics")?.status ?? null).toBe(status);
  });

  it("names the allowed method on a 405", () => {
    expect(guardRequest({ method: "PUT", url: "/metrics", headers: {} }, "/metrics")?.headers).toEqual({
      allow: "GET",
    });
  });
});

describe("AccessCache", () => {
  it.each<[Verdict, number, Verdict | undefined]>([
    ["allowed", 59_999, "allowed"],
    ["allowed", 60_000, undefined],
    ["forbidden", 9_999, "forbidden"],
    ["forbidden", 10_000, undefined],
    ["unauthenticated", 10_000, undefined],
  ])("a %s verdict read %i ms later -> %s", (verdict, later, expected) => {
    const cache = new AccessCache();
    cache.set("k", verdict, 1_000);
    expect(cache.get("k", 1_000 + later)).toBe(expected);
  });

  it("forgets the least recently used token beyond its size", () => {
    const cache = new AccessCache({ maxEntries: 2 });
    cache.set("a", "allowed", 0);
    cache.set("b", "allowed", 0);
    cache.get("a", 0);
    cache.set("c", "allowed", 0);
    expect([cache.get("a", 0), cache.get("b", 0), cache.get("c", 0), cache.size]).toEqual([
      "allowed",
      undefined,
      "allowed",
      2,
    ]);
  });

  it("keys by a hash that does not contain the token", () => {
    expect(tokenKey("secret-token")).toMatch(/^[0-9a-f]{64}$/);
    expect(tokenKey("secret-token")).not.toContain("secret");
  });
});

/** Fakes: tokens name users; `allowedUsers` may read /metrics. Counts the calls made. */
function fakes(users: Record<string, string>, allowedUsers: string[]) {
  const calls = { authenticate: 0, authorize: 0 };
  const authenticator: Authenticator = {
    async authenticate(token) {
      calls.authenticate++;
      if (token === "explode") throw new Error("API server unreachable");
      const username = users[token];
      return username ? { username, groups: ["system:authenticated"] } : null;
    },
  };
  const authorizer: Authorizer = {
    async allowed(user) {
      calls.authorize++;
      return allowedUsers.includes(user.username);
    },
  };
  return { authenticator, authorizer, calls };
}

describe("createAccessCheck", () => {
  const users = { t1: "prometheus", t2: "someone" };

  it.each<[string, Verdict, number]>([
    ["t1", "allowed", 2],
    ["t2", "forbidden", 2],
    ["garbage", "unauthenticated", 1],
  ])("token %s -> %s with %i API calls", async (token, verdict, apiCalls) => {
    const f = fakes(users, ["prometheus"]);
    const check = createAccessCheck({ ...f, attributes: { path: "/metrics", verb: "get" } });
    expect(await check(token)).toBe(verdict);
    expect(f.calls.authenticate + f.calls.authorize).toBe(apiCalls);
  });

  describe("on the system clock, stepped back an hour (NTP correcting a fast node, a VM resumed)", () => {
    afterEach(() => vi.useRealTimers());
    const stepBackAnHour = () => vi.setSystemTime(Date.now() - 3_600_000);

    it("asks again about an allowed token once its minute is up, not an hour later", async () => {
      vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date", "performance"] });
      const allowedUsers = ["prometheus"];
      const check = createAccessCheck({
        ...fakes(users, allowedUsers),
        attributes: { path: "/metrics", verb: "get" },
      });
      expect(await check("t1")).toBe("allowed");
      allowedUsers.pop(); // its RoleBinding is deleted
      stepBackAnHour();
      await vi.advanceTimersByTimeAsync(60_000);
      expect(await check("t1")).toBe("forbidden");
    });

    it("asks again about a refused token once its 10 s are up", async () => {
      vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout", "Date", "performance"] });
      const allowedUsers: string[] = [];
      const check = createAccessCheck({
        ...fakes(users, allowedUsers),
        attributes: { path: "/metrics", verb: "get" },
      });
      expect(await check("t1")).toBe("forbidden");
      allowedUsers.push("prometheus"); // the RoleBinding is made
      stepBackAnHour();
      await vi.advanceTimersByTimeAsync(10_000);
      expect(await check("t1")).toBe("allowed");
    });
  });

  it("asks the API server again only after the TTL", async () => {
    const clock = new FakeClock(0);
    const f = fakes(users, ["prometheus"]);
    const check = createAccessCheck({ ...f, clock, attributes: { path: "/metrics", verb: "get" } });
    for (let scrape = 0; scrape < 4; scrape++) {
      expect(await check("t1")).toBe("allowed");
      await clock.advance(15_000);
    }
    expect(f.calls.authenticate).toBe(1);
    await check("t1");
    expect(f.calls.authenticate).toBe(2);
  });

  it("shares one review among overlapping checks of a token", async () => {
    const f = fakes(users, ["prometheus"]);
    const check = createAccessCheck({ ...f, attributes: { path: "/metrics", verb: "get" } });
    expect(await Promise.all([check("t1"), check("t1"), check("t1")])).toEqual([
      "allowed",
      "allowed",
      "allowed",
    ]);
    expect(f.calls.authenticate).toBe(1);
  });

  it("throws when the API server cannot be asked, and does not cache that", async () => {
    const f = fakes(users, []);
    const check = createAccessCheck({ ...f, attributes: { path: "/metrics", verb: "get" } });
    await expect(check("explode")).rejects.toThrow("unreachable");
    await expect(check("explode")).rejects.toThrow("unreachable");
    expect(f.calls.authenticate).toBe(2);
  });

  it("refuses at once, sending nothing, a check of a new token while the most reviews it allows are in flight", async () => {
    let reviews = 0;
    const check = createAccessCheck({
      authenticator: {
        authenticate: () => {
          reviews++;
          return new Promise(() => undefined);
        },
      },
      authorizer: { allowed: async () => true },
      attributes: { path: "/metrics", verb: "get" },
      maxReviewsInFlight: 2,
      timeoutMs: 60_000,
      clock: new FakeClock(0),
    });
    void check("bogus-1").catch(() => undefined);
    void check("bogus-2").catch(() => undefined);
    void check("bogus-1").catch(() => undefined); // the same token shares its review
    await expect(check("bogus-3")).rejects.toThrow("2 token reviews in flight already; try again shortly");
    expect(reviews).toBe(2);
  });

  it("gives up on a review that never answers, so later scrapes of the token are not held behind it", async () => {
    const clock = new FakeClock(0);
    let calls = 0;
    let aborted: AbortSignal | undefined;
    const check = createAccessCheck({
      authenticator: {
        // The first review hangs (a connection the API server dropped); every later one is answered.
        authenticate: (token, signal) => {
          calls++;
          if (calls > 1) return Promise.resolve({ username: token });
          aborted = signal;
          return new Promise(() => undefined);
        },
      },
      authorizer: { allowed: async () => true },
      attributes: { path: "/metrics", verb: "get" },
      clock,
      timeoutMs: 10_000,
    });
    const hung = expect(check("prometheus")).rejects.toThrow("did not review the token within 10000 ms");
    const overlapping = expect(check("prometheus")).rejects.toThrow(
      "did not review the token within 10000 ms",
    );
    await clock.advance(10_000);
    await hung;
    await overlapping;
    expect(aborted?.aborted).toBe(true);
    expect(await check("prometheus")).toBe("allowed");
  });
});

describe("API adapters", () => {
  it.each([
    [{ authenticated: true, user: { username: "system:serviceaccount:a:b", uid: "u", groups: ["g"] } }, true],
    [{ authenticated: false, error: "invalid bearer token" }, false],
    [{ authenticated: true, user: {} }, false],
    [{}, false],
  ])("a TokenReview status %j authenticates: %s", async (status, ok) => {
    let sent: unknown;
    const authn = tokenReviewAuthenticator({
      createTokenReview: async (param) => {
        sent = param.body.spec;
        return { spec: param.body.spec, status };
      },
    });
    const user = await authn.authenticate("tok");
    expect(sent).toEqual({ token: "tok" });
    expect(user !== null).toBe(ok);
  });

  it.each([
    [{ allowed: true }, true],
    [{ allowed: true, denied: true }, false],
    [{ allowed: false }, false],
    [undefined, false],
  ])("a SubjectAccessReview status %j allows: %s", async (status, ok) => {
    let sent: unknown;
    const authz = subjectAccessReviewAuthorizer({
      createSubjectAccessReview: async (param) => {
        sent = param.body.spec;
        return { spec: param.body.spec, ...(status ? { status } : {}) };
      },
    });
    const user: UserInfo = { username: "u", groups: ["g"], extra: { k: ["v"] } };
    expect(await authz.allowed(user, { path: "/metrics", verb: "get" })).toBe(ok);
    expect(sent).toEqual({
      user: "u",
      groups: ["g"],
      extra: { k: ["v"] },
      nonResourceAttributes: { path: "/metrics", verb: "get" },
    });
  });
});
