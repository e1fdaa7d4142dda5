/**
 * The LoadBalancer reporter process (`main.ts reporter`): validates its configuration, starts the reporter
 * ({@link ./lib/reporter/mod.ts}), serves `/metrics`, `/healthz` and `/readyz`, and on SIGTERM/SIGINT stops its
 * watches and deletes its Lease so the other replicas take its tenants at once.
 *
 * @module
 */
import client from "prom-client";
import { clearLibraryVariables, loadReporterConfig, readEnv, REPORTER_VARIABLES } from "./lib/config/mod.ts";
import { createProcessLog, type ProcessLog } from "./lib/log/mod.ts";
import { createDelegatedAuth, createKubeClient, loadKubeConfig } from "./lib/kube/mod.ts";
import { startReporter } from "./lib/reporter/mod.ts";
import { registerBuildInfo, VERSION } from "./lib/build/mod.ts";

const processLog = createProcessLog({ component: "reporter" });
const log = processLog.info;
// Annotated: a call to a `never` function narrows only through a declared type.
const fail: ProcessLog["fatal"] = processLog.fatal;

clearLibraryVariables();
const env = readEnv(REPORTER_VARIABLES);
const loaded = loadReporterConfig(env);
if (!loaded.ok) fail(`invalid configuration: ${loaded.message}`);
const config = loaded.config;

let connection;
try {
  connection = loadKubeConfig(env, Deno.readTextFileSync);
} catch (err) {
  fail(`cannot configure the Kubernetes API client: ${err instanceof Error ? err.message : String(err)}`);
}
if (!connection) fail("the reporter needs the Kubernetes API: run it in a pod or set KUBECONFIG");

const registry = new client.Registry();
client.collectDefaultMetrics({ register: registry });
registerBuildInfo(registry, "reporter");
const kube = createKubeClient(connection, { timeoutMs: 10_000, retries: 2 });
const reporter = startReporter({
  kube,
  identity: config.identity,
  namespace: config.namespace,
  location: { secretName: config.secretName, secretKey: config.secretKey },
  leaseSeconds: config.leaseSeconds,
  renewSeconds: config.renewSeconds,
  heartbeatSeconds: config.heartbeatSeconds,
  idleHeartbeatSeconds: config.idleHeartbeatSeconds,
  kubeconfigRecheckSeconds: config.kubeconfigRecheckSeconds,
  metallbResyncSeconds: config.metallbResyncSeconds,
  log,
  registry,
});

// Who may read /metrics and /tenants: the API server says (TokenReview, SubjectAccessReview), as the Deployment
// configures it. The probes are the kubelet's, and say nothing but the state.
const readers = config.metricsAuth === "kubernetes" ? createDelegatedAuth({ kube }) : undefined;
if (!readers) {
  log({ msg: "/metrics and /tenants are readable by anyone who reaches the port (METRICS_AUTH=none)" });
}

/** The refusal of a read `readers` does not let in, or `undefined`. */
async function refused(req: Request, path: string): Promise<Response | undefined> {
  const verdict = readers && await readers.check(req.headers.get("authorization") ?? undefined, path);
  if (!verdict || verdict.status === 200) return undefined;
  return Response.json(
    { error: `reading ${path} needs a token whose user may get it: ${verdict.reason}` },
    { status: verdict.status },
  );
}

const server = Deno.serve({
  hostname: config.host,
  port: config.port,
  onListen: ({ hostname, port }) =>
    log({
      msg: `butler reporter ${VERSION}: probes and metrics on http://${hostname}:${port}`,
      version: VERSION,
      identity: config.identity,
    }),
}, async (req) => {
  const path = new URL(req.url).pathname;
  if (path === "/healthz") return new Response("ok\n");
  if (path === "/readyz") {
    return reporter.ready()
      ? new Response("ok\n")
      : new Response("not ready: TenantClusters, ProviderConfigs or the Lease not read yet\n", {
        status: 503,
      });
  }
  if (path === "/metrics") {
    return await refused(req, path) ??
      new Response(await registry.metrics(), { headers: { "content-type": registry.contentType } });
  }
  if (path === "/tenants") {
    return await refused(req, path) ??
      Response.json({ members: reporter.members(), tenants: reporter.tenants() });
  }
  return new Response("not found\n", { status: 404 });
});

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  log({ msg: "shutdown started", signal });
  const timeout = setTimeout(() => Deno.exit(1), 20_000);
  await reporter.stop();
  await server.shutdown();
  clearTimeout(timeout);
  log({ msg: "shutdown complete" });
  Deno.exit(0);
}
for (const signal of ["SIGTERM", "SIGINT"] as const) {
  Deno.addSignalListener(signal, () => void shutdown(signal));
}
