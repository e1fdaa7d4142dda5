/**
 * `npx -y deno@2.9.6 task load:admission [--concurrency=50] [--creates=1000] [--start=100] [--requests=40]
 * [--memory=10000] [--json=FILE] [--profile=DIR] [--cpu-profile=FILE]`
 *
 * The admission webhooks end to end against the test API server (built like the real API server tier; an already
 * running one is used when `BUTLER_TEST_CLUSTER` is set), judged as ratios measured in one run (issue "Admission
 * at scale"). Starts the real service (`main.ts`, a child process, with the Deployment's worker and heap settings)
 * with its HTTPS webhook listener and `KUBECONFIG`, and measures:
 *
 * - **creates**: `--concurrency` clients creating `--creates` real TenantClusters through the API server into a
 *   namespace that holds `--start` already, first with no webhook registered (the baseline), then into a team
 *   with every limit in force with the shipped ValidatingWebhookConfiguration (each create reserves in the team's
 *   one quota ledger); throughput, p99, refusals for contention, and the service's CPU per review (from /proc);
 * - **listReviews**: AdmissionReviews straight to the webhook routes, `--concurrency` clients x `--requests`: a
 *   TenantCluster create (dry run, so nothing is reserved), a Team removing an environment and a ProviderConfig
 *   delete, the last two over every TenantCluster of the team; p99 of each, and timeouts (no answer in 5 s);
 * - **overshoot**: admitted creates beyond any limit, counted from the API after the run;
 * - **memory**: with `--memory` TenantClusters stored in all, the service's resident memory once its cache holds
 *   them (its metric says so), against the Deployment's limit.
 *
 * Not part of the test suite: timings belong in recorded figures, never in assertions.
 *
 * @module
 */
import { API_VERSION as API } from "../../lib/butler/mod.ts";
import { parse } from "yaml";
import { kubectlValidateBinary } from "../api/tools.ts";
import { inTestCluster, numberFlag, stringFlag } from "./cli.ts";
import { cpuSeconds, statusMiB } from "./proc.ts";
import { startCpuProfile } from "./cpu_profile.ts";

const args = Deno.args;
const flag = (name: string, fallback: number) => numberFlag(args, name, fallback);
const concurrency = flag("concurrency", 50);
const creates = flag("creates", 1000);
const start = flag("start", 100);
const perClient = flag("requests", 40);
const memoryClusters = flag("memory", 10_000);
const jsonFile = stringFlag(args, "json");
/** With `--profile=DIR`, the service writes V8 tick logs there (`node --prof-process` reads them). */
const profileDir = stringFlag(args, "profile");
/**
 * With `--cpu-profile=FILE`, the service runs with the V8 inspector on loopback and FILE receives a CPU profile of
 * the creates with the webhooks (Chrome DevTools and `tests/load/cpu_profile.ts` read it): builtins count toward
 * the function that called them, unlike `--profile`'s tick logs.
 */
const cpuProfileFile = stringFlag(args, "cpu-profile");

// Without a cluster, start one and run this script again inside it (DENO_CERT must be set at start-up).
await inTestCluster(import.meta.url, args, async () => ({ KUBECTL_VALIDATE: await kubectlValidateBinary() }));

const {
  api,
  applyObject,
  cluster,
  freePort,
  installManifests,
  kubectlOk,
  ROOT,
  shippedWebhooks,
  tokenKubeconfig,
} = await import(
  "../api/cluster.ts"
);

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;
const NS = "team-load";
const BASE_NS = "load-baseline";
const c = cluster();
const TIMEOUT_MS = 5000;

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]! : NaN;
}
const round = (v: number, digits = 1) => Number(v.toFixed(digits));

/** The test API server's process: the one whose command line names this cluster's directory. */
function apiServerPid(): number | undefined {
  for (const e of Deno.readDirSync("/proc")) {
    if (!/^\d+$/.test(e.name)) continue;
    try {
      const cmd = Deno.readTextFileSync(`/proc/${e.name}/cmdline`);
      if (cmd.includes(c.dir) && cmd.includes("apiserver") && !cmd.includes("controller-manager")) {
        return Number(e.name);
      }
    } catch { /* gone */ }
  }
  return undefined;
}

