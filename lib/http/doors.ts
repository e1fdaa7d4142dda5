/**
 * The doors in front of the work a request costs. Each reads its requests' bodies as they arrive (`body.ts`), small
 * ones within a reading budget and large ones in a lane of their own, and lets a request take one of its places
 * only once its whole body is in, so that a caller who trickles holds no place. The hook requests' door hands them
 * to the workers; the admission webhooks' door keeps reviews, whoever sends them, from holding more of the process
 * than their share.
 *
 * @module
 */
import type { Context, MiddlewareHandler } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { jsonError } from "./errors.ts";
import type { AppEnv, Runtime } from "./env.ts";
import type { Offload } from "../isolation/mod.ts";
import { bodyTooSlowAfter, ByteBudget, type LargeLane } from "./body.ts";
import { jsonHeapEstimate } from "../foreign/mod.ts";

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

/**
 * A request's body, or `undefined` when it did not arrive within its time (see {@linkcode BODY_READ_SECONDS}): as
 * the door read it (`bodyReader`), or read now for a route no door reads for.
 */
export async function readBodyWithin(c: Context<AppEnv>): Promise<ArrayBuffer | undefined> {
  const read = c.get("body");
  if (read) return read;
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

/** How long the body of `c` may take to arrive, in seconds. */
export function bodySeconds(c: Context<AppEnv>): number {
  const limits = c.get("runtime")?.bodyReadSeconds ?? BODY_READ_SECONDS;
  return c.req.path.startsWith("/webhooks/") ? limits.webhooks : limits.hooks;
}

/** The answer to a body that did not arrive in time: 408, and the connection is closed unread. */
export function bodyTooSlow(c: Context<AppEnv>): Response {
  return bodyTooSlowAfter(c, bodySeconds(c));
}

/** What the hook requests' door needs. */
export interface OffloadDoorOptions {
  readonly offload: Offload;
  readonly runtime: Runtime;
  readonly known: ReadonlySet<string>;
  /** Bytes of large hook bodies (over 64 KiB, `LARGE_BODY_BYTES`) in at once: read, queued or running. */
  readonly queueBytes?: number | undefined;
  readonly retryAfterSeconds?: number | undefined;
}

/**
 * The door to the hook workers. A large body's bytes are charged to the door's bytes as they arrive (read, queued
 * or running; its lane, for {@linkcode bodyReader}), so that a full pool never buffers megabytes it will not run; a
 * place in the queue (workers and `queueLimit`) is taken once the whole body is in, so a caller that trickles holds
 * none. `full()` says whether the door is shut (readiness). The answer's bytes go out as the worker made them.
 */
export function offloadDoor(
  o: OffloadDoorOptions,
): { middleware: Middleware; large: LargeLane; full(): boolean } {
  const { offload, runtime, known } = o;
  const places = new Gate(() => offload.stats().workers + offload.stats().queueLimit, Infinity);
  const bytes = new ByteBudget(o.queueBytes ?? Infinity);
  const retryAfter = String(o.retryAfterSeconds ?? 2);
  const busy = (c: Context<AppEnv>) => {
    const s = offload.stats();
    c.header("Retry-After", retryAfter);
    return jsonError(c, 429, `busy: ${s.busy} hook requests running and ${s.queued} queued; retry later`);
  };
  const large: LargeLane = (c, declared) => bytes.lease(declared ?? 0) ?? busy(c);
  const middleware: Middleware = async (c, next) => {
    if (c.req.method !== "POST" || !known.has(`POST ${c.req.path}`)) return next();
    const body = await readBodyWithin(c);
    if (body === undefined) return bodyTooSlow(c);
    if (!places.enter(0)) return busy(c);
    try {
      const headers: Record<string, string> = {};
      for (const name of ["content-type", NOW_HEADER_LOWER]) {
        const v = c.req.header(name);
        if (v !== undefined) headers[name] = v;
      }
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
      places.leave(0);
    }
  };
  return { middleware, large, full: () => places.full };
}

/** What the admission webhooks' door needs. */
export interface WebhookDoorOptions {
  readonly known: ReadonlySet<string>;
  /** Reviews decided at once (their whole body in). */
  readonly concurrency: number;
  /** Bytes of large reviews in at once (by `content-length`; the body limit for a chunked one). */
  readonly queueBytes: number;
  readonly bodyLimitBytes: number;
  readonly retryAfterSeconds?: number | undefined;
  /** The share of the main thread's time large reviews may take; {@linkcode LARGE_REVIEW_SHARE} by default. */
  readonly largeShare?: number | undefined;
  /** Milliseconds, for the large reviews' share; `performance.now` by default. */
  readonly clock?: (() => number) | undefined;
  /** Bytes of small reviews holding places at once; {@linkcode REVIEW_PLACE_BYTES} by default. */
  readonly placeBytes?: number | undefined;
}

/**
 * A review of more than this many bytes is large: 1 MiB, above every review the bounds on what a team may store
 * allow (hooks/tenantcluster/bounds.ts), so that no ordinary review ever meets the large lane. The largest is an
 * update of a TenantCluster, object and old object, each at most: its addons' values, 128 KiB as JSON; their field
 * paths in `managedFields` (a path per key, no longer than the values that name it), 128 KiB; the annotations
 * Butler reads, 4 of 1024 characters, 12 KiB in UTF-8; the rest of its spec within the CRD's bounds (64 addons'
 * names and versions, 25 KiB) and metadata, under 64 KiB: 332 KiB each, 664 KiB with the review's envelope, 1 MiB
 * with half again to spare (`tests/http/review_lane_test.ts` builds them and holds the sum to this). What passes
 * it: objects stored before the bounds, values whose `<`, `>` and `&` the API server writes as six-byte escapes,
 * free-form labels and annotations Butler does not read, and a pool's large status in an update of its spec.
 */
export const LARGE_REVIEW_BYTES = 1024 * 1024;

/**
 * The most heap a review of at most {@linkcode LARGE_REVIEW_BYTES} may take to parse outside the large reviews'
 * share of time: 12 MiB, above the costliest review the bounds allow (an update at them whose values are empty
 * objects or nested ones is estimated at 7.6 MiB; `lib/foreign/json_cost.ts`), below what 1 MiB of small objects
 * takes (17 to 29 MiB). A smaller review that would cost more to parse takes the share as a large one does, so no
 * review outside it holds the main thread longer than one the bounds allow.
 */
export const LARGE_REVIEW_COST = 12 * 1024 * 1024;

/**
 * Bytes of small reviews (at most {@linkcode LARGE_REVIEW_BYTES}) holding places at once: 8 MiB, a dozen reviews at
 * the bounds or hundreds of ordinary ones; a review that would pass it waits its turn (429) unless it is alone.
 * Their parse is charged to the heap budget; this bounds their bytes outside it (docs/architecture.md).
 */
export const REVIEW_PLACE_BYTES = 8 * 1024 * 1024;

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
 * the lane for at most 25 s. Only a review answered (200, allowed or denied) books its time: one refused before or
 * at its parse (413, 400, 503) has none booked, so a body no parse takes cannot close the lane.
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
 * The door to admission: reviews in at once, whoever sends them, and a lane of their own for large ones (over
 * {@linkcode LARGE_REVIEW_BYTES}): one at a time, within the byte bound, and at most {@linkcode LARGE_REVIEW_SHARE}
 * of the main thread's time, so that a caller sending megabytes neither takes the API server's small reviews' places
 * nor holds the hook calls the main thread relays. A review is let into the lane (`large`, for
 * {@linkcode bodyReader}) when it says it is large, or once its bytes turn out so, and answered 429 if it cannot
 * (the rest of its body unread); it takes one of the `concurrency` places once its whole body is in, so a caller
 * that trickles holds none. The API server then applies the webhook's failure policy to a 429, and a client sees
 * it as a refusal it may retry.
 */
export function webhookDoor(
  o: WebhookDoorOptions,
): { middleware: Middleware; large: LargeLane; largeBytes: number } {
  const all = new Gate(() => o.concurrency, o.placeBytes ?? REVIEW_PLACE_BYTES);
  // The requests whose review was not answered (refused at or before its parse): their lane time is not booked.
  const unanswered = new WeakSet<Request>();
  const lane = new Gate(() => 1, o.queueBytes);
  const share = o.largeShare ?? LARGE_REVIEW_SHARE;
  const time = new TimeShare(share, o.clock ?? (() => performance.now()), LARGE_REVIEW_BOOKED_MS);
  const retryAfter = String(o.retryAfterSeconds ?? 2);
  const large: LargeLane = (c, declared) => {
    const wait = time.wait();
    if (wait > 0) return overShare(c, wait);
    const size = declared ?? o.bodyLimitBytes;
    if (!lane.enter(size)) return busy(c, lane, "large admission reviews");
    let end: (() => void) | undefined;
    let released = false;
    return {
      grow: () => true,
      // Its time counts once its body is in: a body that trickles holds the lane's one place until its deadline,
      // not the main thread.
      arrived: () => void (end = time.start()),
      release: () => {
        if (released) return;
        released = true;
        if (!unanswered.has(c.req.raw)) end?.();
        lane.leave(size);
      },
    };
  };
  const middleware: Middleware = async (c, next) => {
    if (c.req.method !== "POST" || !o.known.has(`POST ${c.req.path}`)) return next();
    // A large review's bytes are its lane's; the places' bytes bound the small ones'.
    const bytes = c.get("body")?.byteLength ?? 0;
    const size = bytes > LARGE_REVIEW_BYTES ? 0 : bytes;
    if (!all.enter(size)) {
      unanswered.add(c.req.raw);
      return busy(c, all, "admission reviews");
    }
    let end: (() => void) | undefined;
    try {
      if (size > SCANNED_FROM && costly(c.get("body")!)) {
        const wait = time.wait();
        if (wait > 0) return overShare(c, wait);
        end = time.start();
      }
      await next();
    } finally {
      all.leave(size);
      if (c.res.status !== 200) unanswered.add(c.req.raw);
      else end?.();
    }
  };
  return { middleware, large, largeBytes: LARGE_REVIEW_BYTES };

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
      `busy: large admission reviews (over ${LARGE_REVIEW_BYTES} bytes, or ${COST_MIB} MiB to parse) may take ${percent}% of the main thread's time and the last took ${took} ms; retry in ${seconds}s`;
    return jsonError(c, 429, message);
  }
}

/** Small reviews from this size on are scanned for their cost (smaller ones cannot reach it): 64 KiB. */
const SCANNED_FROM = 64 * 1024;
const COST_MIB = LARGE_REVIEW_COST / (1024 * 1024);

/** Whether parsing `body` could take more than {@linkcode LARGE_REVIEW_COST} of heap (the scan stops there). */
function costly(body: ArrayBuffer): boolean {
  return jsonHeapEstimate(new Uint8Array(body), LARGE_REVIEW_COST) > LARGE_REVIEW_COST;
}
