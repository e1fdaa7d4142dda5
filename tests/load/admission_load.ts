/**
 * `npx -y deno@2.9.6 task load:admission [--concurrency=50] [--requests=40] [--clusters=1000]`
 *
 * The admission webhooks end to end against the test API server (built like the real API server tier; an already
 * running one is used when `BUTLER_TEST_CLUSTER` is set). Starts the real service (`main.ts`, a child process)
 * with its HTTPS webhook listener and `KUBECONFIG`, creates a team-scoped ProviderConfig and `--clusters`
 * TenantClusters, and prints one table per scenario:
 *
 * - route: `--concurrency` clients each POSTing `--requests` AdmissionReviews straight to the webhook routes
 *   (TLS, JSON, the reads through the API server, the decision, the answer): a TenantCluster create (three GETs and a LIST), a
 *   Team removing an environment (one namespaced LIST) and a ProviderConfig delete (a cluster-wide LIST of every
 *   TenantCluster);
 * - api server: the same number of concurrent server-side dry-run TenantCluster creates through the API server,
 *   first with no webhook registered, then with the shipped ValidatingWebhookConfiguration pointed at the service:
 *   the difference is what the webhook adds to a user's request; then real creates with a team quota in force,
 *   each reserving in the team's quota ledger (all clients contend on that one ConfigMap).
 *
 * Not part of the test suite: timings belong in recorded figures, never in assertions.
 *
 * @module
 */
import { API_VERSION as API } from "../../lib/butler/mod.ts";
import { kubectlValidateBinary } from "../api/tools.ts";
import { inTestCluster, numberFlag } from "./cli.ts";

const args = Deno.args;
const flag = (name: string, fallback: number) => numberFlag(args, name, fallback);
const concurrency = flag("concurrency", 50);
const perClient = flag("requests", 40);
const clusters = flag("clusters", 1000);

// Without a cluster, start one and run this script again inside it (DENO_CERT must be set at start-up).
await inTestCluster(import.meta.url, args, async () => ({ KUBECTL_VALIDATE: await kubectlValidateBinary() }));

const { api, applyObject, cluster, freePort, installManifests, kubectlOk, ROOT, shippedWebhooks } =
  await import(
    "../api/cluster.ts"
  );

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;
const NS = "team-load";
const c = cluster();

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]! : NaN;
}
const ms = (v: number) => `${v.toFixed(1)} ms`;
const cpu: string[] = [];
const row = (label: string, latencies: number[], statuses: Record<string, number>) =>
  console.log(
    `| ${label} | ${ms(percentile(latencies, 50))} | ${ms(percentile(latencies, 90))} | ${
      ms(percentile(latencies, 99))
    } | ${ms(Math.max(...latencies))} | ${JSON.stringify(statuses)} | ${cpu.at(-1)} |`,
  );

/** CPU seconds (user + system) a process has used so far, from `/proc`. */
function cpuSeconds(pid: number): number {
  const fields = Deno.readTextFileSync(`/proc/${pid}/stat`).split(") ")[1]!.split(" ");
  return (Number(fields[11]) + Number(fields[12])) / 100; // utime, stime in clock ticks (USER_HZ = 100)
}

/** The test API server's process: the one whose command line names this cluster's directory. */
function apiServerPid(): number | undefined {
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const cmd = Deno.readTextFileSync(`/proc/${e.name}/cmdline`);
      if (cmd.includes(c.dir) && cmd.includes("apiserver")) return Number(e.name);
    } catch { /* gone */ }
  }
  return undefined;
}

/** `concurrency` clients each running `send` `perClient` times; latencies of every call and the answers seen. */
async function drive(
  send: () => Promise<string>,
): Promise<{ latencies: number[]; statuses: Record<string, number> }> {
  const pids = { service: child.pid, apiserver: apiServerPid(), load: Deno.pid };
  const before = Object.fromEntries(Object.entries(pids).map(([k, pid]) => [k, pid ? cpuSeconds(pid) : 0]));
  const wall = performance.now();
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  await Promise.all(Array.from({ length: concurrency }, async () => {
    for (let i = 0; i < perClient; i++) {
      const start = performance.now();
      const status = await send();
      latencies.push(performance.now() - start);
      statuses[status] = (statuses[status] ?? 0) + 1;
    }
  }));
  const seconds = (performance.now() - wall) / 1000;
  const n = latencies.length;
  cpu.push(
    `${(n / seconds).toFixed(0)} reviews/s; CPU per review: ` +
      Object.entries(pids).map(([k, pid]) =>
        `${k} ${pid ? (((cpuSeconds(pid) - before[k]!) / n) * 1000).toFixed(2) : "?"} ms`
      ).join(", "),
  );
  return { latencies, statuses };
}

