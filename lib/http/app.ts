import type { KubeCacheStats, KubeClient } from "../kube/mod.ts";
import { Hono, type MiddlewareHandler } from "hono";
import type { HookConfig } from "../hook_context/mod.ts";
import { jsonError } from "./errors.ts";
import { hookClientAuth, type MetricsAuth, metricsReaderAuth, webhookClientAuth } from "./caller_auth.ts";
import type { AppEnv, Runtime } from "./env.ts";
import { createHttpMetrics, type HttpMetrics } from "./metrics.ts";
import { createDomainMetrics, type DomainMetrics } from "./domain_metrics.ts";
import {
  registerAdmissionAuthenticated,
  registerCacheMetrics,
  registerPoolMetrics,
} from "./service_metrics.ts";
import type { Offload } from "../isolation/mod.ts";
import { bodySeconds, offloadDoor, webhookDoor } from "./doors.ts";
import { bodyReader, READING_BYTES, ReadingBudget } from "./body.ts";
import { createHeapBudget, type HeapBudget } from "../foreign/mod.ts";
import type { Signal } from "../signals/mod.ts";

/** A structured log record; the service prints one JSON line per record. */
export type LogRecord = Record<string, unknown>;

/** A function that registers one hook module's routes on the app. */
export type RouteRegistrar = (app: Hono<AppEnv>) => void;

/** Everything the app needs, injected so that building it does no I/O. */
export interface AppOptions {
  /** Largest hook request body (`/hooks/*`). */
  readonly bodyLimitBytes: number;
  /**
   * Largest admission review body (`/webhooks/*`): the API server sends at most about twice its 3 MiB request
   * limit (object and old object). The hooks' limit when unset.
   */
  readonly webhookBodyLimitBytes?: number;
  /**
   * Admission reviews in at once (read, decided or writing), and the bytes of their bodies; past either, 429 before
   * the body is read. Unbounded when unset.
   */
  readonly webhookConcurrency?: number;
  readonly webhookQueueBytes?: number;
  /**
   * The share of the main thread's time large reviews may take (`LARGE_REVIEW_SHARE` when unset), and the clock
   * (ms) it is measured with (`performance.now` when unset); only with the door above.
   */
  readonly webhookLargeShare?: number;
  readonly webhookClockMs?: () => number;
  /** What a body may cost this isolate's heap before it is parsed (admission, and hooks run here); none: unbounded. */
  readonly heapBudget?: HeapBudget;
  /** A hook worker's view of the poisoned parents (see `Runtime.poison`). */
  readonly poison?: Runtime["poison"];
  /** Whether admission writes what it stages; see `Runtime.admissionWrites`. */
  readonly admissionWrites?: boolean;
  /** How long bodies may take to arrive; see `Runtime.bodyReadSeconds`. */
  readonly bodyReadSeconds?: Runtime["bodyReadSeconds"];
  /**
   * Bytes of small bodies (64 KiB or less) being read at once, by hooks and by reviews (`READING_BYTES` when
   * unset); past it the ones read longest are closed for the newcomer.
   */
  readonly readingBytes?: { readonly hooks: number; readonly webhooks: number };
  readonly clockOverride: boolean;
  readonly hookConfig: HookConfig;
  readonly routes: readonly RouteRegistrar[];
  readonly clock?: () => Date;
  readonly log?: (record: LogRecord) => void;
  /** Monotonic milliseconds for latency; `performance.now` by default. */
  readonly elapsed?: () => number;
  /**
   * Runs hook requests elsewhere (the worker pool) instead of on this thread; a full pool is answered 429 with
   * `Retry-After`, and `/readyz` reports not ready while it is full.
   */
  readonly offload?: Offload;
  /**
   * Bytes of hook request bodies (by `content-length`; the body limit when it is absent) let in at once: a request
   * that would pass it is answered 429 like one beyond the queue, unless nothing else is in. Unbounded by default.
   */
  readonly queueBytes?: number;
  /** `Retry-After` of a 429, in seconds (default 2). */
  readonly retryAfterSeconds?: number;
  /** What admission webhooks read the API with; without it they answer 503 when they need a read. */
  readonly kube?: KubeClient;
  /** The admission watch cache's figures, exported as metrics when given (the service passes its cache's). */
  readonly cacheStats?: () => KubeCacheStats;
  /**
   * Why the service cannot decide now (the admission cache not listed yet, or its watches failing), or undefined:
   * `/readyz` is not ready while it says something, so no review is sent to a replica that would answer 503.
   */
  readonly undecided?: () => string | undefined;
  /**
   * Receives the signals of each answered request (after the answer is built). It must not throw into the
   * request: whatever it does (metrics, Events) is its own business.
   */
  readonly onSignals?: (signals: readonly Signal[]) => void;
  /**
   * Hook calls (`/hooks/*`) must come with a client certificate the listener verified (`c.env.peer`), else 403.
   * Probes, metrics and admission webhooks (the API server presents none) are not affected.
   */
  readonly requireClientCert?: boolean;
  /**
   * Who may read `/metrics`: the verdict on a request's `Authorization` header (delegated to the API server:
   * `createDelegatedAuth`); anyone when unset.
   */
  readonly metricsAuth?: MetricsAuth;
  /** With `requireClientCert`, the common names a hook caller's certificate may have; any when unset. */
  readonly hookClientNames?: readonly string[];
  /**
   * The admission webhooks have a listener of their own (`c.env.listener === "webhooks"`): the hooks' listener
   * answers `/webhooks/*` 404, so that a network policy or client authentication on the webhook port cannot be
   * walked around.
   */
  readonly separateWebhookListener?: boolean;
  /**
   * Admission webhook calls must come with a client certificate the webhook listener verified whose common name
   * is one of these (the API server's webhook client credentials), else 403.
   */
  readonly webhookClientNames?: readonly string[];
}

