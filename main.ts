/**
 * The hook service: validates configuration, serves every implemented hook, and shuts down gracefully on
 * SIGTERM/SIGINT: not ready at once, keeps serving for the drain period, then answers new requests 503 while the
 * requests in flight finish, closes the listener and exits 0.
 *
 * @module
 */
import { HOOK_ROUTES } from "./hooks/mod.ts";
import { loadConfig } from "./lib/config/mod.ts";
import {
  createApp,
  createInflightTracker,
  createWorkerPool,
  type LogRecord,
  type WorkerLike,
} from "./lib/http/mod.ts";
import { createKubeClient, type KubeClient, loadKubeConfig } from "./lib/kube/mod.ts";
import type { WorkerInit } from "./worker.ts";

function log(record: LogRecord): void {
  console.log(JSON.stringify({ time: new Date().toISOString(), level: "info", ...record }));
}

function fail(message: string): never {
  console.error(JSON.stringify({ time: new Date().toISOString(), level: "error", msg: message }));
  Deno.exit(1);
}

const loaded = loadConfig(Deno.env.toObject());
if (!loaded.ok) fail(`invalid configuration: ${loaded.message}`);
const config = loaded.config;

const init: WorkerInit = {
  bodyLimitBytes: config.bodyLimitBytes,
  clockOverride: config.clockOverride,
  hookConfig: config.hook,
};
const pool = config.workers > 0
  ? createWorkerPool({
    workers: config.workers,
    queueLimit: config.queueLimit,
    init,
    spawn: () =>
      new Worker(new URL("./worker.ts", import.meta.url), { type: "module" }) as unknown as WorkerLike,
    onCrash: (message) =>
      console.error(
        JSON.stringify({ time: new Date().toISOString(), level: "error", msg: "hook worker died", message }),
      ),
  })
  : undefined;

if (pool) {
  await pool.ready.catch((err: Error) => fail(err.message));
}

// Admission webhooks read the API (in a pod: the ServiceAccount; in development: KUBECONFIG). Hooks never do.
let kube: KubeClient | undefined;
try {
  const connection = loadKubeConfig(Deno.env.toObject(), Deno.readTextFileSync);
  // Two attempts of at most 1.5 s fit the webhooks' 5 s timeout with room for the decision and the answer.
  kube = connection ? createKubeClient(connection, { timeoutMs: 1500, retries: 1 }) : undefined;
} catch (err) {
  fail(`cannot configure the Kubernetes API client: ${err instanceof Error ? err.message : String(err)}`);
}

const service = createApp({
  ...init,
  routes: HOOK_ROUTES,
  log,
  ...(pool ? { offload: pool } : {}),
  ...(kube ? { kube } : {}),
});

function readTls(tls: { certFile: string; keyFile: string }, names: string): { cert: string; key: string } {
  try {
    return { cert: Deno.readTextFileSync(tls.certFile), key: Deno.readTextFileSync(tls.keyFile) };
  } catch (err) {
    fail(`cannot read ${names}: ${err instanceof Error ? err.message : String(err)}`);
  }
}

const inflight = createInflightTracker();
const server = Deno.serve({
  hostname: config.host,
  port: config.port,
  ...(config.tls ? readTls(config.tls, "TLS_CERT_FILE/TLS_KEY_FILE") : {}),
  onListen: ({ hostname, port }) =>
    log({
      msg: `butler hooks listening on ${config.tls ? "https" : "http"}://${hostname}:${port}`,
      port,
      routes: service.routes.length,
      clockOverride: config.clockOverride,
      workers: config.workers,
      queueLimit: config.queueLimit,
      admissionReads: kube ? "api" : "none",
    }),
}, inflight.wrap(service.app.fetch));

const webhookServer = config.webhook
  ? Deno.serve({
    hostname: config.host,
    port: config.webhook.port,
    ...readTls(config.webhook, "WEBHOOK_TLS_CERT_FILE/WEBHOOK_TLS_KEY_FILE"),
    onListen: ({ hostname, port }) =>
      log({ msg: `admission webhooks listening on https://${hostname}:${port}`, port }),
  }, inflight.wrap(service.app.fetch))
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
  await Promise.all([server.shutdown(), webhookServer?.shutdown()]);
  pool?.terminate();
  clearTimeout(timeout);
  log({ msg: "shutdown complete" });
  Deno.exit(0);
}

for (const signal of ["SIGTERM", "SIGINT"] as const) {
  Deno.addSignalListener(signal, () => void shutdown(signal));
}
