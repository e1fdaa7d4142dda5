/**
 * A small Kubernetes API client for the parts that must use the API (admission): GET an object or a list, and
 * create or replace one object (the quota ledger, under a resourceVersion precondition), with a request timeout,
 * retries with backoff on 429, 5xx and network errors, and typed errors. Hand-written on `fetch` rather than `@kubernetes/client-node`: under Deno that library took 638 ms to
 * import and raised the process from 33 to 139 MiB RSS (docs/performance.md), for the few calls admission needs.
 *
 * Every answer is foreign bytes (a tenant's API server, or objects a team wrote): it is read up to a cap and parsed
 * through the door of `lib/foreign`, charged to the client's heap budget first, or projected to what the caller
 * keeps.
 *
 * @module
 */
import { createHeapBudget, type HeapBudget, type Projection } from "../foreign/mod.ts";
import { KubeApiError } from "./errors.ts";
import { apiError, decode, listAll, type ListPage, listPages, pageProjection, readBytes } from "./answers.ts";

export { KubeApiError };
export { decode, type ListPage, listPages, pageProjection, readBytes };

/**
 * How fresh a read must be. The API itself always satisfies both; a cache ({@linkcode createKubeCache}) serves
 * from memory only what it can serve at that freshness.
 */
export interface ReadFreshness {
  /** Read from the API, never from a cache: the object a write will be conditioned on, after a conflict. */
  readonly live?: boolean;
  /** A cached answer must reflect at least this resourceVersion of its collection. */
  readonly atLeast?: string;
  /** With `atLeast`: read the API at once rather than wait for the watch to reach it. */
  readonly hurry?: boolean;
}

/** How a read is made: its freshness, and what of each object is kept (the whole object by default). */
export interface ReadOptions extends ReadFreshness {
  /** What of the object (of each item, for a list) is parsed and kept; the rest is skipped unparsed. */
  readonly projection?: Projection;
}

/** What admission reads: one object (absent is `undefined`, not an error) or the items of a list. */
export interface KubeReader {
  /** GETs `path` (e.g. `/apis/butler.butlerlabs.dev/v1alpha1/teams/payments`); `undefined` when 404. */
  get(path: string, options?: ReadOptions): Promise<unknown | undefined>;
  /** GETs a collection `path`, page by page, with an optional label selector and returns its items. */
  list(path: string, options?: { labelSelector?: string } & ReadOptions): Promise<unknown[]>;
}

/** A {@linkcode KubeReader} that can also write, for the one object admission writes (the quota ledger). */
export interface KubeClient extends KubeReader {
  /**
   * POSTs (create) or PUTs (replace; `metadata.resourceVersion` in `body` is the precondition) `body` at `path`
   * and returns the stored object. A 409 (conflict or already exists) is a {@linkcode KubeApiError} at once: the
   * caller re-reads and decides again. 429, 5xx and network errors are retried like reads (a replay of a write
   * that did land then fails its precondition).
   */
  write(method: "POST" | "PUT", path: string, body: unknown): Promise<unknown>;
}

/**
 * The whole client: a {@linkcode KubeClient} that can also apply, delete and stream, for the reporter (watches,
 * inventories, Leases). Admission needs only the smaller interface.
 */
export interface FullKubeClient extends KubeClient {
  /**
   * Server-side apply of `body` at the object's `path` (PATCH `application/apply-patch+yaml`, forced, as
   * `fieldManager`): creates the object or updates the fields this manager owns. Retried like reads.
   */
  apply(path: string, body: unknown, fieldManager: string): Promise<unknown>;
  /** DELETEs the object at `path`; an absent object is not an error. */
  remove(path: string): Promise<void>;
  /**
   * GETs `path` and returns the response unread, for a watch stream: one attempt, no timeout but `signal`'s. A
   * status other than 200 is a {@linkcode KubeApiError}.
   */
  stream(path: string, signal: AbortSignal): Promise<Response>;
  /** The heap budget its answers are charged to; a watch over {@linkcode stream} charges its pages and events too. */
  readonly budget: HeapBudget;
}

