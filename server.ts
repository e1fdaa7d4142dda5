/**
 * The hook service (`main.ts` with no command): validates configuration, serves every implemented hook, and
 * shuts down gracefully on
 * SIGTERM/SIGINT: not ready at once, keeps serving for the drain period, then answers new requests 503 while the
 * requests in flight finish, closes the listener and exits 0.
 *
 * @module
 */
import { HOOK_ROUTES } from "./hooks/mod.ts";
import { clearLibraryVariables, loadConfig, readEnv, SERVICE_VARIABLES } from "./lib/config/mod.ts";
import {
  createApp,
  createHeapBudget,
  createInflightTracker,
  createWorkerPool,
  serveTls,
  spawnIsolate,
} from "./lib/http/mod.ts";
import { createProcessLog, type ProcessLog } from "./lib/log/mod.ts";
import {
  createDelegatedAuth,
  createEventWriter,
  createKubeCache,
  createKubeClient,
  type EventWriter,
  type KubeCache,
  type KubeClient,
  loadKubeConfig,
} from "./lib/kube/mod.ts";
import { ADMISSION_CACHE, ADMISSION_CACHE_WATCH } from "./lib/api/mod.ts";
import type { EventSignal } from "./lib/signals/mod.ts";
import type { WorkerInit } from "./worker.ts";
import { VERSION } from "./lib/build/mod.ts";

const processLog = createProcessLog();
const log = processLog.info;
// Annotated: a call to a `never` function narrows only through a declared type.
const fail: ProcessLog["fatal"] = processLog.fatal;

// Variable by variable: the shipped command line allows only these (--allow-env=...).
clearLibraryVariables();
const env = readEnv(SERVICE_VARIABLES);
const loaded = loadConfig(env);
if (!loaded.ok) fail(`invalid configuration: ${loaded.message}`);
const config = loaded.config;

/** The heap the admission reviews in flight may take on this thread, when hooks run in workers. */
const MAIN_THREAD_REQUEST_HEAP = 48 * 1024 * 1024;

const init: WorkerInit = {
  bodyLimitBytes: config.bodyLimitBytes,
  clockOverride: config.clockOverride,
  hookConfig: config.hook,
};
const pool = config.workers > 0
  ? createWorkerPool({
    workers: config.workers,
    queueLimit: config.queueLimit,
    deadlineMs: config.deadlineSeconds * 1000,
    init,
    spawn: () => spawnIsolate(new URL("./worker.ts", import.meta.url)),
    onCrash: (message) =>
      console.error(
        JSON.stringify({ time: new Date().toISOString(), level: "error", msg: "hook worker died", message }),
      ),
  })
  : undefined;

if (pool) {
  await pool.ready.catch((err: Error) => fail(err.message));
}

// Admission webhooks read the API (in a pod: the ServiceAccount; in development: KUBECONFIG), through a watch
// cache of the kinds they read; hooks never do.
let kube: KubeClient | undefined;
let cache: KubeCache | undefined;
try {
  const connection = loadKubeConfig(env, Deno.readTextFileSync);
  // Two attempts of at most 1.5 s fit the webhooks' 5 s timeout with room for the decision and the answer.
  const client = connection ? createKubeClient(connection, { timeoutMs: 1500, retries: 1 }) : undefined;
  cache = client
    ? createKubeCache({
      client,
      collections: ADMISSION_CACHE,
      watch: ADMISSION_CACHE_WATCH,
      // Until a collection is listed, reviews that read it answer 503: the log says why.
      onHealth: (resource, health) =>
        health.state === "failing"
          ? log({
            msg: "admission cache cannot list or watch",
            resource,
            attempts: health.attempts,
            error: health.error.message,
          })
          : log({ msg: `admission cache ${health.state}`, resource }),
    })
    : undefined;
  kube = cache;
} catch (err) {
  fail(`cannot configure the Kubernetes API client: ${err instanceof Error ? err.message : String(err)}`);
}
// With the webhook listener configured (the shipped Deployment), the cache is listed before the first review;
// otherwise the first review that reads starts it.
if (config.webhook) cache?.start();

