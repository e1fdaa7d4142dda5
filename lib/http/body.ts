/**
 * Reading a request's body as it arrives, at the door: its bytes counted chunk by chunk (a chunked body too), the
 * byte limit (413) applied while reading, its time (408) counted from its headers' arrival, and its bytes charged
 * as they come to the door's reading budget, or, once past {@linkcode LARGE_BODY_BYTES}, to the door's large lane.
 * Places at the door are taken once the whole body is in, so a caller that trickles holds none.
 *
 * @module
 */
import type { Context, MiddlewareHandler } from "hono";
import { jsonError } from "./errors.ts";
import type { AppEnv } from "./env.ts";

/**
 * A body of more than this many bytes is large: the API server's reviews of our kinds are a few kilobytes, and
 * most hook calls are too. Small bodies are read within the door's reading budget; a large one needs the door's
 * large lane from the moment it says (`content-length`) or turns out (chunked) to be large.
 */
export const LARGE_BODY_BYTES = 64 * 1024;

/**
 * Bytes of small bodies being read at once when the service does not say: 2 MiB of hook calls, 4 MiB of reviews
 * (32 and 64 bodies of the largest small size; a review of our kinds is a few kilobytes).
 */
export const READING_BYTES = { hooks: 2 * 1024 * 1024, webhooks: 4 * 1024 * 1024 } as const;

/** A hold on a large lane: the bytes it covers grow with the body; given back once the request is answered. */
export interface Lease {
  /** Makes the hold cover `bytes` in all; false when the lane cannot. */
  grow(bytes: number): boolean;
  /** The whole body is in. */
  arrived?(): void;
  release(): void;
}

/** A door's large lane: a lease for a body that declares `declared` bytes (undefined: chunked), or the refusal. */
export type LargeLane = (c: Context<AppEnv>, declared: number | undefined) => Lease | Response;

/**
 * Bytes of bodies being read at once (small ones: a large one moves to its lane). When a chunk does not fit, the
 * readers reading longest are closed for it, oldest first: a caller that sends a few bytes and then waits cannot
 * keep out the API server's reviews, which arrive whole in milliseconds.
 */
export class ReadingBudget {
  readonly #max: number;
  #used = 0;
  readonly #readers = new Map<object, { bytes: number; evict: () => void }>();

  constructor(maxBytes: number) {
    this.#max = maxBytes;
  }