// --- the cluster's objects
await installManifests();
await kubectlOk(["create", "namespace", NS]);
await kubectlOk(["label", "namespace", NS, "butler.butlerlabs.dev/team=load"]);
const apply = (obj: unknown) => applyObject(obj, { fieldManager: "butler-load" });
await apply({
  apiVersion: API,
  kind: "Team",
  metadata: { name: "load" },
  spec: {
    displayName: "Load",
    access: { users: [{ name: "lead@example.com", role: "admin" }] },
    environments: [{ name: "dev" }, { name: "staging" }],
  },
});
await apply({
  apiVersion: API,
  kind: "ProviderConfig",
  metadata: { name: "load-pc", namespace: NS },
  spec: {
    provider: "harvester",
    credentialsRef: { name: "harvester-kubeconfig" },
    harvester: { namespace: "default", networkName: "default/vlan40" },
    scope: { type: "team", teamRef: { name: "load" } },
  },
});
const tenantCluster = (name: string, env = "dev") => ({
  apiVersion: API,
  kind: "TenantCluster",
  metadata: { name, namespace: NS, labels: { "butler.butlerlabs.dev/environment": env } },
  spec: { providerConfigRef: { name: "load-pc", namespace: NS } },
});
for (let i = 0; i < clusters; i += 250) {
  const items = Array.from({ length: Math.min(250, clusters - i) }, (_, j) => tenantCluster(`tc-${i + j}`));
  await apply({ apiVersion: "v1", kind: "List", items });
}
console.log(`test API server ${c.server}: ${clusters} TenantClusters in ${NS}`);

// --- the service
const webhookPort = freePort();
const child = new Deno.Command(Deno.execPath(), {
  args: ["run", "--allow-net", "--allow-env", "--allow-read", `${ROOT}/main.ts`],
  env: {
    HOST: "127.0.0.1",
    PORT: "0",
    WEBHOOK_PORT: String(webhookPort),
    WEBHOOK_TLS_CERT_FILE: c.hookCertFile,
    WEBHOOK_TLS_KEY_FILE: c.hookKeyFile,
    KUBECONFIG: c.kubeconfig,
    NO_COLOR: "1",
  },
  stdout: "piped",
  stderr: "inherit",
}).spawn();
const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
for (let seen = ""; !seen.includes("admission webhooks listening");) {
  const { value, done } = await lines.read();
  if (done) throw new Error("the service exited before listening");
  seen += value;
}
(async () => {
  while (!(await lines.read()).done) { /* drain */ }
})();
const base = `https://127.0.0.1:${webhookPort}`;
const client = Deno.createHttpClient({ caCerts: [Deno.readTextFileSync(c.caFile)] });

