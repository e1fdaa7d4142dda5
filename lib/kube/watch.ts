/**
 * List and watch a collection, keeping a reduced copy of each object: the informer loop, small. It lists in
 * pages, watches from the list's resourceVersion (resuming from the last event's on reconnect, with bookmarks),
 * relists on 410 Gone, and backs off with jitter on errors. Every response is read with a size cap and every
 * stream with an idle deadline, so a server that lies or hangs costs a bounded amount of memory and time.
 *
 * @module
 */
import { chunkReader } from "./chunks.ts";
import { type FullKubeClient, KubeApiError } from "./client.ts";
import { objectKey } from "../contract/object.ts";

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
  /** Reduces an object to what is kept; `undefined` drops it (and removes an earlier copy). */
  readonly select: (raw: unknown) => T | undefined;
  /** Objects kept at most; beyond, new ones are not kept and `overflow` is set until the next list. */
  readonly maxItems?: number;
  /** Largest list page or watch event read, in bytes (default 8 MiB for a page, 1 MiB for an event). */
  readonly maxPageBytes?: number;
  readonly maxEventBytes?: number;
  /** Objects per list page (default 500). */
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

/** Reads a response body as text, failing past `max` bytes without reading the rest. */
async function readCapped(res: Response, max: number, path: string): Promise<string> {
  const reader = res.body!.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > max) {
      await reader.cancel();
      throw new KubeApiError(0, "TooLarge", `response over ${max} bytes`, path);
    }
    chunks.push(value);
  }
  const all = new Uint8Array(size);
  let at = 0;
  for (const c of chunks) {
    all.set(c, at);
    at += c.byteLength;
  }
  return new TextDecoder().decode(all);
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
  const {
    client,
    path,
    select,
    maxItems = Infinity,
    maxPageBytes = 8 * 1024 * 1024,
    maxEventBytes = 1024 * 1024,
    pageSize = 500,
    listTimeoutMs = 15_000,
    backoffMs = 500,
    maxBackoffMs = 30_000,
  } = options;
  const random = options.random ?? Math.random;
  const clock = options.clock ?? Date.now;
  const maxListPages = options.maxListPages ??
    (Number.isFinite(maxItems) ? Math.ceil(maxItems / pageSize) + 2 : 10_000);
  const watchSeconds = options.watchSeconds ?? (() => 40 + Math.floor(random() * 20));
  const stopper = new AbortController();
  let items = new Map<string, T>();
  let health: WatchHealth = { state: "connecting" };
  let lastContact = 0;
  let synced = false;
  let overflow = false;
  let resourceVersion: string | undefined;
  const sep = path.includes("?") ? "&" : "?";

  const setHealth = (h: WatchHealth) => {
    if (h.state === health.state && h.state !== "failing") return;
    health = h;
    options.onHealth?.(h);
  };

  /** Keeps or drops one object; its key when the kept set changed. */
  function put(map: Map<string, T>, raw: unknown, deleted: boolean): string | undefined {
    const key = keyOf(raw);
    if (!key) return undefined;
    const value = deleted ? undefined : select(raw);
    if (value === undefined) return map.delete(key) ? key : undefined;
    if (!map.has(key) && map.size >= maxItems) {
      overflow = true;
      return undefined;
    }
    map.set(key, value);
    return key;
  }

  const progress = (rv: string) => {
    resourceVersion = rv;
    options.onProgress?.(rv);
  };

  async function list(): Promise<void> {
    const next = new Map<string, T>();
    overflow = false;
    let cont: string | undefined;
    let rv: string | undefined;
    let pages = 0;
    do {
      if (pages++ >= maxListPages) {
        overflow = true;
        break;
      }
      const url = `${path}${sep}limit=${pageSize}${cont ? `&continue=${encodeURIComponent(cont)}` : ""}`;
      const signal = AbortSignal.any([stopper.signal, AbortSignal.timeout(listTimeoutMs)]);
      const res = await client.stream(url, signal);
      const page = JSON.parse(await readCapped(res, maxPageBytes, path)) as {
        items?: unknown[];
        metadata?: { resourceVersion?: string; continue?: string };
      };
      lastContact = clock();
      for (const raw of page.items ?? []) put(next, raw, false);
      rv ??= page.metadata?.resourceVersion;
      cont = page.metadata?.continue || undefined;
    } while (cont);
    items = next;
    synced = true;
    if (rv) progress(rv);
    else resourceVersion = rv;
    options.onChange?.();
  }

  async function watch(opened: () => void): Promise<void> {
    const seconds = watchSeconds();
    const local = new AbortController();
    const signal = AbortSignal.any([stopper.signal, local.signal]);
    let idle = setTimeout(() => local.abort(), (seconds + 20) * 1000);
    const rearm = () => {
      clearTimeout(idle);
      idle = setTimeout(() => local.abort(), (seconds + 20) * 1000);
    };
    try {
      const res = await client.stream(
        `${path}${sep}watch=1&allowWatchBookmarks=true&timeoutSeconds=${seconds}` +
          (resourceVersion ? `&resourceVersion=${encodeURIComponent(resourceVersion)}` : ""),
        signal,
      );
      lastContact = clock();
      setHealth({ state: "watching" });
      opened();
      // A TextDecoder rather than a TextDecoderStream, and a small buffer of our own: one watch per tenant
      // waits on a read all the time, and each piped stream or default read buffer costs memory.
      const reader = chunkReader(res.body!);
      const decoder = new TextDecoder();
      let buffer = "";
      for (;;) {
        const value = await reader.read();
        if (!value) return;
        rearm();
        lastContact = clock();
        buffer += decoder.decode(value, { stream: true });
        let nl: number;
        while ((nl = buffer.indexOf("\n")) >= 0) {
          const line = buffer.slice(0, nl);
          buffer = buffer.slice(nl + 1);
          if (line.length > maxEventBytes) {
            await reader.cancel();
            throw new KubeApiError(0, "TooLarge", `watch event over ${maxEventBytes} bytes`, path);
          }
          if (line.trim()) handle(JSON.parse(line));
        }
        if (buffer.length > maxEventBytes) {
          await reader.cancel();
          throw new KubeApiError(0, "TooLarge", `watch event over ${maxEventBytes} bytes`, path);
        }
      }
    } finally {
      clearTimeout(idle);
    }
  }

  function handle(event: { type?: string; object?: unknown }): void {
    if (event.type === "ERROR") {
      const status = event.object as { code?: number; reason?: string; message?: string } | undefined;
      if (status?.code === 410) throw new Gone();
      throw new KubeApiError(status?.code ?? 0, status?.reason ?? "WatchError", status?.message ?? "", path);
    }
    const rv = META(event.object)?.resourceVersion;
    if (
      event.type === "BOOKMARK" ||
      (event.type !== "ADDED" && event.type !== "MODIFIED" && event.type !== "DELETED")
    ) {
      if (typeof rv === "string" && rv) progress(rv);
      return;
    }
    const key = put(items, event.object, event.type === "DELETED");
    // The object first, then the version: a reader that sees the version finds the object applied.
    if (typeof rv === "string" && rv) resourceVersion = rv;
    if (key !== undefined) options.onChange?.(key);
    if (typeof rv === "string" && rv) options.onProgress?.(rv);
  }

  const pause = (ms: number) =>
    options.sleep ? options.sleep(ms, stopper.signal) : new Promise<void>((resolve) => {
      const wake = () => {
        clearTimeout(t);
        resolve();
      };
      const t = setTimeout(() => {
        stopper.signal.removeEventListener("abort", wake);
        resolve();
      }, ms);
      stopper.signal.addEventListener("abort", wake, { once: true });
    });

  const done = (async () => {
    let failures = 0;
    while (!stopper.signal.aborted) {
      try {
        if (resourceVersion === undefined) await list();
        const started = clock();
        // Healthy once the server answers the watch (watch() says so), not while a reconnect is only attempted:
        // a tenant that is gone must not look watched between attempts.
        await watch(() => (failures = 0));
        // A server that ends every watch at once must not make this a busy loop.
        if (clock() - started < 1000) await pause(1000);
      } catch (err) {
        if (stopper.signal.aborted) break;
        if (err instanceof Gone) {
          resourceVersion = undefined;
          continue;
        }
        failures++;
        setHealth({ state: "failing", error: asApiError(err, path), attempts: failures });
        // A watch dropped after its list worked resumes from the last resourceVersion; a failed list relists.
        await pause(random() * Math.min(maxBackoffMs, backoffMs * 2 ** (failures - 1)));
      }
    }
  })();

  return {
    get items() {
      return items;
    },
    get health() {
      return health;
    },
    get lastContact() {
      return lastContact;
    },
    get synced() {
      return synced;
    },
    get resourceVersion() {
      return resourceVersion;
    },
    get overflow() {
      return overflow;
    },
    async stop() {
      stopper.abort();
      await done;
    },
  };
}