/** Shutdown state shared by `/readyz` and the server loop. */
export interface Lifecycle {
  readonly shuttingDown: boolean;
  beginShutdown(): void;
}

/** The built service. */
export interface HookService {
  readonly app: Hono<AppEnv>;
  readonly lifecycle: Lifecycle;
  readonly metrics: HttpMetrics;
  /** Pool, team, admission and inventory series, fed by the signals of each answer; in `metrics.registry`. */
  readonly domain: DomainMetrics;
  /** `METHOD path` of every hook and webhook route registered. */
  readonly routes: readonly string[];
}

const UNMATCHED = "unmatched";

/**
 * Builds the hook service: probes, metrics, request logging, body limit, JSON errors, and the routes each hook
 * module registers. Pure construction: nothing listens, nothing is read from the environment.
 *
 * @example
 * ```ts
 * const { app } = createApp({ bodyLimitBytes: 1 << 24, clockOverride: false, hookConfig, routes: [] });
 * const res = await app.request("/healthz");
 * ```
 */
export function createApp(options: AppOptions): HookService {
  const app = new Hono<AppEnv>();
  const metrics = createHttpMetrics();
  const domain = createDomainMetrics(metrics.registry);
  if (options.offload) registerPoolMetrics(metrics.registry, options.offload);
  if (options.cacheStats) registerCacheMetrics(metrics.registry, options.cacheStats);
  if (options.admissionWrites !== undefined) {
    registerAdmissionAuthenticated(metrics.registry, options.admissionWrites);
  }
  const runtime: Runtime = {
    clock: options.clock ?? (() => new Date()),
    clockOverride: options.clockOverride,
    hookConfig: options.hookConfig,
    kube: options.kube,
    heapBudget: options.heapBudget ?? createHeapBudget(), // the door of lib/foreign charges every body parsed here
    poison: options.poison,
    bodyReadSeconds: options.bodyReadSeconds,
    admissionWrites: options.admissionWrites,
  };
  let shuttingDown = false;
  const lifecycle: Lifecycle = {
    get shuttingDown() {
      return shuttingDown;
    },
    beginShutdown() {
      shuttingDown = true;
    },
  };
  const known = new Set<string>(["GET /healthz", "GET /readyz", "GET /metrics"]);

  app.use("*", requestLog(options, runtime, known, metrics, domain));
  if (options.requireClientCert) app.use("/hooks/*", hookClientAuth(options.hookClientNames));
  if (options.separateWebhookListener || options.webhookClientNames) {
    app.use("/webhooks/*", webhookClientAuth(options));
  }
  const door = useDoors(app, options, runtime, known);
  probes(app, lifecycle, metrics, options.offload, door, options.metricsAuth, options.undecided);

  for (const register of options.routes) register(app);
  const routes = app.routes
    .filter((r) => r.method !== "ALL" && !known.has(`${r.method} ${r.path}`))
    .map((r) => `${r.method} ${r.path}`);
  for (const r of routes) known.add(r);

  app.notFound((c) => jsonError(c, 404, `no route for ${c.req.method} ${c.req.path}`));
  app.onError((err, c) => {
    c.set("failure", `${err.name}: ${err.message}`);
    return jsonError(c, 500, "internal error");
  });

  return { app, lifecycle, metrics, domain, routes };
}

type Middleware = MiddlewareHandler<AppEnv>;

/**
 * Each door on its routes: the body reader (bodies read as they arrive, small ones within a budget, large ones in
 * the door's lane), then the door's places. Returns the hooks' door, whose state readiness reports.
 */