const review = (request: Obj) =>
  JSON.stringify({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", request });
const gvk = (kind: string, resource: string) => ({
  kind: { group: "butler.butlerlabs.dev", version: "v1alpha1", kind },
  resource: { group: "butler.butlerlabs.dev", version: "v1alpha1", resource },
});
const admin = { username: "admin", groups: ["system:masters", "system:authenticated"] };
const routes: [label: string, path: string, body: string, expect: boolean][] = [
  [
    "TenantCluster create (GET its Team, ProviderConfig and ledger; LIST the namespace)",
    "/webhooks/validate/tenantcluster",
    review({
      uid: "load-tc",
      ...gvk("TenantCluster", "tenantclusters"),
      name: "new-one",
      namespace: NS,
      operation: "CREATE",
      userInfo: admin,
      object: tenantCluster("new-one"),
      oldObject: null,
    }),
    true,
  ],
  [
    `Team environment removal (LIST ${clusters} TenantClusters of its namespace)`,
    "/webhooks/validate/team",
    review({
      uid: "load-team",
      ...gvk("Team", "teams"),
      name: "load",
      operation: "UPDATE",
      userInfo: admin,
      object: { apiVersion: API, kind: "Team", metadata: { name: "load" }, spec: { environments: [] } },
      oldObject: {
        apiVersion: API,
        kind: "Team",
        metadata: { name: "load" },
        spec: { environments: [{ name: "dev" }, { name: "staging" }] },
      },
    }),
    false,
  ],
  [
    `ProviderConfig delete (LIST every TenantCluster, ${clusters})`,
    "/webhooks/validate/providerconfig",
    review({
      uid: "load-pc",
      ...gvk("ProviderConfig", "providerconfigs"),
      name: "load-pc",
      namespace: NS,
      operation: "DELETE",
      userInfo: admin,
      object: null,
      oldObject: { apiVersion: API, kind: "ProviderConfig", metadata: { name: "load-pc", namespace: NS } },
    }),
    false,
  ],
];

async function callRoute(path: string, body: string, expect: boolean): Promise<string> {
  const res = await fetch(`${base}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
    client,
  });
  const text = await res.text();
  if (res.status !== 200) return String(res.status);
  const allowed = JSON.parse(text).response?.allowed;
  if (allowed !== expect) throw new Error(`${path} answered allowed=${allowed}: ${text.slice(0, 300)}`);
  return allowed ? "allowed" : "denied";
}

console.log(
  `\nroute: ${concurrency} concurrent clients x ${perClient} AdmissionReviews, straight to the service`,
);
console.log(
  "| Review | p50 | p90 | p99 | max | answers | throughput and CPU |\n|---|---|---|---|---|---|---|",
);
for (const [label, path, body, expect] of routes) {
  await Promise.all(Array.from({ length: 20 }, () => callRoute(path, body, expect))); // warm connections
  const { latencies, statuses } = await drive(() => callRoute(path, body, expect));
  row(label, latencies, statuses);
}

// --- through the API server
let seq = 0;
async function dryRunCreate(): Promise<string> {
  const r = await api(
    "POST",
    `/apis/butler.butlerlabs.dev/v1alpha1/namespaces/${NS}/tenantclusters?dryRun=All`,
    tenantCluster(`dry-${seq++}`),
  );
  return String(r.status);
}

console.log(
  `\napi server: ${concurrency} concurrent clients x ${perClient} dry-run TenantCluster creates (admin)`,
);
console.log(
  "| Webhooks | p50 | p90 | p99 | max | answers | throughput and CPU |\n|---|---|---|---|---|---|---|",
);
await Promise.all(Array.from({ length: 20 }, dryRunCreate));
const without = await drive(dryRunCreate);
row("none registered", without.latencies, without.statuses);

await apply(await shippedWebhooks(base));
// A new webhook configuration takes effect within seconds: wait until a refusal shows it is called.
for (const deadline = Date.now() + 30_000;;) {
  const r = await api(
    "POST",
    `/apis/butler.butlerlabs.dev/v1alpha1/namespaces/${NS}/tenantclusters?dryRun=All`,
    {
      ...tenantCluster("foreign"),
      spec: { providerConfigRef: { name: "load-pc", namespace: NS }, teamRef: { name: "other" } },
    },
  );
  if (r.status === 403) break;
  if (Date.now() > deadline) throw new Error(`the webhook never answered: ${JSON.stringify(r.body)}`);
  await new Promise((r) => setTimeout(r, 250));
}
await Promise.all(Array.from({ length: 20 }, dryRunCreate));
const withHook = await drive(dryRunCreate);
row("the shipped configuration", withHook.latencies, withHook.statuses);

// Real creates with a quota in force: every admission reserves in the team's one ledger, so the 50 clients
// contend on a single ConfigMap (the worst case: one team creating at full speed).
await kubectlOk([
  "patch",
  "team",
  "load",
  "--type=merge",
  "-p",
  JSON.stringify({ spec: { resourceLimits: { maxClusters: 1_000_000 } } }),
]);
const realCreate = async () =>
  String(
    (await api(
      "POST",
      `/apis/butler.butlerlabs.dev/v1alpha1/namespaces/${NS}/tenantclusters`,
      tenantCluster(`q-${seq++}`),
    ))
      .status,
  );
const real = await drive(realCreate);
row("the shipped configuration, real creates under a quota (ledger writes)", real.latencies, real.statuses);

child.kill("SIGTERM");
await child.status;