interface Run {
  latencies: number[];
  statuses: Record<string, number>;
  seconds: number;
  /** CPU milliseconds per call, by process. */
  cpuMs: Record<string, number>;
}

/** `concurrency` clients sharing `total` calls of `send`; latencies, answers and CPU per call by process. */
async function drive(total: number, send: (i: number) => Promise<string>): Promise<Run> {
  const pids = { service: child.pid, apiserver: apiServerPid(), load: Deno.pid };
  const before = Object.fromEntries(
    Object.entries(pids).map(([k, pid]) => [k, pid ? cpuSeconds(pid) ?? NaN : 0]),
  );
  const wall = performance.now();
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    for (let i = next++; i < total; i = next++) {
      const begin = performance.now();
      const status = await send(i);
      latencies.push(performance.now() - begin);
      statuses[status] = (statuses[status] ?? 0) + 1;
    }
  }));
  const seconds = (performance.now() - wall) / 1000;
  const cpuMs = Object.fromEntries(
    Object.entries(pids).map((
      [k, pid],
    ) => [k, pid ? round((((cpuSeconds(pid) ?? NaN) - before[k]!) / total) * 1000, 3) : NaN]),
  );
  return { latencies, statuses, seconds, cpuMs };
}

const summary = (r: Run) => ({
  perSecond: round(r.latencies.length / r.seconds),
  p50Ms: round(percentile(r.latencies, 50)),
  p99Ms: round(percentile(r.latencies, 99)),
  maxMs: round(Math.max(...r.latencies)),
  answers: r.statuses,
  cpuMsPerCall: r.cpuMs,
});
const row = (label: string, r: Run) => {
  const s = summary(r);
  console.log(
    `| ${label} | ${s.perSecond}/s | ${s.p50Ms} ms | ${s.p99Ms} ms | ${s.maxMs} ms | ${
      JSON.stringify(s.answers)
    } | ${Object.entries(s.cpuMsPerCall).map(([k, v]) => `${k} ${v} ms`).join(", ")} |`,
  );
};
const header = (title: string) =>
  console.log(
    `\n${title}\n| Run | throughput | p50 | p99 | max | answers | CPU per call |\n|---|---|---|---|---|---|---|`,
  );

// --- the cluster's objects: a team with every limit in force, its ProviderConfig, and a baseline namespace
await installManifests();
for (const [ns, team] of [[NS, "load"], [BASE_NS, undefined]] as const) {
  await kubectlOk(["create", "namespace", ns]);
  if (team) await kubectlOk(["label", "namespace", ns, `butler.butlerlabs.dev/team=${team}`]);
}
const apply = (obj: unknown) => applyObject(obj, { fieldManager: "butler-load" });
const total = start + creates;
const LIMITS = {
  maxClusters: total,
  maxNodesPerCluster: 10,
  maxTotalNodes: total * 3,
  maxCPUCores: String(total * 4),
  maxMemory: `${total * 8}Gi`,
  maxStorage: `${total * 100}Gi`,
};
await apply({
  apiVersion: API,
  kind: "Team",
  metadata: { name: "load" },
  spec: {
    displayName: "Load",
    access: { users: [{ name: "lead@example.com", role: "admin" }] },
    environments: [
      { name: "dev", limits: { maxClusters: total, maxClustersPerMember: total } },
      { name: "staging" },
    ],
    resourceLimits: LIMITS,
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
    limits: { maxClustersPerTeam: total },
  },
});
const tenantCluster = (name: string, namespace = NS, env = "dev") => ({
  apiVersion: API,
  kind: "TenantCluster",
  metadata: {
    name,
    namespace,
    labels: { "butler.butlerlabs.dev/environment": env },
    annotations: { "butler.butlerlabs.dev/owner": "lead@example.com" },
  },
  spec: {
    providerConfigRef: { name: "load-pc", namespace: NS },
    workers: { replicas: 1, machineTemplate: { cpu: "2", memory: "4Gi", diskSize: "50Gi" } },
  },
});
async function bulk(namespace: string, names: string[]): Promise<void> {
  for (let i = 0; i < names.length; i += 250) {
    await apply({
      apiVersion: "v1",
      kind: "List",
      items: names.slice(i, i + 250).map((n) => tenantCluster(n, namespace)),
    });
  }
}
const seq = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
await bulk(NS, seq("start", start));
await bulk(BASE_NS, seq("start", start));
console.log(`test API server ${c.server}: ${start} TenantClusters in ${NS} and in ${BASE_NS}`);

