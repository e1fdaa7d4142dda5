/**
 * List and watch a collection, keeping a reduced copy of each object: the informer loop, small. It lists in
 * pages, watches from the list's resourceVersion (resuming from the last event's on reconnect, with bookmarks),
 * relists on 410 Gone, and backs off with jitter on errors. Every response is read with a size cap and every
 * stream with an idle deadline, so a server that lies or hangs costs a bounded amount of memory and time.
 *
 * @module
 */
import { readEvents } from "./chunks.ts";
import { decode, type FullKubeClient, KubeApiError, listPages, pageProjection, readBytes } from "./client.ts";
import { objectKey } from "../contract/object.ts";
import { bounded, members, merge, type Projection, WHOLE } from "../foreign/mod.ts";

/** How a watch is doing. */
export type WatchHealth =
  | { readonly state: "connecting" }
  | { readonly state: "watching" }
  | { readonly state: "failing"; readonly error: KubeApiError; readonly attempts: number };

/** Options of {@linkcode startWatch}. */
export interface WatchOptions<T> {
  readonly client: FullKubeClient;
  /** The collection, e.g. `/api/v1/services` or `/apis/butler.butlerlabs.dev/v1alpha1/tenantclusters`. */
  readonly path: string;
  /**
   * What of each object is parsed at all (see `lib/foreign/project.ts`): the rest of the bytes is skipped, never
   * built. The whole object when unset. The watch adds what it needs itself (name, namespace, resourceVersion).
   */
  readonly projection?: Projection;
  /** Reduces an object (as projected) to what is kept; `undefined` drops it (and removes an earlier copy). */
  readonly select: (raw: unknown) => T | undefined;
  /** Objects kept at most; beyond, new ones are not kept and `overflow` is set until the next list. */
  readonly maxItems?: number;
  /** Largest list page or watch event read, in bytes (default 8 MiB for a page, 1 MiB for an event). */
  readonly maxPageBytes?: number;
  readonly maxEventBytes?: number;
  /**
   * Objects per list page (default 500); a page over `maxPageBytes`, or whose parse the client's heap budget cannot
   * hold now, is asked again with half as many, down to one.
   */
  readonly pageSize?: number;
  /**
   * List pages read at most (default: enough for `maxItems` and two more, else 10,000): a server that answers
   * `continue` forever ends the list there, which then counts as incomplete (`overflow`).
   */
  readonly maxListPages?: number;
  /** Per-request timeout of list pages (default 15 s). */
  readonly listTimeoutMs?: number;
  /** Server-side watch duration (default 40–60 s, jittered); the stream is dropped after it plus 20 s idle. */
  readonly watchSeconds?: () => number;
  /** First backoff (default 500 ms), doubled per failure up to `maxBackoffMs` (default 30 s), full jitter. */
  readonly backoffMs?: number;
  readonly maxBackoffMs?: number;
  readonly random?: () => number;
  /** Milliseconds since the epoch; `Date.now` by default. */
  readonly clock?: () => number;
  /** Waits `ms` between attempts, or until `signal` aborts (the watch stopped); a timer by default. */
  readonly sleep?: (ms: number, signal: AbortSignal) => Promise<void>;
  /**
   * Called after the kept objects changed: with the object's key after an event that changed it, without one
   * after a list (everything may have changed).
   */
  readonly onChange?: (key?: string) => void;
  /** Called whenever {@linkcode Watcher.resourceVersion} moves (a list, an event, a bookmark). */
  readonly onProgress?: (resourceVersion: string) => void;
  /** Called when the health changes. */
  readonly onHealth?: (health: WatchHealth) => void;
}

/** A running watch. */
export interface Watcher<T> {
  /** The kept objects by `namespace/name` (or `name` for cluster-scoped ones). */
  readonly items: ReadonlyMap<string, T>;
  readonly health: WatchHealth;
  /** When the server last answered (list, watch start, event or bookmark), in epoch milliseconds; 0 never. */
  readonly lastContact: number;
  /** True once a complete list was read. */
  readonly synced: boolean;
  /**
   * The resourceVersion the kept objects reflect: the list's, then each event's or bookmark's. Every change of
   * the collection up to it has been applied.
   */
  readonly resourceVersion: string | undefined;
  /** True when objects were not kept for `maxItems`. */
  readonly overflow: boolean;
  /** Stops the watch and waits for its loop to end. */
  stop(): Promise<void>;
}

