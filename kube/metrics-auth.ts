import { createHash } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";
import type { AuthenticationV1Api, AuthorizationV1Api } from "@kubernetes/client-node";
import { abortableBy, withinDeadlineOf } from "./abort.ts";
import { type Clock, forDurations, systemClock } from "./clock.ts";
import { Lru } from "./events.ts";

/**
 * Who may read /metrics, decided the way kube-rbac-proxy does: the bearer token is authenticated by the API
 * server (TokenReview) and the user it names must be allowed `get` on the non-resource URL (SubjectAccessReview).
 * Verdicts are cached by a hash of the token for a short while, so a scrape every 15 s costs no API calls.
 */

export interface UserInfo {
  username: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

export interface Authenticator {
  /**
   * The user a token names; null when the API server says the token is not valid. Throws when it cannot tell;
   * `signal` aborts the request.
   */
  authenticate(token: string, signal?: AbortSignal): Promise<UserInfo | null>;
}

export interface NonResourceAttributes {
  path: string;
  verb: string;
}

export interface Authorizer {
  /** Whether `user` may do `verb` on `path`. Throws when it cannot tell; `signal` aborts the request. */
  allowed(user: UserInfo, attributes: NonResourceAttributes, signal?: AbortSignal): Promise<boolean>;
}

export function tokenReviewAuthenticator(
  api: Pick<AuthenticationV1Api, "createTokenReview">,
  audiences?: string[],
): Authenticator {
  return {
    async authenticate(token, signal) {
      const review = await api.createTokenReview(
        {
          body: {
            apiVersion: "authentication.k8s.io/v1",
            kind: "TokenReview",
            spec: { token, ...(audiences ? { audiences } : {}) },
          },
        },
        signal && abortableBy(signal),
      );
      const user = review.status?.user;
      if (!review.status?.authenticated || !user?.username) return null;
      return {
        username: user.username,
        ...(user.uid ? { uid: user.uid } : {}),
        ...(user.groups ? { groups: user.groups } : {}),
        ...(user.extra ? { extra: user.extra } : {}),
      };
    },
  };
}

export function subjectAccessReviewAuthorizer(
  api: Pick<AuthorizationV1Api, "createSubjectAccessReview">,
): Authorizer {
  return {
    async allowed(user, attributes, signal) {
      const review = await api.createSubjectAccessReview(
        {
          body: {
            apiVersion: "authorization.k8s.io/v1",
            kind: "SubjectAccessReview",
            spec: {
              user: user.username,
              ...(user.uid ? { uid: user.uid } : {}),
              ...(user.groups ? { groups: user.groups } : {}),
              ...(user.extra ? { extra: user.extra } : {}),
              nonResourceAttributes: { path: attributes.path, verb: attributes.verb },
            },
          },
        },
        signal && abortableBy(signal),
      );
      return review.status?.allowed === true && review.status.denied !== true;
    },
  };
}

export type Verdict = "allowed" | "unauthenticated" | "forbidden";

export interface AccessCacheOptions {
  /** How long an allowed token stays allowed without asking again. Default 1 minute. */
  allowedTtlMs?: number;
  /** How long a refused token stays refused: shorter, so a new RoleBinding takes effect soon. Default 10 s. */
  deniedTtlMs?: number;
  /** Tokens remembered at most (least recently used forgotten first). Default 1024. */
  maxEntries?: number;
}

/** A cache key that keeps no token in memory. */
export function tokenKey(token: string): string {
  return createHash("sha256").update(token).digest("hex");
}

/** Verdicts by token hash, each until its expiry, in a bounded LRU. */
export class AccessCache {
  readonly #entries: Lru<string, { verdict: Verdict; expiresAt: number }>;
  readonly #allowedTtlMs: number;
  readonly #deniedTtlMs: number;

  constructor(options: AccessCacheOptions = {}) {
    this.#entries = new Lru(options.maxEntries ?? 1024);
    this.#allowedTtlMs = options.allowedTtlMs ?? 60_000;
    this.#deniedTtlMs = options.deniedTtlMs ?? 10_000;
  }

  get size(): number {
    return this.#entries.size;
  }

  get(key: string, nowMs: number): Verdict | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (nowMs < entry.expiresAt) return entry.verdict;
    this.#entries.delete(key);
    return undefined;
  }