// --- the service, with the Deployment's worker, queue and heap settings
const deployment = parse(Deno.readTextFileSync(`${ROOT}/manifests/hooks/deployment.yaml`)) as Obj;
const container = deployment.spec.template.spec.containers[0];
const shippedEnv = Object.fromEntries(
  (container.env as { name: string; value?: string }[])
    .filter((e) => ["HOOK_WORKERS", "HOOK_QUEUE_LIMIT", "HOOK_QUEUE_BYTES", "DENO_V8_FLAGS"].includes(e.name))
    .map((e) => [e.name, e.value ?? ""]),
);
const memoryLimit = String(container.resources.limits.memory);
const webhookPort = freePort();
const inspectorPort = freePort();
// The service reads and writes as its own ServiceAccount, with the shipped RBAC and ledger policy.
const token = (await kubectlOk(["create", "token", "butler-hooks", "-n", "butler-system", "--duration=2h"]))
  .trim();
const kubeconfig = await Deno.makeTempFile({ suffix: ".kubeconfig" });
Deno.writeTextFileSync(kubeconfig, tokenKubeconfig(c.server, token, { caFile: c.caFile }));
const child = new Deno.Command(Deno.execPath(), {
  args: [
    "run",
    ...(cpuProfileFile ? [`--inspect=127.0.0.1:${inspectorPort}`] : []),
    "--allow-net",
    "--allow-env",
    "--allow-read",
    `${ROOT}/main.ts`,
  ],
  ...(profileDir ? { cwd: profileDir } : {}),
  env: {
    ...shippedEnv,
    ...(profileDir ? { DENO_V8_FLAGS: `${shippedEnv.DENO_V8_FLAGS},--prof` } : {}),
    HOST: "127.0.0.1",
    PORT: String(freePort()),
    WEBHOOK_PORT: String(webhookPort),
    WEBHOOK_TLS_CERT_FILE: c.hookCertFile,
    WEBHOOK_TLS_KEY_FILE: c.hookKeyFile,
    KUBECONFIG: kubeconfig,
    NO_COLOR: "1",
  },
  stdout: "piped",
  stderr: "inherit",
}).spawn();
const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
let hookPort = 0;
for (let seen = ""; !seen.includes("admission webhooks listening");) {
  const { value, done } = await lines.read();
  if (done) throw new Error("the service exited before listening");
  seen += value;
  hookPort = Number(/"port":(\d+),"routes"/.exec(seen)?.[1] ?? hookPort);
}
(async () => {
  while (!(await lines.read()).done) { /* drain */ }
})();
const base = `https://127.0.0.1:${webhookPort}`;
const client = Deno.createHttpClient({ caCerts: [Deno.readTextFileSync(c.caFile)] });

/** The service's reads from memory and from the API so far, from its metrics. */
async function cacheReads(): Promise<string> {
  const text = await (await fetch(`http://127.0.0.1:${hookPort}/metrics`)).text();
  return [...text.matchAll(/butler_admission_cache_reads_total\{source="(\w+)"\} (\d+)/g)]
    .map((m) => `${m[1]} ${m[2]}`).join(", ");
}

/** The service's count of cached TenantClusters, from its metrics. */
async function cachedClusters(): Promise<number> {
  const text = await (await fetch(`http://127.0.0.1:${hookPort}/metrics`)).text();
  return Number(/butler_admission_cache_objects\{resource="tenantclusters"\} (\d+)/.exec(text)?.[1] ?? -1);
}

/** One message of each refusal status seen, for the log. */
const samples: Record<string, string> = {};

