/**
 * Who may read `/metrics` (and the reporter's `/tenants`): whoever the API server says may `get` that path, as
 * kube-rbac-proxy and controller-runtime's secure metrics decide it. The caller's bearer token is checked with a
 * TokenReview, then its user with a SubjectAccessReview of the non-resource URL; so RBAC (`nonResourceURLs`) is
 * the one place that says who reads. It works on any cluster, managed ones included: no API server flag is needed,
 * only `system:auth-delegator` for the service's account.
 *
 * A stranger must not spend the API server's time through us: a token's verdict is kept (60 s allowed, 10 s
 * refused) by its SHA-256, at most {@linkcode DELEGATED_AUTH.maxEntries} of them, and at most
 * {@linkcode DELEGATED_AUTH.maxInFlight} reviews of tokens not seen allowed run at once, at most
 * {@linkcode DELEGATED_AUTH.maxInFlightPerSource} of them for one source address (more are answered 429 at once).
 * Nothing tells callers apart before a review, so a flood of made-up tokens is held by address: one caller's
 * flood takes two places, not all of them. A token allowed within the last hour (Prometheus's, the kubelet's,
 * whose 60 s verdict has run out) is reviewed again in places of its own ({@linkcode DELEGATED_AUTH.knownInFlight}),
 * which no unknown token can take: a known reader is never refused for a stranger's flood. The decision is pure
 * ({@linkcode verdictOf}); {@linkcode createDelegatedAuth} is its thin adapter.
 *
 * @module
 */
import { z } from "zod";
import type { KubeClient } from "./client.ts";

/** The bounds of delegated authentication. */
export const DELEGATED_AUTH = {
  /** The longest Authorization header read (a ServiceAccount token is about 1 KiB). */
  headerMaxBytes: 8192,
  allowSeconds: 60,
  denySeconds: 10,
  maxEntries: 1024,
  /** Reviews at once of tokens not allowed within {@linkcode DELEGATED_AUTH.knownSeconds}. */
  maxInFlight: 16,
  /** Of those, from one source address. */
  maxInFlightPerSource: 2,
  /** How long a token allowed once keeps its own places for its next reviews. */
  knownSeconds: 3600,
  /** Reviews at once of tokens allowed within {@linkcode DELEGATED_AUTH.knownSeconds}. */
  knownInFlight: 4,
} as const;

/** An answer to a reader: 200, or the status to refuse with and why (fixed words, never the token). */
export type ReaderVerdict =
  | { readonly status: 200; readonly user: string }
  | { readonly status: 401 | 403 | 429 | 503; readonly reason: string };

/**
 * The bearer token of an `Authorization` header, or why there is none.
 *
 * @example
 * ```ts
 * bearerToken("Bearer abc"); // { token: "abc" }
 * bearerToken(undefined); // { reason: "no bearer token" }
 * ```
 */
export function bearerToken(header: string | null | undefined): { token: string } | { reason: string } {
  if (!header) return { reason: "no bearer token" };
  if (header.length > DELEGATED_AUTH.headerMaxBytes) {
    return { reason: "the Authorization header is too long" };
  }
  const m = /^Bearer +([!-~]+)$/i.exec(header);
  return m ? { token: m[1]! } : { reason: "the Authorization header is not a bearer token" };
}

const TokenReviewAnswer = z.object({
  status: z.object({
    authenticated: z.boolean().optional(),
    user: z.object({
      username: z.string().max(1024),
      uid: z.string().max(1024).optional(),
      groups: z.array(z.string().max(1024)).max(256).optional(),
      extra: z.record(z.string(), z.array(z.string().max(1024)).max(64)).optional(),
    }).optional(),
  }).optional(),
});

const AccessReviewAnswer = z.object({
  status: z.object({ allowed: z.boolean().optional() }).optional(),
});

/** The TokenReview that asks the API server who holds `token`. */
export function tokenReviewBody(token: string): Record<string, unknown> {
  return { apiVersion: "authentication.k8s.io/v1", kind: "TokenReview", spec: { token } };
}

/** A user as a TokenReview authenticates it. */
export type ReviewedUser = NonNullable<NonNullable<z.infer<typeof TokenReviewAnswer>["status"]>["user"]>;

/** The user a TokenReview's answer authenticates, or why none. */
export function reviewedUser(answer: unknown): { user: ReviewedUser } | { reason: string } {
  const parsed = TokenReviewAnswer.safeParse(answer);
  if (!parsed.success) return { reason: "the API server's TokenReview answer cannot be read" };
  const status = parsed.data.status;
  if (!status?.authenticated || !status.user?.username) return { reason: "the token is not authenticated" };
  return { user: status.user };
}

/** The SubjectAccessReview that asks whether `user` may `get` the non-resource URL `path`. */
export function accessReviewBody(user: ReviewedUser, path: string): Record<string, unknown> {
  return {
    apiVersion: "authorization.k8s.io/v1",
    kind: "SubjectAccessReview",
    spec: {
      user: user.username,
      ...(user.uid ? { uid: user.uid } : {}),
      ...(user.groups ? { groups: user.groups } : {}),
      ...(user.extra ? { extra: user.extra } : {}),
      nonResourceAttributes: { path, verb: "get" },
    },
  };
}