// Who may read /metrics: the API server says (TokenReview, SubjectAccessReview), as the Deployment configures it.
if (config.metricsAuth === "kubernetes" && !kube) {
  fail(
    "METRICS_AUTH=kubernetes needs the Kubernetes API (in a pod, or KUBECONFIG) to review readers' tokens",
  );
}
const metricsAuth = config.metricsAuth === "kubernetes" && kube ? createDelegatedAuth({ kube }) : undefined;
if (!metricsAuth) log({ msg: "/metrics is readable by anyone who reaches the listener (METRICS_AUTH=none)" });

// Events (pool capacity) are written after the hook answered, with the same client; without API access they
// are counted as failed and the hooks work as before.
let events: EventWriter | undefined;
const service = createApp({
  ...init,
  routes: HOOK_ROUTES,
  log,
  webhookBodyLimitBytes: config.admission.bodyLimitBytes,
  webhookConcurrency: config.admission.concurrency,
  webhookQueueBytes: config.admission.queueBytes,
  // Only the API server's authenticated reviews may write (the quota ledger, the pool registry): a stranger's
  // review must change no stored object and no later decision.
  admissionWrites: config.webhook?.client !== undefined,
  // Every body this thread parses (admission reviews; hooks too when HOOK_WORKERS is 0) is charged first. With
  // workers, reviews alone are parsed here, beside the admission cache: they may hold 48 MiB at once (a review of
  // the API server's 7 MiB bound takes about 30).
  heapBudget: createHeapBudget(config.workers > 0 ? { maxInFlight: MAIN_THREAD_REQUEST_HEAP } : {}),
  ...(pool ? { offload: pool, queueBytes: config.queueBytes } : {}),
  ...(kube ? { kube } : {}),
  ...(cache ? { cacheStats: () => cache!.stats() } : {}),
  ...(metricsAuth ? { metricsAuth } : {}),
  requireClientCert: config.tls?.clientCaFile !== undefined,
  ...(config.tls?.clientNames ? { hookClientNames: config.tls.clientNames } : {}),
  separateWebhookListener: config.webhook !== undefined,
  ...(config.webhook?.client ? { webhookClientNames: config.webhook.client.names } : {}),
  onSignals: (signals) => {
    const wanted = signals.filter((s): s is EventSignal => s.signal === "event");
    if (!wanted.length) return;
    if (events) return events.write(wanted);
    for (const s of wanted) service.domain.event(s.reason, "failed");
  },
});
if (kube) {
  events = createEventWriter({
    kube,
    // The pod name (the kubelet sets HOSTNAME), so an Event says which replica wrote it.
    instance: env.HOSTNAME ?? "",
    done: (signal, error, unverified) => {
      service.domain.event(signal.reason, unverified ? "unverified" : error ? "failed" : "written");
      if (error) {
        log({ msg: "event not written", reason: signal.reason, object: signal.regarding.name, error });
      }
    },
  });
}

