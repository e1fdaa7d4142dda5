/**
 * A watch-backed read cache for admission, the informer idea of Kubernetes' own ResourceQuota admission: each
 * cached collection is listed once and then watched ({@linkcode startWatch}: bookmarks, relist on 410,
 * resourceVersion tracking), and admission's GETs and LISTs of it are answered from memory. Paths it does not
 * cache, and reads marked `live`, go to the API.
 *
 * A cache is never a second source of truth:
 *
 * - nothing is answered before a collection's first complete list: a read waits for it a moment (the watches
 *   start on the first read, or at {@linkcode KubeCache.start}), then fails with a 503 `CacheNotSynced`, so the
 *   API server applies the webhook's failurePolicy, as for a failed read;
 * - a read that asks for `atLeast` a resourceVersion is answered from memory only once the watch has applied
 *   every change up to it; it waits for the watch a moment, then reads the API (resourceVersions are compared as
 *   the etcd revisions they are; one that is not a number is never taken as reached);
 * - what is kept of each object, and what a live read of a cached collection returns, is its projection
 *   (`lib/foreign/project.ts`): what a team stores beside the fields read is never parsed;
 * - writes always go to the API, under the precondition the caller gives.
 *
 * @module
 */
import { type FullKubeClient, KubeApiError, type KubeClient, type ReadFreshness } from "./client.ts";
import { apiReads, type CachedCollection, equalitySelector, labelsOf } from "./cache_reads.ts";

export type { CachedCollection };
import { isRevision, reached } from "./revision.ts";
import { startWatch, type Watcher, type WatchHealth, type WatchOptions } from "./watch.ts";

/** Options of {@linkcode createKubeCache}. */
export interface KubeCacheOptions {
  readonly client: FullKubeClient;
  readonly collections: readonly CachedCollection[];
  /**
   * How long an `atLeast` read waits for the watch before it reads the API (default 200 ms: a namespace's list
   * from the API costs less than a longer wait).
   */
  readonly waitMs?: number;
  /** How long a read waits for a collection's first list before it fails (default 3,000 ms). */
  readonly syncWaitMs?: number;
  /** How long a collection may fail to list and watch before the cache says it cannot decide (default 30,000 ms). */
  readonly staleMs?: number;
  /** Milliseconds since the epoch; `Date.now` by default. */
  readonly clock?: () => number;
  /** Called when a collection's watch changes health (a failing list or watch says why, attempt by attempt). */
  readonly onHealth?: (resource: string, health: WatchHealth) => void;
  /** Watch settings shared by every collection (tests shorten backoffs). */
  readonly watch?: Partial<
    Omit<WatchOptions<unknown>, "client" | "path" | "select" | "onChange" | "onProgress">
  >;
}

/** What a cache tells about itself, for metrics and tests. */
export interface KubeCacheStats {
  /** Objects kept, by resource. */
  readonly objects: Readonly<Record<string, number>>;
  /** The resourceVersion each collection's objects reflect, by resource. */
  readonly versions: Readonly<Record<string, string | undefined>>;
  /** Reads answered from memory and from the API (uncached paths, `live`, or an `atLeast` not reached in time). */
  readonly hits: number;
  readonly misses: number;
}

/** A {@linkcode KubeClient} that reads cached collections from memory. */
export interface KubeCache extends KubeClient {
  /** True once every collection has been listed. */
  readonly synced: boolean;
  /**
   * Why reads cannot be answered now, or undefined: a collection not listed yet, or whose list and watch have
   * failed for longer than `staleMs` (its objects are then as old as its last contact).
   */
  undecided(): string | undefined;
  /** Starts the watches now rather than at the first read (idempotent). */
  start(): void;
  stats(): KubeCacheStats;
  /** Stops every watch. */
  stop(): Promise<void>;
}

const PATH = /^(\/api\/v1|\/apis\/[^/?]+\/[^/?]+)(?:\/namespaces\/([^/?]+))?\/([^/?]+)(?:\/([^/?]+))?$/;

interface Entry {
  readonly collection: CachedCollection;
  readonly watcher: Watcher<unknown>;
  /** Kept objects by namespace ("" for cluster-scoped ones), then name. */
  readonly byNamespace: Map<string, Map<string, unknown>>;
  /** The items of a namespace (or of all, under `*`) as last handed out, until that namespace changes. */
  readonly lists: Map<string, unknown[]>;
  readonly waiters: Set<() => void>;
}