/**
 * The verdict of the two reviews' answers (pure): 401 when the token is not authenticated, 403 when its user may
 * not `get` `path`, else 200.
 *
 * @example
 * ```ts
 * verdictOf({ status: { authenticated: true, user: { username: "prom" } } }, { status: { allowed: true } }, "/metrics");
 * // { status: 200, user: "prom" }
 * ```
 */
export function verdictOf(tokenAnswer: unknown, accessAnswer: unknown, path: string): ReaderVerdict {
  const who = reviewedUser(tokenAnswer);
  if ("reason" in who) return { status: 401, reason: who.reason };
  const access = AccessReviewAnswer.safeParse(accessAnswer);
  const user = who.user.username;
  if (!access.success) {
    return { status: 503, reason: "the API server's SubjectAccessReview answer cannot be read" };
  }
  return access.data.status?.allowed
    ? { status: 200, user }
    : { status: 403, reason: `user ${JSON.stringify(user.slice(0, 256))} may not get ${path}` };
}

/** Checks readers' tokens against the API server; see the module documentation. */
export interface DelegatedAuth {
  /**
   * The verdict for a request to `path` with this `Authorization` header, from `source` (the caller's address;
   * unknown: no per-address bound).
   */
  check(authorization: string | null | undefined, path: string, source?: string): Promise<ReaderVerdict>;
}

/** Places for reviews under way: unknown tokens' (in all and per source) and known readers' apart. */
class ReviewPlaces {
  #fresh = 0;
  #known = 0;
  readonly #bySource = new Map<string, number>();

  /** Takes a place (a known reader's first, else an ordinary one), or says none is free; the returned function gives it back. */
  take(known: boolean, source: string | undefined): (() => void) | undefined {
    if (known && this.#known < DELEGATED_AUTH.knownInFlight) {
      this.#known++;
      return () => void this.#known--;
    }
    const mine = source === undefined ? 0 : this.#bySource.get(source) ?? 0;
    if (this.#fresh >= DELEGATED_AUTH.maxInFlight || mine >= DELEGATED_AUTH.maxInFlightPerSource) {
      return undefined;
    }
    this.#fresh++;
    if (source !== undefined) this.#bySource.set(source, mine + 1);
    return () => {
      this.#fresh--;
      if (source === undefined) return;
      const left = (this.#bySource.get(source) ?? 1) - 1;
      if (left > 0) this.#bySource.set(source, left);
      else this.#bySource.delete(source);
    };
  }
}

/** A bounded map of keys to expiry times, oldest dropped first. */
function remember(map: Map<string, number>, key: string, until: number): void {
  map.delete(key);
  map.set(key, until);
  // Oldest first: a Map iterates in insertion order.
  while (map.size > DELEGATED_AUTH.maxEntries) map.delete(map.keys().next().value!);
}

/** Creates the adapter: the two reviews with `kube`, verdicts cached by token digest and path. */
export function createDelegatedAuth(
  options: { readonly kube: KubeClient; readonly clock?: () => number },
): DelegatedAuth {
  const clock = options.clock ?? Date.now;
  const cache = new Map<string, { verdict: ReaderVerdict; until: number }>();
  const running = new Map<string, Promise<ReaderVerdict>>();
  const review = async (token: string, path: string): Promise<ReaderVerdict> => {
    try {
      const tokenAnswer = await options.kube.write(
        "POST",
        "/apis/authentication.k8s.io/v1/tokenreviews",
        tokenReviewBody(token),
      );
      const who = reviewedUser(tokenAnswer);
      if ("reason" in who) return { status: 401, reason: who.reason };
      const accessAnswer = await options.kube.write(
        "POST",
        "/apis/authorization.k8s.io/v1/subjectaccessreviews",
        accessReviewBody(who.user, path),
      );
      return verdictOf(tokenAnswer, accessAnswer, path);
    } catch {
      return { status: 503, reason: "the Kubernetes API did not answer the authentication review" };
    }
  };
  const places = new ReviewPlaces();
  // Tokens allowed within the hour, by digest and path: their next reviews have places of their own.
  const allowed = new Map<string, number>();
  return {
    async check(authorization, path, source) {
      const bearer = bearerToken(authorization);
      if ("reason" in bearer) return { status: 401, reason: bearer.reason };
      const key = `${await digest(bearer.token)} ${path}`;
      const known = cache.get(key);
      if (known && known.until > clock()) return known.verdict;
      const under = running.get(key);
      if (under) return await under;
      const give = places.take((allowed.get(key) ?? -Infinity) > clock(), source);
      if (!give) return { status: 429, reason: "too many authentication reviews under way; try again" };
      const p = review(bearer.token, path);
      running.set(key, p);
      try {
        const verdict = await p;
        if (verdict.status !== 503) {
          const seconds = verdict.status === 200 ? DELEGATED_AUTH.allowSeconds : DELEGATED_AUTH.denySeconds;
          cache.delete(key);
          cache.set(key, { verdict, until: clock() + seconds * 1000 });
          // Oldest first: a Map iterates in insertion order.
          while (cache.size > DELEGATED_AUTH.maxEntries) cache.delete(cache.keys().next().value!);
        }
        if (verdict.status === 200) remember(allowed, key, clock() + DELEGATED_AUTH.knownSeconds * 1000);
        else if (verdict.status !== 503) allowed.delete(key);
        return verdict;
      } finally {
        running.delete(key);
        give();
      }
    },
  };
}

async function digest(token: string): Promise<string> {
  const bytes = new Uint8Array(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(token)));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
}