// --- creates: the baseline with no webhook registered, then the shipped webhooks with every limit in force
const realCreate = (namespace: string, prefix: string) => async (i: number) => {
  const r = await api(
    "POST",
    `/apis/${API}/namespaces/${namespace}/tenantclusters`,
    tenantCluster(`${prefix}-${i}`, namespace),
  );
  if (r.status === 201) return "201";
  const message = String((r.body as Obj).message ?? "");
  samples[r.status] ??= message.slice(0, 400);
  return `${r.status}${/kept changing/.test(message) ? " contention" : ""}`;
};
header(
  `creates: ${concurrency} concurrent clients, ${creates} real TenantCluster creates, ${start} stored before`,
);
await Promise.all(Array.from({ length: 20 }, (_, i) => realCreate(BASE_NS, "warm")(i)));
const baseline = await drive(creates, realCreate(BASE_NS, "c"));
row("baseline: no webhook registered", baseline);

await apply(await shippedWebhooks(base));
// A new webhook configuration takes effect within seconds: wait until a refusal shows it is called.
for (const deadline = Date.now() + 30_000;;) {
  const r = await api("POST", `/apis/${API}/namespaces/${NS}/tenantclusters?dryRun=All`, {
    ...tenantCluster("foreign"),
    spec: { providerConfigRef: { name: "load-pc", namespace: NS }, teamRef: { name: "other" } },
  });
  if (r.status === 403) break;
  if (Date.now() > deadline) throw new Error(`the webhook never answered: ${JSON.stringify(r.body)}`);
  await new Promise((r) => setTimeout(r, 250));
}
const profiler = cpuProfileFile ? await startCpuProfile(inspectorPort) : undefined;
const withHooks = await drive(creates, realCreate(NS, "c"));
if (profiler) {
  Deno.writeTextFileSync(cpuProfileFile!, JSON.stringify(await profiler.stop()));
  console.log(`  CPU profile of the service during these creates: ${cpuProfileFile}`);
}
row("the shipped webhooks, every limit in force (ledger writes)", withHooks);
console.log(`  cache reads: ${await cacheReads()}`);
for (const [status, message] of Object.entries(samples)) console.log(`  ${status}: ${message}`);