/** Where the API is and how to authenticate: what {@linkcode loadKubeConfig} returns. */
export interface KubeConnection {
  readonly server: string;
  /** The bearer token, read on every request: a projected ServiceAccount token rotates under a running pod. */
  readonly token?: () => string | undefined;
  /** The HTTP client carrying the cluster CA (and a client certificate), or the default one. */
  readonly httpClient?: Deno.HttpClient;
  /** Headers for every request (impersonation). */
  readonly headers?: Readonly<Record<string, string>>;
  /** The namespace the kubeconfig's context names, for clients that default to it (kubectl's `-n`). */
  readonly namespace?: string;
}

/** Timeouts and retries. */
export interface KubeClientOptions {
  /** Per attempt; default 2,000 ms (admission webhooks have at most 5 s in all). */
  readonly timeoutMs?: number;
  /** Extra attempts after the first on 429, 5xx and network errors; default 2. */
  readonly retries?: number;
  /** First backoff; doubles each retry, with jitter from `random`; default 100 ms. */
  readonly backoffMs?: number;
  readonly random?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
  /** The fetch to use; default the global one (tests pass their own). */
  readonly fetch?: typeof fetch;
  /**
   * Largest answer read (success or error), in bytes; default 8 MiB. A server that sends more is cut off and the
   * request fails (`TooLarge`): a tenant's API server is not trusted to answer in proportion.
   */
  readonly maxResponseBytes?: number;
  /** How long a stream may take to answer with its headers (connect, TLS, headers); default 10,000 ms. */
  readonly openTimeoutMs?: number;
  /** What parsing answers may cost this isolate's heap (see `lib/foreign`); a budget of its own by default. */
  readonly budget?: HeapBudget;
  /** Objects per page of a list (default 500; halved for a page too large or too costly, down to one). */
  readonly pageSize?: number;
}

const RETRIED = new Set([429, 500, 502, 503, 504]);

/** One request's init: the connection's headers and credentials, JSON (or an apply patch), and the signal. */
function requestInit(
  connection: KubeConnection,
  method: string,
  body: unknown,
  signal: AbortSignal,
): RequestInit & { client?: Deno.HttpClient } {
  const token = connection.token?.();
  return {
    method,
    headers: {
      ...connection.headers,
      accept: "application/json",
      // An answer is read as it is sent: the cap on what is read holds only for bytes not inflated after it. The
      // API server compresses large answers when asked (the inflating alone took the reporter from 80 to 270 MiB
      // resident on one list of large objects), and a tenant's server could send a small body that inflates to the
      // cap. Asked for none, Deno inflates none: a compressed answer is not JSON and is refused as such.
      "accept-encoding": "identity",
      ...(body === undefined
        ? {}
        : { "content-type": method === "PATCH" ? "application/apply-patch+yaml" : "application/json" }),
      ...(token ? { authorization: `Bearer ${token}` } : {}),
    },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal,
    // The API never redirects: a redirect is a server that should not be followed (to plain http, another port,
    // or another host, with the credentials and a write's body).
    redirect: "error",
    ...(connection.httpClient ? { client: connection.httpClient } : {}),
  };
}

/** A request that got no answer: timed out, or the server could not be reached. */
function unreachable(failure: unknown, path: string): KubeApiError {
  const reason = failure instanceof DOMException && failure.name === "TimeoutError"
    ? "Timeout"
    : "Unreachable";
  return new KubeApiError(0, reason, failure instanceof Error ? failure.message : String(failure), path);
}

/**
 * Creates a {@linkcode KubeClient} over a connection.
 *
 * @example
 * ```ts
 * const kube = createKubeClient(loadKubeConfig(Deno.env.toObject(), Deno.readTextFileSync)!);
 * const team = await kube.get("/apis/butler.butlerlabs.dev/v1alpha1/teams/payments");
 * ```
 */