class Gone extends Error {}

const META = (raw: unknown) =>
  (raw as { metadata?: { namespace?: string; name?: string; resourceVersion?: string } } | null)?.metadata;

/** The key of an object: `namespace/name`, or `name` without a namespace. */
export function keyOf(raw: unknown): string | undefined {
  const m = META(raw);
  if (typeof m?.name !== "string") return undefined;
  return objectKey({
    metadata: { name: m.name, namespace: typeof m.namespace === "string" ? m.namespace : undefined },
  });
}

const asApiError = (err: unknown, path: string): KubeApiError =>
  err instanceof KubeApiError ? err : new KubeApiError(
    0,
    err instanceof DOMException && (err.name === "TimeoutError" || err.name === "AbortError")
      ? "Timeout"
      : err instanceof SyntaxError
      ? "BadResponse"
      : "Unreachable",
    err instanceof SyntaxError
      ? "the server sent something that is not JSON"
      : err instanceof Error
      ? err.message
      : String(err),
    path,
  );

/**
 * Starts listing and watching `path`.
 *
 * @example
 * ```ts
 * const services = startWatch({ client, path: "/api/v1/services", select: (s) => s, onChange: () => {} });
 * // later
 * await services.stop();
 * ```
 */
export function startWatch<T>(options: WatchOptions<T>): Watcher<T> {
  const loop = new WatchLoop(options);
  const done = loop.run();
  return {
    get items() {
      return loop.items;
    },
    get health() {
      return loop.health;
    },
    get lastContact() {
      return loop.lastContact;
    },
    get synced() {
      return loop.synced;
    },
    get resourceVersion() {
      return loop.resourceVersion;
    },
    get overflow() {
      return loop.overflow;
    },
    async stop() {
      loop.stopper.abort();
      await done;
    },
  };
}

/** The state of one watch and the steps of its loop: list, watch, apply an event, back off. */
class WatchLoop<T> {
  readonly stopper = new AbortController();
  items = new Map<string, T>();
  health: WatchHealth = { state: "connecting" };
  lastContact = 0;
  synced = false;
  overflow = false;
  resourceVersion: string | undefined;
  readonly #o: WatchOptions<T>;
  readonly #random: () => number;
  readonly #clock: () => number;
  readonly #maxItems: number;
  readonly #pageSize: number;
  readonly #maxListPages: number;
  readonly #sep: string;
  readonly #object: Projection;
  readonly #event: Projection;