const splitKey = (key: string): [string, string] => {
  const slash = key.indexOf("/");
  return slash < 0 ? ["", key] : [key.slice(0, slash), key.slice(slash + 1)];
};

/** Lists and watches one collection into its entry's namespace index, waking the reads that wait for it. */
function watchCollection(options: KubeCacheOptions, collection: CachedCollection): Entry {
  const client = options.client;
  const byNamespace = new Map<string, Map<string, unknown>>();
  const lists = new Map<string, unknown[]>();
  const waiters = new Set<() => void>();
  const field = collection.name
    ? `?fieldSelector=${encodeURIComponent(`metadata.name=${collection.name}`)}`
    : "";
  const entry: Entry = {
    collection,
    byNamespace,
    lists,
    waiters,
    watcher: startWatch<unknown>({
      ...options.watch,
      client,
      path: `${collection.prefix}/${collection.resource}${field}`,
      ...(collection.projection ? { projection: collection.projection } : {}),
      select: collection.select ?? ((raw: unknown) => raw),
      ...(options.onHealth
        ? { onHealth: (h: WatchHealth) => options.onHealth!(collection.resource, h) }
        : {}),
      onChange: (key) => {
        if (key === undefined) rebuild(entry);
        else place(entry, key, entry.watcher.items.get(key));
        if (entry.watcher.synced) { for (const wake of [...waiters]) wake(); }
      },
      onProgress: () => {
        for (const wake of [...waiters]) wake();
      },
    }),
  };
  return entry;
}

/** Sets (or, `undefined`, removes) one object in the namespace index, and forgets the lists it was in. */
function place(entry: Entry, key: string, value: unknown): void {
  const [ns, name] = splitKey(key);
  let names = entry.byNamespace.get(ns);
  if (value === undefined) names?.delete(name);
  else if (names) names.set(name, value);
  else entry.byNamespace.set(ns, names = new Map([[name, value]]));
  if (names && !names.size) entry.byNamespace.delete(ns);
  entry.lists.delete(ns);
  entry.lists.delete("*");
}

/** The namespace index anew, after a list. */
function rebuild(entry: Entry): void {
  entry.byNamespace.clear();
  entry.lists.clear();
  for (const [key, value] of entry.watcher.items) place(entry, key, value);
}

/** Resolves true once `ready()` holds (checked as the watch moves), or false after `ms`. */
function until(entry: Entry, ready: () => boolean, ms: number): Promise<boolean> | boolean {
  if (ready()) return true;
  return new Promise((resolve) => {
    const done = (ok: boolean) => {
      clearTimeout(timer);
      entry.waiters.delete(check);
      resolve(ok);
    };
    const check = () => {
      if (ready()) done(true);
    };
    const timer = setTimeout(() => done(false), ms);
    entry.waiters.add(check);
  });
}

/** The items of a namespace (or of all), the same list until that namespace changes. */
function listOf(entry: Entry, namespace: string | undefined): unknown[] {
  const key = namespace ?? "*";
  let items = entry.lists.get(key);
  if (!items) {
    items = namespace === undefined
      ? [...entry.byNamespace.values()].flatMap((names) => [...names.values()])
      : [...(entry.byNamespace.get(namespace)?.values() ?? [])];
    entry.lists.set(key, items);
  }
  return items;
}

/**
 * A cached route that may answer a read now, or undefined to read the API: never before the collection's first
 * list (503 `CacheNotSynced` after `syncWaitMs`), and for an `atLeast` read only once the watch reached that
 * version (waiting `waitMs` at most, none in a hurry; a version that is not a number is never reached).
 */
async function servableRoute<R extends { entry: Entry }>(
  r: R | undefined,
  path: string,
  freshness: ReadFreshness,
  waits: { waitMs: number; syncWaitMs: number },
): Promise<R | undefined> {
  if (!r) return undefined;
  const w = r.entry.watcher;
  if (!(await until(r.entry, () => w.synced, waits.syncWaitMs))) {
    throw new KubeApiError(
      503,
      "CacheNotSynced",
      `the admission cache of ${r.entry.collection.resource} has not been listed yet`,
      path,
    );
  }
  const want = freshness.atLeast;
  if (want === undefined) return r;
  if (!isRevision(want)) return undefined;
  return (await until(r.entry, () => reached(w.resourceVersion, want), freshness.hurry ? 0 : waits.waitMs))
    ? r
    : undefined;
}

