/**
 * `npx -y deno@2.9.6 task load:admission [--concurrency=50] [--creates=1000] [--start=100] [--requests=40]
 * [--memory=10000] [--variants=base,webhook-client-auth] [--json=FILE] [--profile=DIR] [--cpu-profile=FILE]`
 *
 * The admission webhooks end to end against the test API server (built like the real API server tier; an already
 * running one is used when `BUTLER_TEST_CLUSTER` is set), judged as ratios measured in one run (issues "Admission
 * at scale" and "Every benchmark runs"). Three team namespaces alike (a Team with every limit in force, its own
 * ProviderConfig, `--start` TenantClusters), one for the baseline and one for each install variant:
 *
 * - the **baseline**: `--concurrency` clients creating `--creates` real TenantClusters through the API server with
 *   no webhook registered (the ValidatingAdmissionPolicies apply, as in every run);
 * - each **variant**, in turn, with the real service (`main.ts`, a child process, with the Deployment's worker and
 *   heap settings, as its own ServiceAccount under the shipped RBAC and ledger policy) behind the shipped
 *   ValidatingWebhookConfiguration: `base`, the base install (the service cannot authenticate the API server, so
 *   admission writes no quota ledger and the controllers hold quotas), and `webhook-client-auth`, the component
 *   (the API server presents its client certificate, the service answers only it and reserves in each team's
 *   ledger). For each: the same creates (throughput and p99 as ratios to the baseline, refusals for contention,
 *   the service's and the API server's CPU per create from /proc), AdmissionReviews straight to the routes
 *   (`--concurrency` x `--requests` each: a TenantCluster create, a Team removing an environment and a
 *   ProviderConfig delete, the last two needing every TenantCluster of a list; p99s and timeouts), whether a
 *   ledger was written, and the overshoot: admitted creates beyond any limit, counted from the API after the run.
 *   Goals: throughput >= 0.5x and p99 <= 3x the baseline's.
 * - **memory**: with `--memory` TenantClusters stored in all, the last variant's resident memory once its cache
 *   holds them (its metric says so), against the Deployment's limit.
 *
 * `--cpu-profile=FILE` writes a V8 CPU profile of the service during each variant's creates (`FILE` with the
 * variant's name before its extension; `tests/load/cpu_profile.ts` reads it). Not part of the test suite: timings
 * belong in recorded figures, never in assertions; `deno task test:smoke` runs it small and checks it gives them.
 *
 * @module
 */
import { API_VERSION as API } from "../../lib/butler/mod.ts";
import { kubectlValidateBinary } from "../api/tools.ts";
import { inTestCluster, numberFlag, stringFlag } from "./cli.ts";
import { statusMiB } from "./proc.ts";
import { startCpuProfile } from "./cpu_profile.ts";
import { drive, type Run, summary } from "./drive.ts";
import { type AdmissionService, startAdmissionService, type Variant, VARIANTS } from "./admission_service.ts";

const args = Deno.args;
const flag = (name: string, fallback: number) => numberFlag(args, name, fallback);
const concurrency = flag("concurrency", 50);
const creates = flag("creates", 1000);
const start = flag("start", 100);
const perClient = flag("requests", 40);
const memoryClusters = flag("memory", 10_000);
const variants = (stringFlag(args, "variants") ?? VARIANTS.join(",")).split(",") as Variant[];
const jsonFile = stringFlag(args, "json");
const profileDir = stringFlag(args, "profile");
const cpuProfileFile = stringFlag(args, "cpu-profile");
for (const v of variants) if (!VARIANTS.includes(v)) throw new Error(`--variants: no variant "${v}"`);

// Without a cluster, start one and run this script again inside it (DENO_CERT must be set at start-up).
await inTestCluster(import.meta.url, args, async () => ({ KUBECTL_VALIDATE: await kubectlValidateBinary() }));

const { api, applyObject, cluster, installManifests, kubectlOk, shippedWebhooks } = await import(
  "../api/cluster.ts"
);

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;
const c = cluster();
const TIMEOUT_MS = 5000;
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

// --- three teams alike: the baseline's and one per variant, every limit in force, each its own ProviderConfig
await installManifests();
const apply = (obj: unknown) => applyObject(obj, { fieldManager: "butler-load" });
const WARM = 20;
const total = start + creates;
const LIMITS = {
  maxClusters: total,
  maxNodesPerCluster: 10,
  maxTotalNodes: total * 3,
  maxCPUCores: String(total * 4),
  maxMemory: `${total * 8}Gi`,
  maxStorage: `${total * 100}Gi`,
};
const teamOf = { baseline: "load-baseline", base: "load-base", "webhook-client-auth": "load-auth" } as const;
const nsOf = (key: keyof typeof teamOf) => `team-${teamOf[key]}`;