  constructor(options: WatchOptions<T>) {
    this.#o = options;
    this.#random = options.random ?? Math.random;
    this.#clock = options.clock ?? Date.now;
    this.#maxItems = options.maxItems ?? Infinity;
    this.#pageSize = options.pageSize ?? 500;
    this.#maxListPages = options.maxListPages ??
      (Number.isFinite(this.#maxItems) ? Math.ceil(this.#maxItems / this.#pageSize) + 2 : 10_000);
    this.#sep = options.path.includes("?") ? "&" : "?";
    this.#object = merge(options.projection ?? WHOLE, IDENTITY);
    this.#event = members({ type: bounded(64), object: merge(this.#object, STATUS) });
  }

  /** Lists, then watches from the list's version, until stopped; relists on 410, backs off on errors. */
  async run(): Promise<void> {
    let failures = 0;
    while (!this.stopper.signal.aborted) {
      try {
        if (this.resourceVersion === undefined) await this.list();
        const started = this.#clock();
        // Healthy once the server answers the watch (watch() says so), not while a reconnect is only attempted:
        // a tenant that is gone must not look watched between attempts. The backoff starts again only once the
        // watch applied something: a stream that opens and then fails is a failure like any other, or a server
        // that always does so would be asked again at once, for ever.
        await this.watch(() => (failures = 0));
        // A server that ends every watch at once must not make this a busy loop.
        if (this.#clock() - started < 1000) await this.pause(1000);
      } catch (err) {
        if (this.stopper.signal.aborted) break;
        if (err instanceof Gone) {
          this.resourceVersion = undefined;
          continue;
        }
        failures++;
        this.setHealth({ state: "failing", error: asApiError(err, this.#o.path), attempts: failures });
        // A watch dropped after its list worked resumes from the last resourceVersion; a failed list relists.
        const { backoffMs = 500, maxBackoffMs = 30_000 } = this.#o;
        await this.pause(this.#random() * Math.min(maxBackoffMs, backoffMs * 2 ** (failures - 1)));
      }
    }
  }

  setHealth(h: WatchHealth): void {
    if (h.state === this.health.state && h.state !== "failing") return;
    this.health = h;
    this.#o.onHealth?.(h);
  }

  /** Keeps or drops one object; its key when the kept set changed. */
  put(map: Map<string, T>, raw: unknown, deleted: boolean): string | undefined {
    const key = keyOf(raw);
    if (!key) return undefined;
    const value = deleted ? undefined : this.#o.select(raw);
    if (value === undefined) return map.delete(key) ? key : undefined;
    if (!map.has(key) && map.size >= this.#maxItems) {
      this.overflow = true;
      return undefined;
    }
    map.set(key, value);
    return key;
  }

  progress(rv: string): void {
    this.resourceVersion = rv;
    this.#o.onProgress?.(rv);
  }

  /**
   * Lists the collection in pages (a page count bounded: past it, the list is incomplete), each read through the
   * door of `lib/foreign` as the projection keeps it, and replaces the kept set.
   */
  async list(): Promise<void> {
    const { client, path, maxPageBytes = 8 * 1024 * 1024, listTimeoutMs = 15_000 } = this.#o;
    const next = new Map<string, T>();
    this.overflow = false;
    let rv: string | undefined;
    // A page of more objects than are kept builds no more of them than are kept, and one to say it overflowed: the
    // rest is skipped in the bytes (a tenant's 8 MiB page of `{}` is 2.8 million objects).
    const page = pageProjection(
      this.#object,
      Number.isFinite(this.#maxItems) ? this.#maxItems + 1 : undefined,
    );
    const complete = await listPages(
      async (limit, cont) => {
        const url = `${path}${this.#sep}limit=${limit}${cont ? `&continue=${encodeURIComponent(cont)}` : ""}`;
        const signal = AbortSignal.any([this.stopper.signal, AbortSignal.timeout(listTimeoutMs)]);
        const res = await client.stream(url, signal);
        return decode(await readBytes(res, maxPageBytes, path), client.budget, path, page) as ListPageOf;
      },
      this.#pageSize,
      (p) => {
        this.lastContact = this.#clock();
        for (const raw of p.items ?? []) this.put(next, raw, false);
        rv ??= p.metadata?.resourceVersion;
      },
      this.#maxListPages,
    );
    if (!complete) this.overflow = true;
    this.items = next;
    this.synced = true;
    if (rv) this.progress(rv);
    else this.resourceVersion = rv;
    this.#o.onChange?.();
  }

  /**
   * One watch from the kept version, with bookmarks, dropped after its duration plus 20 s without a byte. An event
   * it cannot read (over the cap, too costly to parse, not JSON) is never resumed onto: a watch from the same
   * version would meet it again, for ever, the kept objects frozen at it. The collection is listed again instead,
   * in pages of what fits, from a version past it.
   */
  async watch(progressed: () => void): Promise<void> {
    const { client, path, maxEventBytes = 1024 * 1024 } = this.#o;
    const seconds = (this.#o.watchSeconds ?? (() => 40 + Math.floor(this.#random() * 20)))();
    const local = new AbortController();
    const signal = AbortSignal.any([this.stopper.signal, local.signal]);
    let idle = setTimeout(() => local.abort(), (seconds + 20) * 1000);
    const rearm = () => {
      clearTimeout(idle);
      idle = setTimeout(() => local.abort(), (seconds + 20) * 1000);
    };
    try {
      const rv = this.resourceVersion;
      const res = await client.stream(
        `${path}${this.#sep}watch=1&allowWatchBookmarks=true&timeoutSeconds=${seconds}` +
          (rv ? `&resourceVersion=${encodeURIComponent(rv)}` : ""),
        signal,
      );
      this.lastContact = this.#clock();
      this.setHealth({ state: "watching" });
      await readEvents(res.body!, maxEventBytes, path, () => {
        rearm();
        this.lastContact = this.#clock();
      }, (line) => {
        let event: WatchEvent;
        try {
          event = decode(line, client.budget, path, this.#event) as WatchEvent;
        } catch (err) {
          throw this.unreadable(err);
        }
        this.handle(event);
        progressed();
      }).catch((err) => {
        throw this.unreadable(err);
      });
    } finally {
      clearTimeout(idle);
    }
  }

  /** An error reading an event: when the event itself cannot be read, the next round lists again. */
  unreadable(err: unknown): unknown {
    if (err instanceof KubeApiError && UNREADABLE.has(err.reason) && err.status === 0) {
      this.resourceVersion = undefined;
    }
    return err;
  }

  /** Applies one watch event: an object added, changed or deleted, a bookmark, or an error (410: relist). */
  handle(event: WatchEvent): void {
    if (event.type === "ERROR") {
      const status = event.object as { code?: number; reason?: string; message?: string } | undefined;
      if (status?.code === 410) throw new Gone();
      throw new KubeApiError(
        status?.code ?? 0,
        status?.reason ?? "WatchError",
        status?.message ?? "",
        this.#o.path,
      );
    }
    const rv = META(event.object)?.resourceVersion;
    if (
      event.type === "BOOKMARK" ||
      (event.type !== "ADDED" && event.type !== "MODIFIED" && event.type !== "DELETED")
    ) {
      if (typeof rv === "string" && rv) this.progress(rv);
      return;
    }
    const key = this.put(this.items, event.object, event.type === "DELETED");
    // The object first, then the version: a reader that sees the version finds the object applied.
    if (typeof rv === "string" && rv) this.resourceVersion = rv;
    if (key !== undefined) this.#o.onChange?.(key);
    if (typeof rv === "string" && rv) this.#o.onProgress?.(rv);
  }

  /** Waits `ms`, or until the watch is stopped. */
  pause(ms: number): Promise<void> {
    const signal = this.stopper.signal;
    return this.#o.sleep ? this.#o.sleep(ms, signal) : new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(t);
        resolve();
      };
      const t = setTimeout(() => {
        signal.removeEventListener("abort", wake);
        resolve();
      }, ms);
      signal.addEventListener("abort", wake, { once: true });
    });
  }
}

/** Why an event could not be read (the client's own reasons, status 0): over the cap, too costly, not JSON. */
const UNREADABLE = new Set(["TooLarge", "TooCostly", "BadResponse"]);

/**
 * The largest watch event read from the management API server: an object of the API server's 3 MiB request limit
 * (etcd keeps 1.5 MiB), as JSON. A collection of objects a team writes is watched with it: an event past a
 * smaller cap would be read only by listing again.
 */
export const API_OBJECT_EVENT_BYTES = 4 * 1024 * 1024;

/** A watch event as the projection keeps it. */
type WatchEvent = { type?: string; object?: unknown };
type ListPageOf = { items?: unknown[]; metadata?: { resourceVersion?: string; continue?: string } };

/** What a watch reads of every object, whatever else its projection keeps: where it is, and its version. */
const IDENTITY = members({
  metadata: members({ name: bounded(253), namespace: bounded(253), resourceVersion: bounded(64) }),
});

/** What an ERROR event's Status says. */
const STATUS = members({ code: WHOLE, reason: bounded(256), message: bounded(4096) });