const inflight = createInflightTracker();
const listening = (scheme: string, port: number, hostname: string) =>
  log({
    msg: `butler hooks ${VERSION} listening on ${scheme}://${hostname}:${port}`,
    version: VERSION,
    port,
    routes: service.routes.length,
    clockOverride: config.clockOverride,
    workers: config.workers,
    queueLimit: config.queueLimit,
    queueBytes: config.queueBytes,
    admissionReads: kube ? "watch cache" : "none",
    clientCertificates: config.tls?.clientCaFile ? "required for hooks" : "not asked",
    webhooks: config.webhook
      ? `port ${config.webhook.port}, ${
        config.webhook.client
          ? `the API server's client certificate required (${config.webhook.client.names})`
          : "any caller"
      }`
      : "this port",
  });
if (config.tls?.clientCaFile && !config.tls.clientNames) {
  log({
    msg:
      "hook calls are answered for any certificate the client CA signed: set HOOK_CLIENT_NAMES to Metacontroller's " +
      "certificate names so that no other client of that CA can call the hooks",
  });
}
if (!config.webhook?.client) {
  log({
    msg:
      "admission reviews are not authenticated: admission writes nothing (no quota ledger, no pool registry). " +
      "Creates are checked against the TenantClusters stored, so creates racing each other may both be stored: " +
      "their Team then holds them (Admitted False, QuotaExceeded) and none starts; pools racing each other grant " +
      "nothing (Overlapping). Add components/webhook-client-auth for race-free admission (docs/security.md)",
    admissionAuthenticated: false,
  });
}
// While draining, every answer closes its connection: the caller's next request opens a new one, which the Service
// sends to a ready replica, instead of reaching this one on a kept-alive connection once it answers 503 (test:upgrade
// measured those 503s at the end of each drain, where a rollout fails an admission review).
const handler = inflight.wrap(async (...args: Parameters<typeof service.app.fetch>) => {
  const response = await service.app.fetch(...args);
  if (!service.lifecycle.shuttingDown) return response;
  const headers = new Headers(response.headers);
  headers.set("connection", "close");
  return new Response(response.body, { status: response.status, statusText: response.statusText, headers });
});
const server = config.tls
  ? await startTls({
    hostname: config.host,
    port: config.port,
    ...config.tls,
    listener: "hooks",
    log,
    onListen: ({ hostname, port }) => listening("https", port, hostname),
  })
  : Deno.serve({
    hostname: config.host,
    port: config.port,
    onListen: ({ hostname, port }) => listening("http", port, hostname),
  }, handler);

/** Starts an HTTPS listener, or exits saying why it cannot. */
async function startTls(options: Parameters<typeof serveTls>[0]): Promise<{ shutdown(): Promise<void> }> {
  try {
    const tls = serveTls(options, handler);
    await tls.ready;
    return tls;
  } catch (err) {
    fail(`cannot serve HTTPS on port ${options.port}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

const webhookServer = config.webhook
  ? await startTls({
    hostname: config.host,
    port: config.webhook.port,
    certFile: config.webhook.certFile,
    keyFile: config.webhook.keyFile,
    ...(config.webhook.client ? { clientCaFile: config.webhook.client.caFile } : {}),
    listener: "webhooks",
    reloadSeconds: config.tls?.reloadSeconds ?? 10,
    log,
    onListen: ({ hostname, port }) =>
      log({ msg: `admission webhooks listening on https://${hostname}:${port}`, port }),
  })
  : undefined;

/**
 * Before closing the listener, wait this long without any new request (at most `SETTLE_MAX_MS`): requests
 * already received on keep-alive connections then get their 503 instead of a reset.
 */
const SETTLE_QUIET_MS = 200;
const SETTLE_MAX_MS = 2000;

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  service.lifecycle.beginShutdown();
  log({ msg: "shutdown started", signal, drainSeconds: config.shutdownDrainSeconds });
  await new Promise((resolve) => setTimeout(resolve, config.shutdownDrainSeconds * 1000));
  const timeout = setTimeout(() => {
    log({ msg: "shutdown timed out with requests in flight", inflight: inflight.count });
    Deno.exit(1);
  }, config.shutdownTimeoutSeconds * 1000);
  await inflight.close();
  await inflight.settle(SETTLE_QUIET_MS, SETTLE_MAX_MS);
  await Promise.all([server.shutdown(), webhookServer?.shutdown(), events?.idle(), cache?.stop()]);
  pool?.terminate();
  clearTimeout(timeout);
  log({ msg: "shutdown complete" });
  Deno.exit(0);
}

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  Deno.addSignalListener(signal, () => void shutdown(signal));
}