// --- reviews straight to the routes
const review = (request: Obj) =>
  JSON.stringify({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", request });
const gvk = (kind: string, resource: string) => ({
  kind: { group: "butler.butlerlabs.dev", version: "v1alpha1", kind },
  resource: { group: "butler.butlerlabs.dev", version: "v1alpha1", resource },
});
const admin = { username: "lead@example.com", groups: ["system:authenticated"] };
const stored = (await api("GET", `/apis/${API}/namespaces/${NS}/tenantclusters`)).body as Obj;
const storedCount = (stored.items as Obj[]).length;
const routes: [key: string, label: string, path: string, body: string, expect: boolean][] = [
  [
    "create",
    "TenantCluster create (dry run: its Team, ProviderConfig, ledger and namespace from the cache)",
    "/webhooks/validate/tenantcluster",
    review({
      uid: "load-tc",
      ...gvk("TenantCluster", "tenantclusters"),
      name: "new-one",
      namespace: NS,
      operation: "CREATE",
      dryRun: true,
      userInfo: admin,
      object: tenantCluster("new-one"),
      oldObject: null,
    }),
    false, // the team is full: every limit is reached after the creates
  ],
  [
    "environment",
    `Team environment removal (${storedCount} TenantClusters of its namespace use it)`,
    "/webhooks/validate/team",
    review({
      uid: "load-team",
      ...gvk("Team", "teams"),
      name: "load",
      operation: "UPDATE",
      userInfo: { username: "admin", groups: ["system:masters", "system:authenticated"] },
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
    "providerconfig",
    `ProviderConfig delete (every TenantCluster, ${storedCount + start + creates + 20})`,
    "/webhooks/validate/providerconfig",
    review({
      uid: "load-pc",
      ...gvk("ProviderConfig", "providerconfigs"),
      name: "load-pc",
      namespace: NS,
      operation: "DELETE",
      userInfo: { username: "admin", groups: ["system:masters", "system:authenticated"] },
      object: null,
      oldObject: { apiVersion: API, kind: "ProviderConfig", metadata: { name: "load-pc", namespace: NS } },
    }),
    false,
  ],
];

async function callRoute(path: string, body: string, expect: boolean): Promise<string> {
  try {
    const res = await fetch(`${base}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
      client,
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    const text = await res.text();
    if (res.status !== 200) return String(res.status);
    const allowed = JSON.parse(text).response?.allowed;
    if (allowed !== expect) samples[`${path} allowed=${allowed}`] ??= text.slice(0, 300);
    return allowed ? "allowed" : "denied";
  } catch (err) {
    if (err instanceof DOMException && err.name === "TimeoutError") return "timeout";
    throw err;
  }
}

header(`route: ${concurrency} concurrent clients x ${perClient} AdmissionReviews, straight to the service`);
const reviews: Record<string, Run> = {};
for (const [key, label, path, body, expect] of routes) {
  await Promise.all(Array.from({ length: 20 }, () => callRoute(path, body, expect))); // warm connections
  reviews[key] = await drive(concurrency * perClient, () => callRoute(path, body, expect));
  row(label, reviews[key]);
}

// --- overshoot, from the API
const items = ((await api("GET", `/apis/${API}/namespaces/${NS}/tenantclusters`)).body as Obj).items as Obj[];
const nodes = items.reduce((n, i) => n + (i.spec?.workers?.replicas ?? 1), 0);
const cpus = items.reduce(
  (n, i) => n + (i.spec?.workers?.replicas ?? 1) * Number(i.spec?.workers?.machineTemplate?.cpu ?? 0),
  0,
);
const overshoot = Math.max(0, items.length - LIMITS.maxClusters) + Math.max(0, nodes - LIMITS.maxTotalNodes) +
  Math.max(0, cpus - Number(LIMITS.maxCPUCores));
const contention = Object.entries(withHooks.statuses).filter(([k]) => k.includes("contention"))
  .reduce((n, [, v]) => n + v, 0);

// --- memory with `--memory` TenantClusters cached
let memory: Obj | undefined;
if (memoryClusters > 0) {
  await api(
    "DELETE",
    "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/butler-admission",
  );
  const have = items.length + start + creates + 20;
  const more = Math.max(0, memoryClusters - have);
  await kubectlOk(["create", "namespace", "load-memory"]);
  await bulk("load-memory", seq("m", more));
  const deadline = Date.now() + 120_000;
  let cached = await cachedClusters();
  while (cached < memoryClusters && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 1000));
    cached = await cachedClusters();
  }
  memory = {
    cachedTenantClusters: cached,
    rssMiB: round(statusMiB(child.pid, "VmRSS") ?? NaN),
    peakRssMiB: round(statusMiB(child.pid, "VmHWM") ?? NaN),
    limit: memoryLimit,
  };
  console.log(`\nmemory: ${JSON.stringify(memory)}`);
}

const result = {
  creates: {
    webhook: { perSecond: summary(withHooks).perSecond, p99Ms: summary(withHooks).p99Ms },
    baseline: { perSecond: summary(baseline).perSecond, p99Ms: summary(baseline).p99Ms },
    throughputRatio: round(summary(withHooks).perSecond / summary(baseline).perSecond, 2),
    p99Ratio: round(summary(withHooks).p99Ms / summary(baseline).p99Ms, 2),
    answers: withHooks.statuses,
  },
  listReviews: {
    p99Ms: Math.max(summary(reviews.environment!).p99Ms, summary(reviews.providerconfig!).p99Ms),
    createReviewP99Ms: summary(reviews.create!).p99Ms,
    environmentP99Ms: summary(reviews.environment!).p99Ms,
    providerConfigP99Ms: summary(reviews.providerconfig!).p99Ms,
    timeouts: Object.values(reviews).reduce((n, r) => n + (r.statuses.timeout ?? 0), 0),
  },
  serviceCpuMsPerReview: withHooks.cpuMs.service,
  contentionRefusals: contention,
  overshoot,
  ...(memory ? { memory } : {}),
};
console.log(`\n${JSON.stringify(result, null, 2)}`);
if (jsonFile) Deno.writeTextFileSync(jsonFile, JSON.stringify(result, null, 2) + "\n");

child.kill("SIGTERM");
await child.status;