export function createKubeClient(
  connection: KubeConnection,
  options: KubeClientOptions = {},
): FullKubeClient {
  const timeoutMs = options.timeoutMs ?? 2_000;
  const retries = options.retries ?? 2;
  const backoffMs = options.backoffMs ?? 100;
  const random = options.random ?? Math.random;
  const sleep = options.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const doFetch = options.fetch ?? fetch;
  const server = connection.server.replace(/\/+$/, "");
  const maxBytes = options.maxResponseBytes ?? 8 * 1024 * 1024;
  const openTimeoutMs = options.openTimeoutMs ?? 10_000;
  const budget = options.budget ?? createHeapBudget();

  async function attempt(
    path: string,
    method: string,
    body?: unknown,
    signal: AbortSignal = AbortSignal.timeout(timeoutMs),
  ): Promise<Response> {
    return await doFetch(`${server}${path}`, requestInit(connection, method, body, signal));
  }

  async function request(
    method: string,
    path: string,
    body?: unknown,
    projection?: Projection,
  ): Promise<unknown | undefined> {
    for (let n = 0;; n++) {
      let res: Response | undefined;
      let failure: unknown;
      try {
        res = await attempt(path, method, body);
        // The timeout covers the body too: a slow or cut body is a failed attempt like a slow answer.
        if (res.ok) return decode(await readBytes(res, maxBytes, path), budget, path, projection);
      } catch (err) {
        // An answer too large or too costly is the server's doing, not the network's: not retried.
        if (err instanceof KubeApiError) throw err;
        failure = err;
        res = undefined;
      }
      if (res && res.status === 404 && (method === "GET" || method === "DELETE")) {
        await res.body?.cancel();
        return undefined;
      }
      const retryable = !res || RETRIED.has(res.status);
      if (!retryable || n >= retries) {
        throw res ? await apiError(res, path, maxBytes) : unreachable(failure, path);
      }
      const after = Number(res?.headers.get("retry-after"));
      await res?.body?.cancel();
      const wait = Number.isFinite(after) && after > 0 ? after * 1000 : backoffMs * 2 ** n * (0.5 + random());
      await sleep(Math.min(wait, timeoutMs));
    }
  }

  const pageSize = options.pageSize ?? 500;
  return {
    get: (path, opts = {}) => request("GET", path, undefined, opts.projection),
    list: (path, opts = {}) =>
      listAll((url, projection) => request("GET", url, undefined, projection), path, opts, pageSize),
    write: (method, path, body) => request(method, path, body),
    budget,
    apply: (path, body, fieldManager) =>
      request("PATCH", `${path}?fieldManager=${encodeURIComponent(fieldManager)}&force=true`, body),
    async remove(path) {
      await request("DELETE", path);
    },
    stream: (path, signal) =>
      openStream((sig) => attempt(path, "GET", undefined, sig), signal, openTimeoutMs, maxBytes, path),
  };
}

/**
 * Opens a stream: the answer's headers within `openTimeoutMs`, then no deadline but `signal` (the caller bounds the
 * stream's reads). A status other than 200 is a {@linkcode KubeApiError}.
 */
async function openStream(
  attempt: (signal: AbortSignal) => Promise<Response>,
  signal: AbortSignal,
  openTimeoutMs: number,
  maxBytes: number,
  path: string,
): Promise<Response> {
  const opening = new AbortController();
  const timer = setTimeout(() => opening.abort(new DOMException("no answer", "TimeoutError")), openTimeoutMs);
  try {
    const res = await attempt(AbortSignal.any([signal, opening.signal]));
    if (res.status !== 200) throw await apiError(res, path, maxBytes);
    return res;
  } catch (err) {
    throw err instanceof KubeApiError
      ? err
      : unreachable(opening.signal.aborted ? opening.signal.reason : err, path);
  } finally {
    clearTimeout(timer);
  }
}