/** What the cache tells of itself: objects and versions by resource, and its reads. */
function statsOf(entries: readonly Entry[], hits: number, misses: number): KubeCacheStats {
  return {
    objects: Object.fromEntries(entries.map((e) => [e.collection.resource, e.watcher.items.size])),
    versions: Object.fromEntries(entries.map((e) => [e.collection.resource, e.watcher.resourceVersion])),
    hits,
    misses,
  };
}

/** Why the collections cannot answer now: one not listed yet, or failing to reach the API for over `staleMs`. */
function undecidedOf(entries: Iterable<Entry>, now: number, staleMs: number): string | undefined {
  for (const { collection, watcher } of entries) {
    if (!watcher.synced) return `the admission cache of ${collection.resource} has not been listed yet`;
    const h = watcher.health;
    if (h.state === "failing" && now - watcher.lastContact > staleMs) {
      const since = Math.round((now - watcher.lastContact) / 1000);
      return `the admission cache of ${collection.resource} has not reached the API for ${since}s (${h.error.reason})`;
    }
  }
  return undefined;
}

/**
 * Starts watching `collections` and returns a client that reads them from memory.
 *
 * @example
 * ```ts
 * const kube = createKubeCache({
 *   client,
 *   collections: [{ prefix: "/apis/butler.butlerlabs.dev/v1alpha1", resource: "teams" }],
 * });
 * await kube.get("/apis/butler.butlerlabs.dev/v1alpha1/teams/payments"); // from memory once synced
 * ```
 */
export function createKubeCache(options: KubeCacheOptions): KubeCache {
  const { client, waitMs = 200, syncWaitMs = 3000 } = options;
  const waits = { waitMs, syncWaitMs };
  let hits = 0, misses = 0;
  const entries = new Map<string, Entry>();
  let started = false;

  function start(): void {
    if (started) return;
    started = true;
    for (const collection of options.collections) {
      entries.set(key(collection), watchCollection(options, collection));
    }
  }

  const key = (c: { prefix: string; resource: string }) => `${c.prefix} ${c.resource}`;
  const cached = new Set(options.collections.map(key));

  /** The cached collection a path reads, with its namespace and name; undefined when not cached. */
  function route(path: string) {
    const m = PATH.exec(path);
    const collection = m && key({ prefix: m[1]!, resource: m[3]! });
    if (!m || !collection || !cached.has(collection)) return undefined;
    start();
    const entry = entries.get(collection)!;
    return {
      entry,
      namespace: m[2] === undefined ? undefined : decodeURIComponent(m[2]),
      name: m[4] === undefined ? undefined : decodeURIComponent(m[4]),
    };
  }

  const servable = (path: string, freshness: ReadFreshness) =>
    freshness.live ? undefined : servableRoute(route(path), path, freshness, waits);
  const api = apiReads(client, (path) => route(path)?.entry.collection);

  return {
    async get(path, freshness = {}) {
      const r = await servable(path, freshness);
      const { name: only } = r?.entry.collection ?? {};
      if (!r || r.name === undefined || (only !== undefined && r.name !== only)) {
        misses++;
        return api.get(path);
      }
      hits++;
      return r.entry.byNamespace.get(r.namespace ?? "")?.get(r.name);
    },
    async list(path, opts = {}) {
      const matches = opts.labelSelector ? equalitySelector(opts.labelSelector) : () => true;
      const r = matches ? await servable(path, opts) : undefined;
      if (!r || r.name !== undefined || !matches) {
        misses++;
        return api.list(path, opts.labelSelector ? { labelSelector: opts.labelSelector } : {});
      }
      hits++;
      const items = listOf(r.entry, r.namespace);
      return opts.labelSelector ? items.filter((o) => matches(labelsOf(o))) : items;
    },
    write: (method, path, body) => client.write(method, path, body),
    start,
    get synced() {
      if (!started) return false;
      return [...entries.values()].every((e) => e.watcher.synced);
    },
    undecided: () =>
      started
        ? undecidedOf(entries.values(), (options.clock ?? Date.now)(), options.staleMs ?? 30_000)
        : "the admission cache has not started",
    stats: () => statsOf([...entries.values()], hits, misses),
    async stop() {
      await Promise.all([...entries.values()].map((e) => e.watcher.stop()));
    },
  };
}