  /** Charges `bytes` more to `reader`, closing the oldest other readers for room; false when it cannot fit. */
  charge(reader: object, bytes: number, evict: () => void): boolean {
    if (bytes > this.#max) return false;
    let entry = this.#readers.get(reader);
    if (!entry) this.#readers.set(reader, entry = { bytes: 0, evict });
    if (entry.bytes + bytes > this.#max) return false;
    for (const [other, held] of this.#readers) {
      if (this.#used + bytes <= this.#max) break;
      if (other === reader) continue;
      this.#readers.delete(other);
      this.#used -= held.bytes;
      held.evict();
    }
    if (this.#used + bytes > this.#max) return false;
    entry.bytes += bytes;
    this.#used += bytes;
    return true;
  }

  /** Gives back what `reader` was charged (nothing once it was closed for another). */
  release(reader: object): void {
    const entry = this.#readers.get(reader);
    if (!entry) return;
    this.#readers.delete(reader);
    this.#used -= entry.bytes;
  }

  get used(): number {
    return this.#used;
  }

  get max(): number {
    return this.#max;
  }
}

/**
 * Bytes of large bodies held at once (being read, queued or running), each lease growing as its body arrives; one
 * holder alone may take any amount, so a body up to the limit always gets through on its own.
 */
export class ByteBudget {
  readonly #max: number;
  #used = 0;
  #holders = 0;

  constructor(maxBytes: number) {
    this.#max = maxBytes;
  }

  /** A lease of `bytes` to begin with, or undefined when it does not fit beside the others. */
  lease(bytes: number): Lease | undefined {
    if (this.#holders > 0 && this.#used + bytes > this.#max) return undefined;
    this.#holders++;
    this.#used += bytes;
    let held = bytes;
    let released = false;
    return {
      grow: (to) => {
        if (to <= held) return true;
        if (this.#holders > 1 && this.#used + to - held > this.#max) return false;
        this.#used += to - held;
        held = to;
        return true;
      },
      release: () => {
        if (released) return;
        released = true;
        this.#holders--;
        this.#used -= held;
      },
    };
  }

  get used(): number {
    return this.#used;
  }
}

/** What reading a body needs. */
export interface ReadOptions {
  /** The most bytes it may have: past it, 413. */
  readonly limit: number;
  /** Seconds it may take from its headers' arrival: past them, 408. */
  readonly seconds: number;
  /** Where its bytes are charged while it is small. */
  readonly small: ReadingBudget;
  /** Where it must go once large; none: anywhere. */
  readonly large?: LargeLane | undefined;
  /** Past this many bytes a body is large; {@linkcode LARGE_BODY_BYTES} by default (reviews: their own). */
  readonly largeBytes?: number | undefined;
}

/** The declared `content-length`, when it is a length. */
function declaredLength(header: string | undefined): number | undefined {
  const n = header === undefined ? NaN : Number(header);
  return Number.isSafeInteger(n) && n >= 0 ? n : undefined;
}

/** A lease that holds nothing: a door without a large lane. */
const OPEN: Lease = { grow: () => true, release: () => {} };

/** The answer to a body past the limit: 413 (the connection is closed with the rest unread). */
export function bodyTooLarge(c: Context<AppEnv>, limit: number): Response {
  c.set("failure", `the body is over the limit of ${limit} bytes`);
  return jsonError(c, 413, `request body exceeds the limit of ${limit} bytes`);
}

/** The answer to a body that did not arrive in time: 408, and the connection is closed unread. */
export function bodyTooSlowAfter(c: Context<AppEnv>, seconds: number): Response {
  c.set("failure", `the body did not arrive within ${seconds}s`);
  return jsonError(c, 408, `the request body did not arrive within ${seconds}s`);
}

/** The answer to a body whose connection failed while it was read (its caller rarely sees it). */
function bodyCut(c: Context<AppEnv>, received: number): Response {
  c.set("failure", `the body was cut off after ${received} bytes`);
  return jsonError(c, 400, `the request body was cut off after ${received} bytes`);
}

function readingBusy(c: Context<AppEnv>, budget: ReadingBudget, evicted: boolean): Response {
  c.header("Retry-After", "2");
  c.set(
    "failure",
    evicted ? "body not read: read longest when newer ones came" : "body not read: budget full",
  );
  const message = `busy: ${budget.max} bytes of request bodies are being read`;
  return jsonError(
    c,
    429,
    evicted ? `${message} and this one was read longest; retry later` : `${message}; retry later`,
  );
}

/**
 * Reads the body of `c` as it arrives, or answers why not: 413 past the limit, 408 past its time, 429 when the
 * reading budget or the large lane cannot take it (the connection is then closed with the rest unread). The bytes
 * come in one exact-size `ArrayBuffer` that can be handed to a worker without a copy; the lease, when the body is
 * large, is the caller's to release once the request is answered.
 */
export async function readBody(
  c: Context<AppEnv>,
  o: ReadOptions,
): Promise<{ bytes: ArrayBuffer; lease?: Lease } | Response> {
  const declared = declaredLength(c.req.header("content-length"));
  if (declared !== undefined && declared > o.limit) return bodyTooLarge(c, o.limit);
  const largeBytes = o.largeBytes ?? LARGE_BODY_BYTES;
  let lease: Lease | undefined;
  const enterLarge = (): Response | undefined => {
    const got = o.large ? o.large(c, declared) : OPEN;
    if (got instanceof Response) return got;
    lease = got;
  };
  if (declared !== undefined && declared > largeBytes) {
    const refused = enterLarge();
    if (refused) return refused;
  }
  const stream = c.req.raw.body;
  if (!stream) return { bytes: new ArrayBuffer(0), ...(lease ? { lease } : {}) };
  const reader = stream.getReader();
  const me = {};
  let stop!: (why: "late" | "evicted") => void;
  const stopped = new Promise<"late" | "evicted">((resolve) => (stop = resolve));
  const arrivedAt = c.env?.arrivedAt ?? performance.now();
  const timer = setTimeout(() => stop("late"), Math.max(0, arrivedAt + o.seconds * 1000 - performance.now()));
  // Grown in place as chunks arrive (each copied in once): no reallocation, and no more memory than received.
  const buffer = new ArrayBuffer(0, { maxByteLength: o.limit });
  let received = 0;
  let done = false;
  try {
    for (;;) {
      const next = await Promise.race([reader.read(), stopped]).catch(() => "cut" as const);
      if (next === "cut") return bodyCut(c, received);
      if (next === "late") return bodyTooSlowAfter(c, o.seconds);
      if (next === "evicted") return readingBusy(c, o.small, true);
      if (next.done) break;
      const total = received + next.value.byteLength;
      if (total > o.limit) return bodyTooLarge(c, o.limit);
      if (!lease && total > largeBytes) {
        o.small.release(me);
        const refused = enterLarge();
        if (refused) return refused;
      }
      if (lease ? !lease.grow(total) : !o.small.charge(me, next.value.byteLength, () => stop("evicted"))) {
        return lease ? largeBusy(c, largeBytes) : readingBusy(c, o.small, false);
      }
      buffer.resize(total);
      new Uint8Array(buffer, received).set(next.value);
      received = total;
    }
    done = true;
  } finally {
    clearTimeout(timer);
    o.small.release(me);
    if (!done) lease?.release();
  }
  const bytes = (buffer as ArrayBuffer & { transferToFixedLength(): ArrayBuffer }).transferToFixedLength();
  return { bytes, ...(lease ? { lease } : {}) };
}

function largeBusy(c: Context<AppEnv>, largeBytes: number): Response {
  c.header("Retry-After", "2");
  c.set("failure", "large body not read: its lane is full");
  return jsonError(
    c,
    429,
    `busy: the bodies over ${largeBytes} bytes in progress fill their lane; retry later`,
  );
}

/** What {@linkcode bodyReader} needs. */
export interface BodyReaderOptions {
  /** `METHOD path` of the routes whose bodies it reads. */
  readonly known: ReadonlySet<string>;
  readonly limit: number;
  /** Seconds a body may take, for this request. */
  readonly seconds: (c: Context<AppEnv>) => number;
  readonly small: ReadingBudget;
  readonly large?: LargeLane | undefined;
  readonly largeBytes?: number | undefined;
}

/**
 * Reads the body of every POST to a known route before anything after it runs ({@linkcode readBody}), sets it as
 * `body`, and gives back its large lane's lease once the request is answered.
 */
export function bodyReader(o: BodyReaderOptions): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    if (c.req.method !== "POST" || !o.known.has(`POST ${c.req.path}`)) return next();
    const read = await readBody(c, {
      limit: o.limit,
      seconds: o.seconds(c),
      small: o.small,
      large: o.large,
      largeBytes: o.largeBytes,
    });
    if (read instanceof Response) return read;
    c.set("body", read.bytes);
    // What the routes read it with (`c.req.arrayBuffer()` and the rest) answers from these bytes, no copy.
    (c.req.bodyCache as { arrayBuffer?: Promise<ArrayBuffer> }).arrayBuffer = Promise.resolve(read.bytes);
    read.lease?.arrived?.();
    try {
      await next();
    } finally {
      read.lease?.release();
    }
  };
}
