/**
 * The doors in front of the work a request costs: how many requests of a kind may be in at once (reading their
 * body, queued or running) and how many bytes of their bodies, counted from the door, so that a burst is refused
 * before its bodies are read. The hook requests' door hands them to the workers; the admission webhooks' door
 * keeps reviews, whoever sends them, from holding more of the process than their share.
 *
 * @module
 */
import type { Context, MiddlewareHandler } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { jsonError } from "./errors.ts";
import type { AppEnv, Runtime } from "./env.ts";
import type { Offload } from "../isolation/mod.ts";

/** The clock header as Hono reads it (lower case); see `NOW_HEADER` in `bind.ts`. */
const NOW_HEADER_LOWER = "x-butler-now";

type Middleware = MiddlewareHandler<AppEnv>;

/** A count and a byte bound on the requests in at once; one request alone is always let in. */
export class Gate {
  #in = 0;
  #bytes = 0;
  readonly #capacity: () => number;
  readonly #maxBytes: number;

  constructor(capacity: () => number, maxBytes: number) {
    this.#capacity = capacity;
    this.#maxBytes = maxBytes;
  }

  /** Lets a request of `size` bytes in, or says it must wait. */
  enter(size: number): boolean {
    if (this.#in >= this.#capacity()) return false;
    if (this.#in > 0 && this.#bytes + size > this.#maxBytes) return false;
    this.#in++;
    this.#bytes += size;
    return true;
  }

  leave(size: number): void {
    this.#in--;
    this.#bytes -= size;
  }

  /** Whether no request could be let in now. */
  get full(): boolean {
    return this.#in >= this.#capacity();
  }

  get inFlight(): number {
    return this.#in;
  }

  get bytes(): number {
    return this.#bytes;
  }
}

/**
 * How long a request's body may take to arrive: Metacontroller and the API server send a whole body at once, so a
 * body that trickles in is a caller holding a place at the door. Hook bodies may be 80 MB (large pools).
 */
export const BODY_READ_SECONDS = { hooks: 30, webhooks: 10 } as const;

function bodySeconds(c: Context<AppEnv>): number {
  const limits = c.get("runtime")?.bodyReadSeconds ?? BODY_READ_SECONDS;
  return c.req.path.startsWith("/webhooks/") ? limits.webhooks : limits.hooks;
}

/** A request's body, or `undefined` when it did not arrive within its time (see {@linkcode BODY_READ_SECONDS}). */
export async function readBodyWithin(c: Context<AppEnv>): Promise<ArrayBuffer | undefined> {
  const seconds = bodySeconds(c);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((
    resolve,
  ) => (timer = setTimeout(() => resolve(undefined), seconds * 1000)));
  try {
    return await Promise.race([c.req.arrayBuffer(), late]);
  } finally {
    clearTimeout(timer);
  }
}

/** The answer to a body that did not arrive in time: 408, and the connection is closed unread. */
export function bodyTooSlow(c: Context<AppEnv>): Response {
  const seconds = bodySeconds(c);
  c.set("failure", `the body did not arrive within ${seconds}s`);
  return jsonError(c, 408, `the request body did not arrive within ${seconds}s`);
}

/** The bytes a request's body will take, by its `content-length`; the body limit when it does not say. */
export function declaredSize(header: string | undefined, limit: number): number {
  const n = header === undefined ? NaN : Number(header);
  return Number.isSafeInteger(n) && n >= 0 ? Math.min(n, limit) : limit;
}

/** What the hook requests' door needs. */
export interface OffloadDoorOptions {
  readonly offload: Offload;
  readonly runtime: Runtime;
  readonly known: ReadonlySet<string>;
  readonly bodyLimitBytes: number;
  readonly queueBytes?: number | undefined;
  readonly retryAfterSeconds?: number | undefined;
}

/**
 * The door to the hook workers. Hook requests let in are counted from the door (reading their body, queued or
 * running), so a burst is refused before its bodies are read: a full pool must not buffer megabytes it will not
 * run. `full()` says whether the door is shut (readiness). The answer's bytes go out as the worker made them.
 */
export function offloadDoor(o: OffloadDoorOptions): { middleware: Middleware; full(): boolean } {
  const { offload, runtime, known } = o;
  const gate = new Gate(() => offload.stats().workers + offload.stats().queueLimit, o.queueBytes ?? Infinity);
  const retryAfter = String(o.retryAfterSeconds ?? 2);
  const busy = (c: Context<AppEnv>) => {
    const s = offload.stats();
    c.header("Retry-After", retryAfter);
    return jsonError(c, 429, `busy: ${s.busy} hook requests running and ${s.queued} queued; retry later`);
  };
  const middleware: Middleware = async (c, next) => {
    if (c.req.method !== "POST" || !known.has(`POST ${c.req.path}`)) return next();
    const size = declaredSize(c.req.header("content-length"), o.bodyLimitBytes);
    if (!gate.enter(size)) return busy(c);
    try {
      const headers: Record<string, string> = {};
      for (const name of ["content-type", NOW_HEADER_LOWER]) {
        const v = c.req.header(name);
        if (v !== undefined) headers[name] = v;
      }
      const body = await readBodyWithin(c);
      if (body === undefined) return bodyTooSlow(c);
      const now = runtime.clock().toISOString();
      const reply = await offload.submit({ route: c.req.path, body, headers, now });
      if (reply === "busy") return busy(c);
      if (reply.subject) c.set("subject", reply.subject);
      if (reply.failure) c.set("failure", reply.failure);
      if (reply.signals?.length) c.set("signals", reply.signals);
      return c.body(reply.body as string, reply.status as ContentfulStatusCode, {
        "content-type": "application/json",
      });
    } finally {
      gate.leave(size);
    }
  };
  return { middleware, full: () => gate.full };
}

/** What the admission webhooks' door needs. */
export interface WebhookDoorOptions {
  readonly known: ReadonlySet<string>;
  /** Reviews being read or decided at once. */
  readonly concurrency: number;
  /** Bytes of review bodies in at once (by `content-length`). */
  readonly queueBytes: number;
  readonly bodyLimitBytes: number;
  readonly retryAfterSeconds?: number | undefined;
  /** The share of the main thread's time large reviews may take; {@linkcode LARGE_REVIEW_SHARE} by default. */
  readonly largeShare?: number | undefined;
  /** Milliseconds, for the large reviews' share; `performance.now` by default. */
  readonly clock?: (() => number) | undefined;
}

/** A review of more than this many bytes is large: the API server's reviews of our kinds are a few kilobytes. */
export const LARGE_REVIEW_BYTES = 64 * 1024;

/**
 * The share of the main thread's time large reviews may take: 1 %. A review is parsed and decided on the main
 * thread, which also relays every hook call: a 1 MB review of many small objects holds it for 30 to 150 ms (by
 * the host's speed), and each such stall delays the hook calls in flight. Held to 1 % of the time, stalls touch
 * fewer than 1 % of the calls whatever their length, so the hooks' p99 stays where it is (the hostile tier).
 */
export const LARGE_REVIEW_SHARE = 0.01;

/**
 * The most a large review's time is booked at (ms): its time runs from its body's arrival to its answer, reads of
 * the API included, and a review waiting on a slow API server is not a stalled main thread. So one review closes
 * the lane for at most 25 s.
 */
export const LARGE_REVIEW_BOOKED_MS = 250;

/**
 * A share of time: after work that took `t` (booked at most `maxMs`), the next may start once `t / share` has
 * passed since this one started, so the work takes at most `share` of any long stretch of time.
 *
 * @example
 * ```ts
 * const share = new TimeShare(0.01, () => performance.now());
 * if (share.wait() === 0) {
 *   const end = share.start();
 *   work();
 *   end(); // work that took 30 ms: the next may start 3 s after this one did
 * }
 * ```
 */
export class TimeShare {
  readonly #share: number;
  readonly #clock: () => number;
  readonly #maxMs: number;
  #nextAt = -Infinity;
  #last = 0;

  constructor(share: number, clock: () => number, maxMs = Infinity) {
    this.#share = share;
    this.#clock = clock;
    this.#maxMs = maxMs;
  }

  /** Milliseconds until the next work may start (0: now). */
  wait(): number {
    return Math.max(0, this.#nextAt - this.#clock());
  }

  /** Starts a piece of work; the returned function ends it and books its time. */
  start(): () => void {
    const from = this.#clock();
    return () => {
      this.#last = Math.min(this.#clock() - from, this.#maxMs);
      this.#nextAt = from + this.#last / this.#share;
    };
  }

  /** How long the last piece of work took (ms). */
  get last(): number {
    return this.#last;
  }
}

/**
 * The door to admission: reviews in at once and the bytes of their bodies, whoever sends them. Large reviews
 * (over {@linkcode LARGE_REVIEW_BYTES}) have a lane of their own: one at a time, within the byte bound, and at
 * most {@linkcode LARGE_REVIEW_SHARE} of the main thread's time, so that a caller sending megabytes neither takes
 * the places of the API server's small reviews nor holds the hook calls the main thread relays. A review past its
 * lane is answered 429 before its body is read; the API server then applies the webhook's failure policy, and a
 * client sees it as a refusal it may retry.
 */
export function webhookDoor(o: WebhookDoorOptions): Middleware {
  const all = new Gate(() => o.concurrency, Infinity);
  const large = new Gate(() => 1, o.queueBytes);
  const share = o.largeShare ?? LARGE_REVIEW_SHARE;
  const time = new TimeShare(share, o.clock ?? (() => performance.now()), LARGE_REVIEW_BOOKED_MS);
  const retryAfter = String(o.retryAfterSeconds ?? 2);
  return async (c, next) => {
    if (c.req.method !== "POST" || !o.known.has(`POST ${c.req.path}`)) return next();
    const size = declaredSize(c.req.header("content-length"), o.bodyLimitBytes);
    const lane = size > LARGE_REVIEW_BYTES ? large : undefined;
    if (lane) {
      const wait = time.wait();
      if (wait > 0) return overShare(c, wait);
      if (!lane.enter(size)) return busy(c, lane, "large admission reviews");
    }
    if (!all.enter(size)) {
      lane?.leave(size);
      return busy(c, all, "admission reviews");
    }
    let end: (() => void) | undefined;
    try {
      // Its time counts once its body is in: a body that trickles holds the lane's one place (408 after 10 s),
      // not the main thread.
      if (lane && await readBodyWithin(c) === undefined) return bodyTooSlow(c);
      end = lane ? time.start() : undefined;
      await next();
    } finally {
      end?.();
      all.leave(size);
      lane?.leave(size);
    }
  };

  function busy(c: Context<AppEnv>, gate: Gate, what: string): Response {
    c.header("Retry-After", retryAfter);
    c.set("failure", `admission busy: ${gate.inFlight} ${what} (${gate.bytes} bytes) in`);
    return jsonError(c, 429, `busy: ${gate.inFlight} ${what} in progress; retry later`);
  }

  function overShare(c: Context<AppEnv>, waitMs: number): Response {
    const seconds = Math.max(1, Math.ceil(waitMs / 1000));
    const percent = Number((share * 100).toFixed(2));
    const took = Math.round(time.last);
    c.header("Retry-After", String(seconds));
    c.set("failure", `large admission review deferred: the last took ${took} ms, ${percent}% share`);
    const message =
      `busy: large admission reviews (over ${LARGE_REVIEW_BYTES} bytes) may take ${percent}% of the main thread's time and the last took ${took} ms; retry in ${seconds}s`;
    return jsonError(c, 429, message);
  }
}