async function setUpTeam(team: string): Promise<void> {
  const ns = `team-${team}`;
  await kubectlOk(["create", "namespace", ns]);
  await kubectlOk(["label", "namespace", ns, `butler.butlerlabs.dev/team=${team}`]);
  await apply({
    apiVersion: API,
    kind: "Team",
    metadata: { name: team },
    spec: {
      displayName: team,
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
    metadata: { name: "load-pc", namespace: ns },
    spec: {
      provider: "harvester",
      credentialsRef: { name: "harvester-kubeconfig" },
      harvester: { namespace: "default", networkName: "default/vlan40" },
      scope: { type: "team", teamRef: { name: team } },
      limits: { maxClustersPerTeam: total },
    },
  });
  await bulk(ns, seq("start", start));
}

const tenantCluster = (name: string, namespace: string, env = "dev") => ({
  apiVersion: API,
  kind: "TenantCluster",
  metadata: {
    name,
    namespace,
    labels: { "butler.butlerlabs.dev/environment": env },
    annotations: { "butler.butlerlabs.dev/owner": "lead@example.com" },
  },
  spec: {
    providerConfigRef: { name: "load-pc", namespace },
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
for (const team of Object.values(teamOf)) await setUpTeam(team);
console.log(
  `test API server ${c.server}: ${start} TenantClusters in each of ${Object.values(teamOf).join(", ")}`,
);

/** One message of each refusal status seen, for the log. */
const samples: Record<string, string> = {};

const realCreate = (namespace: string, prefix: string, dryRun = false) => async (i: number) => {
  const r = await api(
    "POST",
    `/apis/${API}/namespaces/${namespace}/tenantclusters${dryRun ? "?dryRun=All" : ""}`,
    tenantCluster(`${prefix}-${i}`, namespace),
  );
  if (r.status === 201) return "201";
  const message = String((r.body as Obj).message ?? "");
  samples[r.status] ??= message.slice(0, 400);
  return `${r.status}${/kept changing|being admitted at once/.test(message) ? " contention" : ""}`;
};
const pids = (service?: AdmissionService) => ({
  ...(service ? { service: service.pid } : {}),
  apiserver: apiServerPid(),
  load: Deno.pid,
});

// --- the baseline: no webhook registered
header(
  `creates: ${concurrency} concurrent clients, ${creates} real TenantCluster creates, ${start} stored before`,
);
await Promise.all(Array.from({ length: WARM }, (_, i) => realCreate(nsOf("baseline"), "warm", true)(i)));
const baseline = await drive(creates, concurrency, pids(), realCreate(nsOf("baseline"), "c"));
row("baseline: no webhook registered", baseline);

// --- reviews straight to the routes
const review = (request: Obj) =>
  JSON.stringify({ apiVersion: "admission.k8s.io/v1", kind: "AdmissionReview", request });
const gvk = (kind: string, resource: string) => ({
  kind: { group: "butler.butlerlabs.dev", version: "v1alpha1", kind },
  resource: { group: "butler.butlerlabs.dev", version: "v1alpha1", resource },
});
const admin = { username: "admin", groups: ["system:masters", "system:authenticated"] };

/** The three reviews, each refused: the team is full after the creates, and the lists are in use. */
function routes(ns: string, team: string, stored: number, everywhere: number) {
  return [
    [
      "create",
      "TenantCluster create (dry run: its Team, ProviderConfig, ledger and namespace from the cache)",
      "/webhooks/validate/tenantcluster",
      review({
        uid: "load-tc",
        ...gvk("TenantCluster", "tenantclusters"),
        name: "new-one",
        namespace: ns,
        operation: "CREATE",
        dryRun: true,
        userInfo: { username: "lead@example.com", groups: ["system:authenticated"] },
        object: tenantCluster("new-one", ns),
        oldObject: null,
      }),
    ],
    [
      "environment",
      `Team environment removal (${stored} TenantClusters of its namespace use it)`,
      "/webhooks/validate/team",
      review({
        uid: "load-team",
        ...gvk("Team", "teams"),
        name: team,
        operation: "UPDATE",
        userInfo: admin,
        object: { apiVersion: API, kind: "Team", metadata: { name: team }, spec: { environments: [] } },
        oldObject: {
          apiVersion: API,
          kind: "Team",
          metadata: { name: team },
          spec: { environments: [{ name: "dev" }, { name: "staging" }] },
        },
      }),
    ],
    [
      "providerconfig",
      `ProviderConfig delete (every TenantCluster, ${everywhere})`,
      "/webhooks/validate/providerconfig",
      review({
        uid: "load-pc",
        ...gvk("ProviderConfig", "providerconfigs"),
        name: "load-pc",
        namespace: ns,
        operation: "DELETE",
        userInfo: admin,
        object: null,
        oldObject: { apiVersion: API, kind: "ProviderConfig", metadata: { name: "load-pc", namespace: ns } },
      }),
    ],
  ] as const;
}

async function callRoute(service: AdmissionService, path: string, body: string): Promise<string> {
  try {
    const res = await fetch(`${service.webhookBase}${path}`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
      client: service.client,
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    const text = await res.text();
    if (res.status !== 200) return String(res.status);
    const allowed = JSON.parse(text).response?.allowed;
    if (allowed !== false) samples[`${path} allowed=${allowed}`] ??= text.slice(0, 300);
    return allowed ? "allowed" : "denied";
  } catch (err) {
    if (err instanceof DOMException && err.name === "TimeoutError") return "timeout";
    throw err;
  }
}

/** Admitted creates beyond the team's limits, counted from the API. */
async function overshootIn(ns: string): Promise<number> {
  const items = ((await api("GET", `/apis/${API}/namespaces/${ns}/tenantclusters`)).body as Obj)
    .items as Obj[];
  const nodes = items.reduce((n, i) => n + (i.spec?.workers?.replicas ?? 1), 0);
  const cpus = items.reduce(
    (n, i) => n + (i.spec?.workers?.replicas ?? 1) * Number(i.spec?.workers?.machineTemplate?.cpu ?? 0),
    0,
  );
  return Math.max(0, items.length - LIMITS.maxClusters) + Math.max(0, nodes - LIMITS.maxTotalNodes) +
    Math.max(0, cpus - Number(LIMITS.maxCPUCores));
}

/**
 * Until a refusal shows the newly registered webhook is called (it takes effect within seconds): a cluster past
 * the team's per-cluster node limit, which only the webhook refuses.
 */
async function webhookCalled(ns: string): Promise<void> {
  for (const deadline = Date.now() + 30_000;;) {
    const probe = tenantCluster("too-large", ns);
    const r = await api("POST", `/apis/${API}/namespaces/${ns}/tenantclusters?dryRun=All`, {
      ...probe,
      spec: { ...probe.spec, workers: { ...probe.spec.workers, replicas: LIMITS.maxNodesPerCluster + 1 } },
    });
    if (r.status === 403 && /denied the request/.test(String((r.body as Obj).message))) return;
    if (Date.now() > deadline) throw new Error(`the webhook never answered: ${JSON.stringify(r.body)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const profileFile = (variant: Variant) =>
  cpuProfileFile?.replace(/(\.[^./]*)?$/, (ext) => `.${variant}${ext}`);

async function measureVariant(variant: Variant): Promise<Obj> {
  const ns = nsOf(variant);
  const service = await startAdmissionService(c, variant, {
    inspect: Boolean(cpuProfileFile),
    ...(profileDir ? { profileDir } : {}),
  });
  await apply(await shippedWebhooks(service.webhookBase));
  await webhookCalled(ns);
  await Promise.all(Array.from({ length: WARM }, (_, i) => realCreate(ns, "warm", true)(i)));
  header(
    `${variant}: ${concurrency} concurrent clients, ${creates} real creates, then reviews to the routes`,
  );
  const profiler = cpuProfileFile ? await startCpuProfile(service.inspectorPort) : undefined;
  const withHooks = await drive(creates, concurrency, pids(service), realCreate(ns, "c"));
  if (profiler) {
    Deno.writeTextFileSync(profileFile(variant)!, JSON.stringify(await profiler.stop()));
    console.log(`  CPU profile of the service during these creates: ${profileFile(variant)}`);
  }
  row(`${variant}: the shipped webhooks, every limit in force`, withHooks);
  const cacheReads = await service.cacheReads();
  console.log(`  cache reads: ${cacheReads}`);

  const stored =
    (((await api("GET", `/apis/${API}/namespaces/${ns}/tenantclusters`)).body as Obj).items as Obj[])
      .length;
  const everywhere = (((await api("GET", `/apis/${API}/tenantclusters`)).body as Obj).items as Obj[]).length;
  const reviews: Record<string, Run> = {};
  for (const [key, label, path, body] of routes(ns, teamOf[variant], stored, everywhere)) {
    await Promise.all(Array.from({ length: 20 }, () => callRoute(service, path, body))); // warm connections
    reviews[key] = await drive(
      concurrency * perClient,
      concurrency,
      pids(service),
      () => callRoute(service, path, body),
    );
    row(label, reviews[key]);
  }
  const cacheReadsAfterReviews = await service.cacheReads();
  console.log(`  cache reads after the reviews: ${cacheReadsAfterReviews}`);
  const ledger = await api("GET", `/api/v1/namespaces/${ns}/configmaps/butler-quota-ledger`);
  await api(
    "DELETE",
    "/apis/admissionregistration.k8s.io/v1/validatingwebhookconfigurations/butler-admission",
  );
  const s = summary(withHooks);
  const b = summary(baseline);
  const throughputRatio = round(s.perSecond / b.perSecond, 2);
  const p99Ratio = round(s.p99Ms / b.p99Ms, 2);
  const result = {
    ledgerWritten: ledger.status === 200,
    creates: {
      perSecond: s.perSecond,
      p50Ms: s.p50Ms,
      p99Ms: s.p99Ms,
      throughputRatio,
      p99Ratio,
      answers: s.answers,
    },
    goalsMet: { throughput: throughputRatio >= 0.5, p99: p99Ratio <= 3 },
    cpuMsPerCreate: s.cpuMsPerCall,
    cacheReads,
    cacheReadsAfterReviews,
    listReviews: {
      p99Ms: Math.max(summary(reviews.environment!).p99Ms, summary(reviews.providerconfig!).p99Ms),
      createReviewP99Ms: summary(reviews.create!).p99Ms,
      environmentP99Ms: summary(reviews.environment!).p99Ms,
      providerConfigP99Ms: summary(reviews.providerconfig!).p99Ms,
      cpuMsPerReview: Object.fromEntries(Object.entries(reviews).map(([k, r]) => [k, r.cpuMs.service])),
      timeouts: Object.values(reviews).reduce((n, r) => n + (r.statuses.timeout ?? 0), 0),
      unexpected: Object.values(reviews).reduce(
        (n, r) => n + r.latencies.length - (r.statuses.denied ?? 0),
        0,
      ),
    },
    serviceCpuMsPerReview: withHooks.cpuMs.service,
    contentionRefusals: Object.entries(withHooks.statuses).filter(([k]) => k.includes("contention"))
      .reduce((n, [, v]) => n + v, 0),
    overshoot: await overshootIn(ns),
  };
  return { result, service };
}

const measured: Record<string, Obj> = {};
let last: AdmissionService | undefined;
for (const variant of variants) {
  // One service at a time: an idle one would still follow every create through its watch.
  await last?.stop();
  const { result, service } = await measureVariant(variant);
  measured[variant] = result;
  last = service;
}
for (const [status, message] of Object.entries(samples)) console.log(`  ${status}: ${message}`);

// --- memory with `--memory` TenantClusters cached, in the last variant's service
let memory: Obj | undefined;
if (memoryClusters > 0 && last) {
  const have = (((await api("GET", `/apis/${API}/tenantclusters`)).body as Obj).items as Obj[]).length;
  await kubectlOk(["create", "namespace", "load-memory"]);
  await bulk("load-memory", seq("m", Math.max(0, memoryClusters - have)));
  const deadline = Date.now() + 120_000;
  let cached = await last.cachedClusters();
  while (cached < memoryClusters && Date.now() < deadline) {
    await new Promise((r) => setTimeout(r, 1000));
    cached = await last.cachedClusters();
  }
  memory = {
    cachedTenantClusters: cached,
    rssMiB: round(statusMiB(last.pid, "VmRSS") ?? NaN),
    peakRssMiB: round(statusMiB(last.pid, "VmHWM") ?? NaN),
    limit: last.memoryLimit,
  };
  console.log(`\nmemory: ${JSON.stringify(memory)}`);
}
await last?.stop();

const b = summary(baseline);
const result = {
  concurrency,
  creates,
  start,
  // The machine's load averages at the end (1, 5, 15 minutes): how much else wanted the cores the run shared.
  loadAverage: Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(" "),
  baseline: { perSecond: b.perSecond, p50Ms: b.p50Ms, p99Ms: b.p99Ms, cpuMsPerCreate: b.cpuMsPerCall },
  variants: measured,
  ...(memory ? { memory } : {}),
};
console.log(`\n${JSON.stringify(result, null, 2)}`);
if (jsonFile) Deno.writeTextFileSync(jsonFile, JSON.stringify(result, null, 2) + "\n");