function useDoors(
  app: Hono<AppEnv>,
  options: AppOptions,
  runtime: Runtime,
  known: ReadonlySet<string>,
): { full(): boolean } | undefined {
  const webhookLimit = options.webhookBodyLimitBytes ?? options.bodyLimitBytes;
  const webhooks = options.webhookConcurrency !== undefined || options.webhookQueueBytes !== undefined
    ? webhookDoor({
      known,
      concurrency: options.webhookConcurrency ?? Infinity,
      queueBytes: options.webhookQueueBytes ?? Infinity,
      bodyLimitBytes: webhookLimit,
      retryAfterSeconds: options.retryAfterSeconds,
      largeShare: options.webhookLargeShare,
      clock: options.webhookClockMs,
    })
    : undefined;
  const door = options.offload
    ? offloadDoor({
      offload: options.offload,
      runtime,
      known,
      queueBytes: options.queueBytes,
      retryAfterSeconds: options.retryAfterSeconds,
    })
    : undefined;
  const bytes = options.readingBytes ?? READING_BYTES;
  const reading = {
    hooks: { small: new ReadingBudget(bytes.hooks), large: door?.large },
    webhooks: {
      small: new ReadingBudget(bytes.webhooks),
      large: webhooks?.large,
      largeBytes: webhooks?.largeBytes,
    },
  };
  app.use(
    "/hooks/*",
    bodyReader({ known, limit: options.bodyLimitBytes, seconds: bodySeconds, ...reading.hooks }),
  );
  app.use(
    "/webhooks/*",
    bodyReader({ known, limit: webhookLimit, seconds: bodySeconds, ...reading.webhooks }),
  );
  if (webhooks) app.use("/webhooks/*", webhooks.middleware);
  if (door) app.use("/hooks/*", door.middleware);
  return door;
}

/**
 * Every request: the runtime set for the handlers, then, once answered, its metrics, what its answer signals
 * (metrics, Events), and one log line (route, status, duration, the parent it concerned, the failure if any).
 */
function requestLog(
  options: AppOptions,
  runtime: Runtime,
  known: ReadonlySet<string>,
  metrics: HttpMetrics,
  domain: DomainMetrics,
): Middleware {
  const log = options.log ?? (() => {});
  const elapsed = options.elapsed ?? (() => performance.now());
  return async (c, next) => {
    const start = elapsed();
    c.set("runtime", runtime);
    await next();
    const key = `${c.req.method} ${c.req.path}`;
    const route = known.has(key) ? c.req.path : UNMATCHED;
    const seconds = (elapsed() - start) / 1000;
    metrics.observe(route, c.req.method, c.res.status, seconds);
    const subject = c.get("subject");
    const failure = c.get("failure");
    const signals = c.get("signals");
    if (signals?.length) {
      try {
        domain.record(signals);
        options.onSignals?.(signals);
      } catch (err) {
        log({ msg: "signals not handled", error: err instanceof Error ? err.message : String(err) });
      }
    }
    log({
      msg: "request",
      method: c.req.method,
      route,
      status: c.res.status,
      durationMs: Math.round(seconds * 1e6) / 1e3,
      ...(subject ? { parent: subject } : {}),
      ...(failure ? { error: failure } : {}),
    });
  };
}

/**
 * `/healthz` (a worker that could not be replaced), `/readyz` (shutting down, or the door shut): for the kubelet,
 * which presents nothing, so they say nothing but their state; and `/metrics`, for whoever `metricsAuth` lets in.
 */
function probes(
  app: Hono<AppEnv>,
  lifecycle: Lifecycle,
  metrics: HttpMetrics,
  offload: Offload | undefined,
  door: { full(): boolean } | undefined,
  metricsAuth: AppOptions["metricsAuth"],
  undecided: AppOptions["undecided"],
): void {
  // A hook worker that could not be replaced leaves the service short for good: let the kubelet restart it.
  app.get("/healthz", (c) => {
    const unavailable = offload?.stats().unavailable ?? 0;
    return unavailable > 0
      ? c.json({ status: "unhealthy", reason: `${unavailable} hook worker(s) could not be replaced` }, 503)
      : c.json({ status: "ok" });
  });
  app.get("/readyz", (c) => {
    if (lifecycle.shuttingDown) return c.json({ status: "shutting down" }, 503);
    const why = undecided?.();
    if (why) return c.json({ status: "not ready", reason: why }, 503);
    if (offload && door?.full()) {
      const s = offload.stats();
      return c.json({ status: "busy", workers: s.workers, queued: s.queued }, 503);
    }
    return c.json({ status: "ready" });
  });
  app.get("/metrics", metricsReaderAuth(metricsAuth), async (c) => {
    const body = await metrics.registry.metrics();
    return c.body(body, 200, { "content-type": metrics.registry.contentType });
  });
}