  set(key: string, verdict: Verdict, nowMs: number): void {
    const ttl = verdict === "allowed" ? this.#allowedTtlMs : this.#deniedTtlMs;
    this.#entries.set(key, { verdict, expiresAt: nowMs + ttl });
  }
}

export interface AccessCheckOptions extends AccessCacheOptions {
  authenticator: Authenticator;
  authorizer: Authorizer;
  attributes: NonResourceAttributes;
  clock?: Clock;
  /** How long the TokenReview and SubjectAccessReview of one check may take together. Default 10 s. */
  timeoutMs?: number;
  /**
   * Reviews of different tokens in flight at once; a check beyond is refused at once (a 503), not sent. Default
   * 16: a scraper has one token, and a caller sending a new bogus token with each request would otherwise make
   * this server send the API server a TokenReview for each.
   */
  maxReviewsInFlight?: number;
}

/** A check refused because too many reviews are in flight. */
export class TooManyReviewsError extends Error {}

/**
 * The verdict for a bearer token: from the cache, else from a TokenReview and a SubjectAccessReview. Checks of
 * one token that overlap share one pair of API calls. A failed API call is thrown and not cached, and so is one
 * that did not answer in time: a hung call would otherwise hold every later scrape of that token, which shares it.
 */
export function createAccessCheck(options: AccessCheckOptions): (token: string) => Promise<Verdict> {
  // Verdicts are kept for a time measured on the steady clock: a wall clock stepped back must not keep them longer.
  const clock = forDurations(options.clock ?? systemClock);
  const cache = new AccessCache(options);
  const inFlight = new Map<string, Promise<Verdict>>();

  const timeoutMs = options.timeoutMs ?? 10_000;
  const ask = (token: string): Promise<Verdict> =>
    withinDeadlineOf(
      timeoutMs,
      `the API server did not review the token within ${timeoutMs} ms`,
      async (signal) => {
        const user = await options.authenticator.authenticate(token, signal);
        if (!user) return "unauthenticated";
        return (await options.authorizer.allowed(user, options.attributes, signal)) ? "allowed" : "forbidden";
      },
      clock,
    );

  return (token) => {
    const key = tokenKey(token);
    const cached = cache.get(key, clock.now());
    if (cached) return Promise.resolve(cached);
    const pending = inFlight.get(key);
    if (pending) return pending;
    const max = options.maxReviewsInFlight ?? 16;
    if (inFlight.size >= max) {
      return Promise.reject(
        new TooManyReviewsError(`${max} token reviews in flight already; try again shortly`),
      );
    }
    const check = ask(token)
      .then((verdict) => {
        cache.set(key, verdict, clock.now());
        return verdict;
      })
      .finally(() => inFlight.delete(key));
    inFlight.set(key, check);
    return check;
  };
}

/** Longer than any real token (service account JWTs are ~1 kB); guards the hash and the API call. */
const maxTokenLength = 8192;

/** The token of an `Authorization: Bearer <token>` header, or undefined when there is none or it is malformed. */
export function bearerToken(header: string | undefined): string | undefined {
  const match = /^Bearer +(\S+) *$/i.exec(header ?? "");
  const token = match?.[1];
  return token && token.length <= maxTokenLength ? token : undefined;
}

export type Refusal = { status: number; message: string; headers?: Record<string, string> };

const maxUrlLength = 2048;

/** Only `GET <path>` without a body gets as far as authentication; anything else is refused here. */
export function guardRequest(
  req: { method?: string | undefined; url?: string | undefined; headers: IncomingHttpHeaders },
  path: string,
): Refusal | null {
  const url = req.url ?? "";
  if (url.length > maxUrlLength) return { status: 414, message: "URL too long" };
  if (url.split("?")[0] !== path) return { status: 404, message: `not found: only ${path} is served` };
  if (req.method !== "GET") {
    return { status: 405, message: `method ${req.method ?? ""} not allowed`, headers: { allow: "GET" } };
  }
  const length = req.headers["content-length"];
  if ((length !== undefined && length !== "0") || req.headers["transfer-encoding"] !== undefined) {
    return { status: 413, message: "a request body is not accepted" };
  }
  return null;
}
