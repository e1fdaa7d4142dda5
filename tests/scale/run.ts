/**
 * `deno task test:scale [--clusters=300] [--teams=15] [--pools=2] [--json=FILE] [--timeout=1200]
 * [--metacontroller-args="--client-go-qps=50 --client-go-burst=100"] [--no-faults] [--allocations=N] [--keep]`
 *
 * Many tenants under faults, with the real engine (issue "A thousand tenant clusters under faults"). Like
 * `test:e2e` it needs `METACONTROLLER_BIN` and builds nothing of Metacontroller. On the test control plane it runs
 * the hook service as the Deployment ships it (two processes behind one balancing address, its command line,
 * permissions, worker and memory settings, TLS with client certificates), the admission webhooks at the webhook
 * listener, the reporter as its component ships it (two replicas sharing the tenants; each tenant an HTTPS fake
 * API server, as `load:reporter` fakes them, reached through the kubeconfig Secret Cluster API would write), and
 * Metacontroller with `--metacontroller-args` (the README's first recommendation by default; `=` alone for
 * Metacontroller's own defaults). Then:
 *
 * 1. pools, providers and Teams as a platform team sets them up (tests/scale/workload.ts), and a burst of
 *    TenantClusters, 8 at a time, some refused on purpose by quotas; pool 0 fills up mid-run and is grown;
 * 2. faults during the burst: the hook service SIGKILLed (and restarted) three times, Metacontroller restarted,
 *    the control plane restarted with its etcd data, a TenantCluster deleted and created again (retried every 50 ms
 *    from the delete: Metacontroller's finalizer holds the name until its addresses are released), one
 *    IPAllocation's finalizer removed by hand and the allocation deleted (its grant must be dropped, reported in
 *    the pool's release history, and never granted twice);
 * 3. after convergence: a server-side dry-run create into every team and a `kubectl diff` of every TenantCluster
 *    (nothing written), then from the API: every admitted cluster Ready and its inventory reported, no two grants
 *    overlapping, every ledger equal to the live IPAllocations, no quota exceeded, Warning events counted;
 * 4. everything deleted: no grant, finalizer or IPAllocation left, pools and providers deletable; then a small
 *    set again, and the uninstall procedure of docs/install.md run as written: nothing stuck;
 * 5. the baseline: the objects the converged system held, created with their statuses by a plain client at
 *    8-way concurrency against the same API server, with nothing else running.
 *
 * Prints a summary and writes every count to `--json`. Exits non-zero when an invariant does not hold (the control
 * plane's directory, with every process's log, is then kept; `--keep` keeps it after a passing run too).
 * `--allocations=N` measures the allocation path alone instead (`allocationBurst`): N IPAllocations into one
 * pool, against the direct-write baseline of the same objects.
 *
 * @module
 */
import { parse } from "yaml";
import { freePort, kubectl, kubectlOk, ROOT } from "../api/cluster.ts";
import { type ControlPlane, startControlPlane } from "../api/run.ts";
import { controlPlaneBinary, KUBERNETES_VERSION } from "../api/tools.ts";
import { numberFlag, stringFlag } from "../load/cli.ts";
import {
  hookServiceAccount,
  installButler,
  reporterServiceAccount,
  shippedSizing,
  startHookService,
  startMetacontroller,
  startReporter,
  waitHttp,
} from "../e2e/stack.ts";
import { eventually } from "../e2e/wait.ts";
import { ledgerMismatches, notReady, overlaps, poolGrants, quotaOvershoot } from "./checks.ts";
import { hookCalls } from "./hook_log.ts";
import { startFakeTenants } from "../load/fake_tenant_fleet.ts";
import { balancer, running, totalUsage, Tracked } from "./processes.ts";
import {
  GROWN_PREFIX,
  type PlannedCluster,
  STATIC_IPS_PER_CLUSTER,
  teamNamespace,
  workload,
} from "./workload.ts";

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;

const metacontrollerBin = Deno.env.get("METACONTROLLER_BIN");
if (!metacontrollerBin) {
  console.error(
    "deno task test:scale needs METACONTROLLER_BIN, as deno task test:e2e does (docs/development.md#tests-what-each-tier-proves).",
  );
  Deno.exit(2);
}
const size = {
  clusters: numberFlag(Deno.args, "clusters", 300),
  teams: numberFlag(Deno.args, "teams", 15),
  pools: numberFlag(Deno.args, "pools", 2),
};
const jsonFile = stringFlag(Deno.args, "json");
const timeoutSeconds = numberFlag(Deno.args, "timeout", 1200);
/** `--no-faults`: the same run without faults, to measure what they cost (not a passing run of this tier). */
const withFaults = !Deno.args.includes("--no-faults");
const keep = Deno.args.includes("--keep");
const mcArgs = (stringFlag(Deno.args, "metacontroller-args") ?? "--client-go-qps=50 --client-go-burst=100")
  .split(/\s+/).filter(Boolean);
const API = "/apis/butler.butlerlabs.dev/v1alpha1";
const CONCURRENCY = 8;
const started = performance.now();
const log = (text: string) =>
  console.log(`[${((performance.now() - started) / 1000).toFixed(0).padStart(5)} s] ${text}`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// --- the stack ---------------------------------------------------------------------------------------------------

const planeBin = await controlPlaneBinary();
let plane: ControlPlane = await startControlPlane(planeBin, { controllers: true });
Deno.env.set("BUTLER_TEST_CLUSTER", plane.dir); // kubectl helpers
log(`scale tier: Kubernetes ${KUBERNETES_VERSION}, Metacontroller ${metacontrollerBin} ${mcArgs.join(" ")}`);
// The control plane is stopped and started through `plane`; this only follows its process's figures.
const planeProc = new Tracked("control plane", () => ({ pid: plane.pid, stop: () => plane.stop() }));
await planeProc.start();
const token = (parse(Deno.readTextFileSync(`${plane.dir}/kubeconfig`)) as Obj).users[0].user.token as string;
const http = Deno.createHttpClient({ caCerts: [Deno.readTextFileSync(`${plane.dir}/ca.crt`)] });

const hooksKubeconfig = await hookServiceAccount(plane);
log(
  `hook service as shipped, 2 processes: ${
    Object.entries(shippedSizing()).map(([k, v]) => `${k}=${v}`).join(" ")
  }`,
);
const hookPorts = [0, 1].map(() => ({ port: freePort(), webhookPort: freePort() }));
const hooks = hookPorts.map(({ port, webhookPort }, i) =>
  new Tracked(`hook service ${i}`, async () =>
    running(
      await startHookService({
        plane,
        port,
        webhookPort,
        kubeconfig: hooksKubeconfig,
        log: `${plane.dir}/hooks-${i}.log`,
      }),
    ))
);
for (const h of hooks) await h.start();
const hookLb = balancer(hookPorts.map((p) => p.port));
const webhookLb = balancer(hookPorts.map((p) => p.webhookPort));
await waitHttp(`https://127.0.0.1:${hookLb.port}/readyz`, `${plane.dir}/ca.crt`, 30);
await installButler(plane.dir, `https://127.0.0.1:${hookLb.port}`, `https://127.0.0.1:${webhookLb.port}`);
const metacontroller = new Tracked(
  "Metacontroller",
  // Discovery at Metacontroller's default interval, as an install runs it (the e2e tier's 2 s, to see CRDs
  // installed later, would add a discovery request a second to the steady state); the CRDs are installed first.
  () =>
    running(
      startMetacontroller(metacontrollerBin, plane.dir, `${plane.dir}/metacontroller.log`, [
        "--discovery-interval=30s",
        ...mcArgs,
      ]),
    ),
);
await metacontroller.start();

// --- the API, as a plain client ----------------------------------------------------------------------------------

interface Answer {
  status: number;
  body: Obj;
}

/** One request as the admin; a connection that fails (the control plane restarting) is tried again for 3 min. */
async function call(
  method: string,
  path: string,
  body?: unknown,
  contentType = "application/json",
): Promise<Answer> {
  const deadline = Date.now() + 180_000;
  while (true) {
    try {
      const res = await fetch(`${plane.server}${path}`, {
        client: http,
        method,
        headers: {
          authorization: `Bearer ${token}`,
          accept: "application/json",
          "content-type": contentType,
        },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await res.text();
      // A control plane starting up answers 503, or 429 while its storage initialises.
      if ((res.status === 503 || (res.status === 429 && /initializ/.test(text))) && Date.now() < deadline) {
        throw new Error(`${res.status}`);
      }
      return { status: res.status, body: text ? JSON.parse(text) : {} };
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await sleep(500);
    }
  }
}

async function list(path: string): Promise<Obj[]> {
  const r = await call("GET", path);
  if (r.status !== 200) throw new Error(`GET ${path}: ${r.status} ${r.body.message}`);
  return r.body.items;
}

const create = (path: string, obj: Obj) => call("POST", path, obj);

/** The collection path of an object. */
function collection(obj: Obj): string {
  const [group, version] = obj.apiVersion.includes("/") ? obj.apiVersion.split("/") : ["", obj.apiVersion];
  const kind = (obj.kind as string).toLowerCase();
  const plural = kind.endsWith("y") ? `${kind.slice(0, -1)}ies` : `${kind}s`;
  const prefix = group ? `/apis/${group}/${version}` : `/api/${version}`;
  return `${prefix}${obj.metadata.namespace ? `/namespaces/${obj.metadata.namespace}` : ""}/${plural}`;
}

/** `apiserver_request_total` by verb and resource (`PUT ipallocations/status`): what the API server was asked. */
async function apiRequestsByResource(): Promise<Map<string, number>> {
  const res = await fetch(`${plane.server}/metrics`, {
    client: http,
    headers: { authorization: `Bearer ${token}` },
  });
  const counts = new Map<string, number>();
  for (const line of (await res.text()).split("\n")) {
    if (!line.startsWith("apiserver_request_total{")) continue;
    const label = (name: string) => line.match(new RegExp(`[{,]${name}="([^"]*)"`))?.[1] ?? "";
    const key = `${label("verb")} ${label("resource")}${
      label("subresource") ? `/${label("subresource")}` : ""
    }`;
    counts.set(key, (counts.get(key) ?? 0) + Number(line.slice(line.lastIndexOf(" ") + 1)));
  }
  return counts;
}

/** `apiserver_request_total` summed over every label: the requests the API server has answered since it started. */
async function apiRequests(): Promise<number> {
  return [...(await apiRequestsByResource()).values()].reduce((s, n) => s + n, 0);
}

/** The requests counted between two {@link apiRequestsByResource} readings, at least `min` each, largest first. */
function requestsSince(
  before: Map<string, number>,
  after: Map<string, number>,
  min: number,
): Record<string, number> {
  return Object.fromEntries(
    [...after].map(([k, v]) => [k, v - (before.get(k) ?? 0)] as const)
      .filter(([, v]) => v >= min).sort((a, b) => b[1] - a[1]),
  );
}

/** Runs `work` over `items`, `width` (8) at a time. */
async function pool<T>(
  items: readonly T[],
  work: (item: T, i: number) => Promise<void>,
  width = CONCURRENCY,
): Promise<void> {
  let next = 0;
  await Promise.all(Array.from({ length: width }, async () => {
    for (let i = next++; i < items.length; i = next++) await work(items[i]!, i);
  }));
}

// --- the allocation path alone (--allocations=N) ---------------------------------------------------------------

const burstAllocations = numberFlag(Deno.args, "allocations", 0);
if (burstAllocations > 0) await allocationBurst(burstAllocations);

/**
 * The issue's second goal: N IPAllocations of 1 to 16 addresses (a fixed sequence) created 16 at a time into one
 * /16 pool, as a Cluster API or hand-made burst would; every one Allocated, no two grants overlapping; then the
 * baseline, the same allocations and pool with their statuses written directly, 8 at a time. Writes its own JSON
 * and exits.
 */
async function allocationBurst(n: number): Promise<never> {
  const ns = "scale-allocations";
  const poolName = "burst-pool";
  const must = async (what: string, answer: Promise<Answer>) => {
    const r = await answer;
    if (r.status >= 300) throw new Error(`${what}: ${r.status} ${r.body.message}`);
  };
  await must("namespace", create("/api/v1/namespaces", { metadata: { name: ns } }));
  await must(
    "pool",
    create(`${API}/namespaces/butler-system/networkpools`, {
      apiVersion: "butler.butlerlabs.dev/v1alpha1",
      kind: "NetworkPool",
      metadata: { name: poolName, namespace: "butler-system" },
      spec: { cidr: "10.128.0.0/16" },
    }),
  );
  const allocation = (i: number) => ({
    apiVersion: "butler.butlerlabs.dev/v1alpha1",
    kind: "IPAllocation",
    metadata: {
      name: `burst-${i}`,
      namespace: ns,
      // The labels the TenantCluster controller gives its allocations (else the IPAllocation hook adds them).
      labels: {
        "butler.butlerlabs.dev/network-pool": poolName,
        "butler.butlerlabs.dev/allocation-type": "loadbalancer",
      },
    },
    spec: {
      poolRef: { name: poolName, namespace: "butler-system" },
      type: "loadbalancer",
      count: 1 + (i * 7) % 16,
    },
  });
  const requestsBefore = await apiRequestsByResource();
  const apiCpuAtBurst = planeProc.usage().cpuSeconds;
  const burstStarted = performance.now();
  let createdSeconds = NaN;
  const creating = pool(
    Array.from({ length: n }, (_, i) => i),
    (i) => must(`allocation ${i}`, create(`${API}/namespaces/${ns}/ipallocations`, allocation(i))),
    16,
  ).then(() => void (createdSeconds = (performance.now() - burstStarted) / 1000));
  let firstSeconds = NaN;
  await eventually(
    "every IPAllocation Allocated",
    async () => {
      const allocated = (await list(`${API}/namespaces/${ns}/ipallocations`))
        .filter((a) => a.status?.phase === "Allocated").length;
      if (allocated && Number.isNaN(firstSeconds)) firstSeconds = (performance.now() - burstStarted) / 1000;
      return allocated === n || undefined;
    },
    timeoutSeconds,
    250,
  );
  await creating;
  const allSeconds = (performance.now() - burstStarted) / 1000;
  log(
    `${n} IPAllocations: first Allocated after ${firstSeconds.toFixed(1)} s, all after ${
      allSeconds.toFixed(1)
    } s`,
  );
  // The requests of the burst by verb and resource: what each allocation cost the API server.
  const apiRequests = requestsSince(requestsBefore, await apiRequestsByResource(), n / 10);
  const pools = await list(`${API}/networkpools`);
  const allocations = await list(`${API}/namespaces/${ns}/ipallocations`);
  const { grants } = poolGrants(pools);
  const found = { overlaps: overlaps(grants), ledgerMismatches: ledgerMismatches(grants, allocations) };
  const usage = { metacontroller: metacontroller.usage(), hooks: totalUsage(hooks) };
  const apiServerUsage = planeProc.usage();
  const burstApiServerCpuSeconds = Number((apiServerUsage.cpuSeconds - apiCpuAtBurst).toFixed(1));
  const calls = hookCalls(
    hookPorts.map((_, i) => Deno.readTextFileSync(`${plane.dir}/hooks-${i}.log`)).join("\n"),
  );
  const snapshot = [
    ...pools.map((o) => ({ ...o, kind: "NetworkPool" })),
    ...allocations.map((o) => ({ ...o, kind: "IPAllocation" })),
  ]
    .map((o) => ({ ...o, apiVersion: "butler.butlerlabs.dev/v1alpha1" }));

  // The baseline writes the same objects with nothing reacting: controllers and webhooks off, the objects gone.
  await metacontroller.close();
  for (const h of hooks) await h.close();
  await kubectlOk(["delete", "validatingwebhookconfiguration", "--all"]);
  for (const a of allocations) {
    await call("PATCH", `${API}/namespaces/${ns}/ipallocations/${a.metadata.name}`, {
      metadata: { finalizers: null },
    }, "application/merge-patch+json");
  }
  await call("DELETE", `${API}/namespaces/${ns}/ipallocations`);
  await call("PATCH", `${API}/namespaces/butler-system/networkpools/${poolName}`, {
    metadata: { finalizers: null },
  }, "application/merge-patch+json");
  await call("DELETE", `${API}/namespaces/butler-system/networkpools/${poolName}`);
  await until(
    "the burst's objects gone",
    120,
    async () =>
      (await list(`${API}/ipallocations`)).length + (await list(`${API}/networkpools`)).length === 0,
  );
  const apiCpuBefore = planeProc.usage().cpuSeconds;
  const baselineStarted = performance.now();
  await pool(snapshot, (o) => baselineWrite(o));
  const baselineSeconds = (performance.now() - baselineStarted) / 1000;
  const baselineApiServerCpuSeconds = Number((planeProc.usage().cpuSeconds - apiCpuBefore).toFixed(1));
  log(`baseline: ${snapshot.length} objects and their statuses written in ${baselineSeconds.toFixed(1)} s`);

  const result = {
    allocations: n,
    metacontrollerArgs: mcArgs,
    createdSeconds: Number(createdSeconds.toFixed(1)),
    firstAllocatedSeconds: Number(firstSeconds.toFixed(1)),
    allocatedSeconds: Number(allSeconds.toFixed(1)),
    baselineSeconds: Number(baselineSeconds.toFixed(1)),
    ratio: Number((allSeconds / baselineSeconds).toFixed(2)),
    overlaps: found.overlaps.length,
    ledgerMismatches: found.ledgerMismatches.length,
    ...usage,
    apiServer: apiServerUsage,
    burstApiServerCpuSeconds,
    baselineApiServerCpuSeconds,
    apiRequests,
    hookCalls: calls,
  };
  console.log(JSON.stringify(result, null, 2));
  if (jsonFile) Deno.writeTextFileSync(jsonFile, JSON.stringify(result, null, 2) + "\n");
  hookLb.close();
  webhookLb.close();
  await planeProc.close();
  http.close();
  const failed = found.overlaps.length + found.ledgerMismatches.length > 0;
  if (failed) {
    console.log(
      `state and logs kept in ${plane.dir}\n${
        [...found.overlaps, ...found.ledgerMismatches].slice(0, 10).join("\n")
      }`,
    );
  } else await Deno.remove(plane.dir, { recursive: true });
  Deno.exit(failed ? 1 : 0);
}

// --- the reporter -----------------------------------------------------------------------------------------------

// The reporter as its component ships it (2 replicas sharing the tenants), each tenant faked as load:reporter
// fakes them: an HTTPS API server with no LoadBalancer Service (so no elastic growth changes the workload) that
// takes the MetalLB pool the reporter applies. The hook service's pair is issued for 127.0.0.1 by the plane's CA.
const reporterKubeconfig = await reporterServiceAccount(plane);
const fakeTenants = await startFakeTenants(0, {
  certFile: `${plane.dir}/hook.crt`,
  keyFile: `${plane.dir}/hook.key`,
  caFile: `${plane.dir}/ca.crt`,
});
const reporters = [0, 1].map((i) => {
  const port = freePort();
  return new Tracked(`reporter ${i}`, async () =>
    running(
      await startReporter({
        plane,
        name: `scale-reporter-${i}`,
        port,
        kubeconfig: reporterKubeconfig,
        log: `${plane.dir}/reporter-${i}.log`,
      }),
    ));
});
for (const r of reporters) await r.start();
/** The kubeconfig Secret Cluster API would write for tenant cluster `c-<i>`, pointing at its fake API server. */
const tenantKubeconfig = (name: string, namespace: string) => ({
  apiVersion: "v1",
  kind: "Secret",
  metadata: { name: `${name}-kubeconfig`, namespace },
  data: { value: btoa(fakeTenants.kubeconfig(Number(name.replace(/\D/g, "")))) },
});

// --- setup and burst ---------------------------------------------------------------------------------------------

const plan = workload(size);
for (const obj of [...plan.secrets, ...plan.pools, ...plan.providers, ...plan.teams]) {
  const r = await create(collection(obj), obj);
  if (r.status !== 201) {
    throw new Error(`create ${obj.kind} ${obj.metadata.name}: ${r.status} ${r.body.message}`);
  }
}
log(
  `created ${plan.pools.length} pools (pool 0: ${
    plan.pools[0]!.spec.cidr
  }), ${plan.providers.length} providers, ${plan.teams.length} teams`,
);
for (let t = 0; t < plan.teams.length; t++) {
  await until(
    `namespace ${teamNamespace(t)}`,
    120,
    async () => (await call("GET", `/api/v1/namespaces/${teamNamespace(t)}`)).status === 200,
  );
}

/** Polls a yes/no `check` once a second (the convergence poll lists every cluster: no faster, to not add load). */
async function until(what: string, seconds: number, check: () => Promise<boolean>): Promise<void> {
  await eventually(what, async () => (await check()) || undefined, seconds, 1000);
}

const faults = {
  hookKills: 0,
  metacontrollerRestarts: 0,
  apiServerRestarts: 0,
  recreates: 0,
  finalizersRemoved: 0,
};
const outcome = {
  admitted: new Set<string>(),
  refused: [] as string[],
  contentionRefusals: 0,
};
let requestsBeforeRestart = 0;
/** From the delete of the recreated cluster to its create being accepted: its finalizer holds the name. */
let recreateSeconds: number | undefined;
let poolGrown: { at: number; from: string } | undefined;
let leaked: { uid: string; name: string; pool: string } | undefined;

async function createCluster(c: PlannedCluster): Promise<void> {
  const { name, namespace } = c.object.metadata;
  const secret = await create(`/api/v1/namespaces/${namespace}/secrets`, tenantKubeconfig(name, namespace));
  if (secret.status !== 201 && secret.status !== 409) {
    throw new Error(`kubeconfig Secret of ${name}: ${secret.status} ${secret.body.message}`);
  }
  const path = `${API}/namespaces/${c.object.metadata.namespace}/tenantclusters`;
  for (let attempt = 0;; attempt++) {
    const r = await create(path, c.object);
    const msg = String(r.body.message ?? "");
    if (r.status === 201 || (r.status === 409 && r.body.reason === "AlreadyExists" && attempt > 0)) {
      outcome.admitted.add(c.object.metadata.name);
      return;
    }
    if (/being admitted at once/.test(msg)) outcome.contentionRefusals++;
    else if (r.status === 403 && /denied the request/.test(msg)) {
      outcome.refused.push(`${c.object.metadata.name}: ${msg.slice(0, 300)}`);
      return;
    }
    if (attempt > 60) throw new Error(`create ${c.object.metadata.name}: ${r.status} ${msg}`);
    await sleep(1000); // 429, 409 contention, 5xx, a webhook that is restarting: as a client retries
  }
}

const kill = async (i: number) => {
  log(`fault: hook service ${i} SIGKILL`);
  await hooks[i]!.stop("SIGKILL");
  faults.hookKills++;
  await sleep(1000);
  await hooks[i]!.start();
};

/** Each fault once that share of the clusters to admit is Ready. */
const schedule: [number, () => Promise<void>][] = [
  [0.05, () => kill(0)],
  [0.2, async () => {
    log("fault: Metacontroller restart");
    await metacontroller.stop("SIGTERM");
    faults.metacontrollerRestarts++;
    await metacontroller.start();
  }],
  [0.3, () => kill(1)],
  [0.45, async () => {
    log("fault: control plane restart (etcd data kept)");
    requestsBeforeRestart += await apiRequests();
    await planeProc.stop();
    plane = await startControlPlane(planeBin, { controllers: true, dir: plane.dir });
    await planeProc.start();
    faults.apiServerRestarts++;
    log("control plane back");
  }],
  [0.6, recreate],
  [0.7, () => kill(0)],
  [0.8, removeFinalizer],
];

/** A cluster of a team without caps, deleted and created again with the same name within a second. */
async function recreate(): Promise<void> {
  const candidate = () =>
    plan.clusters.find((c) =>
      outcome.admitted.has(c.object.metadata.name) && c.team % 5 !== 0 &&
      c.object.metadata.labels["butler.butlerlabs.dev/environment"] === "dev"
    );
  await until("an admitted cluster without caps", 300, () => Promise.resolve(candidate() !== undefined));
  const c = candidate()!;
  const path = `${API}/namespaces/${c.object.metadata.namespace}/tenantclusters`;
  const t0 = performance.now();
  const del = await call("DELETE", `${path}/${c.object.metadata.name}`);
  if (del.status !== 200 && del.status !== 202) {
    throw new Error(`delete for recreate: ${del.status} ${del.body.message}`);
  }
  // Metacontroller's finalizer holds it while its allocations are released: the name is free once it is gone
  // (409 until then). A 429 or 5xx (the webhook or the API server busy) is tried again, as a client would.
  let r: Answer;
  do {
    r = await create(path, c.object);
    if (r.status !== 201) await sleep(50);
  } while ((r.status === 409 || r.status === 429 || r.status >= 500) && performance.now() - t0 < 600_000);
  if (r.status !== 201) throw new Error(`recreate ${c.object.metadata.name}: ${r.status} ${r.body.message}`);
  faults.recreates++;
  recreateSeconds = Number(((performance.now() - t0) / 1000).toFixed(1));
  log(`fault: ${c.object.metadata.name} deleted and recreated (${recreateSeconds} s)`);
}

/** One Allocated IPAllocation's finalizer removed by hand, then the allocation deleted: a forced deletion. */
async function removeFinalizer(): Promise<void> {
  let victim: Obj | undefined;
  await until("an Allocated IPAllocation", 300, async () => {
    victim = (await list(`${API}/ipallocations`)).find((a) =>
      a.status?.phase === "Allocated" && a.metadata.finalizers?.length
    );
    return victim !== undefined;
  });
  const path = `${API}/namespaces/${victim!.metadata.namespace}/ipallocations/${victim!.metadata.name}`;
  const patch = await call("PATCH", path, { metadata: { finalizers: null } }, "application/merge-patch+json");
  if (patch.status !== 200) throw new Error(`remove finalizer: ${patch.status} ${patch.body.message}`);
  const del = await call("DELETE", path);
  if (del.status !== 200) {
    throw new Error(`delete after finalizer removal: ${del.status} ${del.body.message}`);
  }
  leaked = { uid: victim!.metadata.uid, name: victim!.metadata.name, pool: victim!.spec.poolRef.name };
  faults.finalizersRemoved++;
  log(
    `fault: finalizer of IPAllocation ${victim!.metadata.namespace}/${
      victim!.metadata.name
    } removed, deleted`,
  );
}

/** Grows pool 0 once a cluster's addresses no longer fit in it. */
async function growWhenFull(stop: { done: boolean }): Promise<void> {
  const path = `${API}/namespaces/butler-system/networkpools/scale-pool-0`;
  while (!stop.done && !poolGrown) {
    const p = (await call("GET", path)).body;
    if (p.status?.availableIPs !== undefined && p.status.availableIPs < STATIC_IPS_PER_CLUSTER) {
      const from = p.spec.cidr as string;
      const to = `${from.split("/")[0]}/${GROWN_PREFIX}`;
      const r = await call("PATCH", path, { spec: { cidr: to } }, "application/merge-patch+json");
      // The webhook (failurePolicy Fail) is down while a fault restarts the hook service: try again, as a user would.
      if (r.status === 429 || r.status >= 500) {
        await sleep(2000);
        continue;
      }
      if (r.status !== 200) throw new Error(`grow pool 0: ${r.status} ${r.body.message}`);
      poolGrown = { at: (performance.now() - burstStart) / 1000, from };
      log(`pool 0 full (${from}, ${p.status.availableIPs} left): grown to ${to}`);
    }
    await sleep(2000);
  }
}

const burstStart = performance.now();
const burstWallStart = Date.now();
const stopGrowing = { done: false };
const growing = growWhenFull(stopGrowing);
/** Ready clusters, as last seen: faults are spread over convergence, not only over the creates. */
let ready = 0;
let burstDone = false;
const expectedAdmitted = plan.clusters.filter((c) => !c.refused).length;
const faulting = (async () => {
  for (const [share, fault] of withFaults ? schedule : []) {
    while (ready < share * expectedAdmitted && !(burstDone && ready >= expectedAdmitted)) await sleep(200);
    await fault();
  }
})();
let clusters: Obj[] = [];
let readySeconds = NaN;
let lastReport = performance.now();
let faultsDone = false;
/** From the first create to the first cluster Ready: what a user waits for the first of a burst. */
let firstReadySeconds: number | undefined;
/** The first Ready cluster's stages, in seconds from the burst's start: where its wait went. */
let firstReady: Record<string, number | string> | undefined;
/** The machine's load averages (1, 5, 15 minutes): how much else wanted the cores this run shares. */
function loadAverage(): string {
  return Deno.readTextFileSync("/proc/loadavg").split(" ").slice(0, 3).join(" ");
}
/** When a cluster was created and each of its conditions last changed, in seconds from the burst's start. */
function stages(c: Obj): Record<string, number | string> {
  const at = (time: string) => Number(((Date.parse(time) - burstWallStart) / 1000).toFixed(1));
  return {
    cluster: `${c.metadata.namespace}/${c.metadata.name}`,
    created: at(c.metadata.creationTimestamp),
    ...Object.fromEntries(
      ((c.status?.conditions ?? []) as Obj[]).map((k) => [`${k.type}${k.status}`, at(k.lastTransitionTime)]),
    ),
  };
}
faulting.finally(() => faultsDone = true);
const converging = until("every admitted TenantCluster Ready", timeoutSeconds, async () => {
  clusters = await list(`${API}/tenantclusters`);
  const waiting = notReady(clusters);
  ready = clusters.length - waiting.length;
  if (ready > 0 && firstReadySeconds === undefined) {
    firstReadySeconds = Number(((performance.now() - burstStart) / 1000).toFixed(1));
    firstReady = stages(clusters.find((c) => c.status?.phase === "Ready")!);
    log(`first Ready after ${firstReadySeconds} s: ${JSON.stringify(firstReady)}; load ${loadAverage()}`);
  }
  if (performance.now() - lastReport > 15_000) {
    lastReport = performance.now();
    log(`${ready}/${clusters.length} Ready`);
  }
  return burstDone && faultsDone && waiting.length === 0 && poolGrown !== undefined;
});
await pool(plan.clusters, createCluster);
burstDone = true;
log(`burst done: ${outcome.admitted.size} admitted, ${outcome.refused.length} refused`);
// Which of a team's clusters a limit refuses depends on arrival order; how many it refuses does not.
const unexpected = plan.teams.flatMap((_, t) => {
  const mine = plan.clusters.filter((c) => c.team === t);
  const want = mine.filter((c) => !c.refused).length;
  const got = mine.filter((c) => outcome.admitted.has(c.object.metadata.name)).length;
  return got === want ? [] : [`${teamNamespace(t)}: ${got} clusters admitted, ${want} expected`];
});
for (const u of unexpected) log(`unexpected: ${u}`);
if (unexpected.length) { for (const r of outcome.refused.slice(0, 10)) log(`refused: ${r}`); }
try {
  await converging;
  readySeconds = (performance.now() - burstStart) / 1000;
  log(
    `all ${clusters.length} Ready after ${
      readySeconds.toFixed(1)
    } s; load ${loadAverage()}; CPU seconds so far: ${
      JSON.stringify({
        metacontroller: metacontroller.usage().cpuSeconds,
        hooks: totalUsage(hooks).cpuSeconds,
        reporter: totalUsage(reporters).cpuSeconds,
        apiServer: planeProc.usage().cpuSeconds,
      })
    }`,
  );
} catch (err) {
  log(String(err));
}
await faulting;
stopGrowing.done = true;
await growing;
// What the API server was asked until convergence, by verb and resource (since the control plane's restart, whose
// counters start again): which writes re-synced which relations.
const untilReady = requestsSince(new Map(), await apiRequestsByResource().catch(() => new Map()), 10);
log(`API requests until Ready since the control plane's restart: ${JSON.stringify(untilReady)}`);
// Where Metacontroller sent its work until convergence (both processes, every life).
const calls = hookCalls(
  hookPorts.map((_, i) => Deno.readTextFileSync(`${plane.dir}/hooks-${i}.log`)).join("\n"),
);
const callsPerCluster = Object.values(calls).reduce((s, c) => s + c.answered, 0) /
  Math.max(1, clusters.length);
log(`hook calls until Ready: ${JSON.stringify(calls)}`);

// --- steady state: what the converged system asks of the API server with nothing changing ---------------------

const STEADY_SECONDS = 60;
const hookLogs = () =>
  hookPorts.map((_, i) => Deno.readTextFileSync(`${plane.dir}/hooks-${i}.log`)).join("\n");
const steadyByResource = await apiRequestsByResource().catch(() => undefined);
const steadyCpu = [metacontroller.usage().cpuSeconds, totalUsage(hooks).cpuSeconds];
const steadyCalls = hookCalls(hookLogs());
await sleep(STEADY_SECONDS * 1000);
const steadyRequests = steadyByResource && requestsSince(steadyByResource, await apiRequestsByResource(), 0);
// What Metacontroller asked of the hooks in that minute, by route: which controller's syncs the requests follow.
const steadyHookCalls = Object.fromEntries(
  Object.entries(hookCalls(hookLogs())).map((
    [route, c],
  ) => [route, c.answered - (steadyCalls[route]?.answered ?? 0)])
    .filter(([, n]) => Number(n) > 0),
);
const steady = {
  seconds: STEADY_SECONDS,
  apiRequestsPerSecond: steadyRequests
    ? Number((Object.values(steadyRequests).reduce((s, n) => s + n, 0) / STEADY_SECONDS).toFixed(1))
    : NaN,
  // What those requests were (more than one a minute), by verb and resource: a status written at every resync shows.
  apiRequests: Object.fromEntries(Object.entries(steadyRequests ?? {}).filter(([, n]) => n >= 2)),
  metacontrollerCpuPercent: Math.round(
    ((metacontroller.usage().cpuSeconds - steadyCpu[0]!) / STEADY_SECONDS) * 100,
  ),
  hooksCpuPercent: Math.round(((totalUsage(hooks).cpuSeconds - steadyCpu[1]!) / STEADY_SECONDS) * 100),
  hookCalls: steadyHookCalls,
  // Writes in that minute but the reporters' Leases: what was still settling (each write re-syncs its relations).
  writes: Object.fromEntries(
    Object.entries(steadyRequests ?? {}).filter(([k, n]) =>
      n > 0 &&
      /^(PUT|PATCH|APPLY|POST|DELETE) /.test(k) && !/leases/.test(k)
    ),
  ),
};
const steadyLoad = loadAverage();
log(`steady state: ${JSON.stringify(steady)}; load ${steadyLoad}`);

// --- dry runs write nothing --------------------------------------------------------------------------------------

const ledgersBefore = await list("/api/v1/configmaps?fieldSelector=metadata.name=butler-quota-ledger");
for (let t = 0; t < plan.teams.length; t++) {
  const ns = teamNamespace(t);
  await create(`${API}/namespaces/${ns}/tenantclusters?dryRun=All`, {
    apiVersion: "butler.butlerlabs.dev/v1alpha1",
    kind: "TenantCluster",
    metadata: { name: "dry-run", namespace: ns },
    spec: { kubernetesVersion: "v1.31.0", workers: { replicas: 2 } },
  });
}
const diffInput = clusters.map((c) => ({
  apiVersion: c.apiVersion,
  kind: c.kind,
  metadata: { name: c.metadata.name, namespace: c.metadata.namespace, labels: c.metadata.labels },
  spec: c.spec,
}));
const diff = await kubectl(["diff", "--server-side", "-f", "-"], {
  stdin: JSON.stringify({ apiVersion: "v1", kind: "List", items: diffInput }),
});
// Exit 1 means differences, which are expected (managed fields); above that the diff did not run and proves nothing.
const diffFailed = diff.code > 1;
if (diffFailed) log(`kubectl diff failed: ${diff.stderr.slice(0, 500)}`);
const ledgersAfter = await list("/api/v1/configmaps?fieldSelector=metadata.name=butler-quota-ledger");
const rv = (l: Obj[]) => new Map(l.map((c) => [c.metadata.namespace, c.metadata.resourceVersion]));
const [rvBefore, rvAfter] = [rv(ledgersBefore), rv(ledgersAfter)];
const dryRunWrites = [...rvAfter].filter(([ns, v]) => rvBefore.get(ns) !== v).length +
  (await list(`${API}/tenantclusters`)).filter((c) => c.metadata.name === "dry-run").length;

// --- invariants --------------------------------------------------------------------------------------------------

// The reporter watches every admitted cluster's tenant and writes its inventory (`spec.observedAt`).
let inventoriesMissing: string[] = [];
await until("every admitted cluster's inventory reported", 180, async () => {
  const reported = new Set(
    (await list(`${API}/loadbalancerinventories`)).filter((i) => i.spec?.observedAt)
      .map((i) => `${i.metadata.namespace}/${i.metadata.name}`),
  );
  inventoriesMissing = clusters.map((c) => `${c.metadata.namespace}/${c.metadata.name}`)
    .filter((k) => !reported.has(k));
  return inventoriesMissing.length === 0;
}).catch(() => {});

const pools = await list(`${API}/networkpools`);
const allocations = await list(`${API}/ipallocations`);
const teams = await list(`${API}/teams`);
const { grants, unreadable } = poolGrants(pools);
const found = {
  overlaps: overlaps(grants),
  ledgerMismatches: [
    ...ledgerMismatches(grants, allocations),
    ...unreadable.map((p) => `${p}: ledger unreadable`),
  ],
  quotaOvershoot: quotaOvershoot(teams, clusters, ledgersAfter),
  notReady: notReady(clusters),
  inventoriesMissing,
};
const leakReported = leaked
  ? pools.some((p) => (p.status?.releases?.history ?? []).some((r: Obj) => r.holder?.uid === leaked!.uid))
  : false;
const warnings = (await list("/api/v1/events?fieldSelector=type=Warning"))
  .filter((e) => /butler\.butlerlabs\.dev/.test(e.involvedObject?.apiVersion ?? ""));
const warningReasons: Record<string, number> = {};
for (const e of warnings) warningReasons[e.reason] = (warningReasons[e.reason] ?? 0) + (e.count ?? 1);
const mcUsage = metacontroller.usage();
const hookUsage = totalUsage(hooks);
const reporterUsage = totalUsage(reporters);
const apiUsage = planeProc.usage();
const requests = requestsBeforeRestart + await apiRequests();
for (const [name, items] of Object.entries(found)) {
  if (items.length) log(`${name}: ${items.length}\n  ${items.slice(0, 10).join("\n  ")}`);
}

// The objects the converged system holds, for the baseline.
const snapshot: Obj[] = [];
for (
  const path of [
    "/api/v1/namespaces",
    `${API}/teams`,
    `${API}/providerconfigs`,
    `${API}/networkpools`,
    `${API}/tenantclusters`,
    `${API}/ipallocations`,
    `${API}/loadbalancerinventories`,
    "/api/v1/configmaps",
    "/api/v1/secrets",
    "/apis/rbac.authorization.k8s.io/v1/rolebindings",
  ]
) {
  const kind = path.split("?")[0]!.split("/").pop()!;
  for (const o of await list(path)) {
    if (
      ["configmaps", "secrets", "rolebindings"].includes(kind) && !/^team-scale-/.test(o.metadata.namespace)
    ) {
      continue;
    }
    snapshot.push({ ...o, kind: o.kind ?? kindOf(kind), apiVersion: o.apiVersion ?? apiVersionOf(path) });
  }
}
function kindOf(plural: string): string {
  return ({
    namespaces: "Namespace",
    configmaps: "ConfigMap",
    secrets: "Secret",
    rolebindings: "RoleBinding",
  } as Record<
    string,
    string
  >)[
    plural
  ]!;
}
function apiVersionOf(path: string): string {
  return path.startsWith("/api/v1") ? "v1" : path.split("/").slice(2, 4).join("/");
}

// --- deletion ----------------------------------------------------------------------------------------------------

const deleteStart = performance.now();
await pool(clusters, async (c) => {
  await call("DELETE", `${API}/namespaces/${c.metadata.namespace}/tenantclusters/${c.metadata.name}`);
});
let afterDelete = { grants: -1, finalizers: -1, orphans: -1 };
try {
  await until(
    "every TenantCluster gone",
    600,
    async () => (await list(`${API}/tenantclusters`)).length === 0,
  );
  await until(
    "every pool's ledger empty",
    120,
    async () => poolGrants(await list(`${API}/networkpools`)).grants.length === 0,
  );
  const orphans = (await list(`${API}/ipallocations`)).length;
  for (const t of plan.teams) await call("DELETE", `${API}/teams/${t.metadata.name}`);
  for (const o of [...plan.providers, ...plan.pools]) {
    await call("DELETE", `${collection(o)}/${o.metadata.name}`);
  }
  await until("Teams, their namespaces, providers and pools gone", 300, async () => {
    for (const p of [`${API}/teams`, `${API}/providerconfigs`, `${API}/networkpools`]) {
      if ((await list(p)).length) return false;
    }
    return !(await list("/api/v1/namespaces")).some((n) => n.metadata.name.startsWith("team-scale-"));
  });
  const left = [`${API}/tenantclusters`, `${API}/ipallocations`, `${API}/teams`, `${API}/networkpools`];
  let finalizers = 0;
  for (const p of left) finalizers += (await list(p)).filter((o) => o.metadata.finalizers?.length).length;
  afterDelete = { grants: 0, finalizers, orphans };
  log(`deleted everything in ${((performance.now() - deleteStart) / 1000).toFixed(1)} s`);
} catch (err) {
  log(`deletion: ${err}`);
}

// --- the documented uninstall procedure (docs/install.md), with Butler objects still there ------------------------

let uninstallStuck: string[] = [];
try {
  uninstallStuck = await uninstall();
} catch (err) {
  uninstallStuck = [String(err)];
}

async function uninstall(): Promise<string[]> {
  const small = workload({ clusters: 3, teams: 1, pools: 1 });
  small.pools[0]!.spec.cidr = "10.200.0.0/24";
  for (const obj of [...small.pools, ...small.providers, ...small.teams]) {
    const r = await create(collection(obj), obj);
    if (r.status !== 201) throw new Error(`uninstall setup: ${obj.kind}: ${r.status} ${r.body.message}`);
  }
  await until(
    "the small set's namespace",
    120,
    async () => (await call("GET", `/api/v1/namespaces/${teamNamespace(0)}`)).status === 200,
  );
  for (const c of small.clusters.filter((c) => !c.refused)) await createCluster(c);
  await until(
    "the small set Ready",
    300,
    async () => notReady(await list(`${API}/tenantclusters`)).length === 0,
  );
  // The service goes as the procedure removes its Deployment; Metacontroller stays (it serves other controllers).
  for (const p of [...hooks, ...reporters]) await p.stop("SIGTERM");
  const install = Deno.readTextFileSync(`${ROOT}/docs/install.md`);
  const block = install.match(/<!-- test:api and test:scale run this block -->\s*```sh\n([\s\S]*?)```/)?.[1];
  if (!block) throw new Error("docs/install.md has no uninstall block marked for test:scale");
  const run = await new Deno.Command("bash", {
    args: ["-euo", "pipefail", "-c", block],
    cwd: ROOT,
    // What this run installed: the base (the block deletes what OVERLAY names).
    env: { KUBECONFIG: `${plane.dir}/kubeconfig`, OVERLAY: "manifests" },
    stdout: "piped",
    stderr: "piped",
  }).output();
  if (!run.success) {
    throw new Error(`the uninstall procedure failed: ${new TextDecoder().decode(run.stderr)}`);
  }
  const stuck: string[] = [];
  await until("Butler's CRDs and team namespaces gone", 300, async () => {
    stuck.length = 0;
    const crds = await list("/apis/apiextensions.k8s.io/v1/customresourcedefinitions");
    stuck.push(
      ...crds.filter((c) => c.spec.group === "butler.butlerlabs.dev").map((c) => `crd ${c.metadata.name}`),
    );
    const namespaces = await list("/api/v1/namespaces");
    stuck.push(
      ...namespaces.filter((n) => /^team-|^butler-system$/.test(n.metadata.name)).map((n) =>
        `namespace ${n.metadata.name} ${n.status?.phase}`
      ),
    );
    return stuck.length === 0;
  }).catch(() => {});
  log(stuck.length ? `uninstall left: ${stuck.join(", ")}` : "uninstall: nothing left");
  return [...stuck];
}

// --- the baseline ------------------------------------------------------------------------------------------------

await metacontroller.close();
for (const p of [...hooks, ...reporters]) await p.close();
await fakeTenants.stop();
await kubectlOk(["apply", "--server-side", "-f", "manifests/crds/"]);
await kubectlOk(["wait", "--for=condition=Established", "--timeout=60s", "crd", "--all"]);
const baselineStart = performance.now();
const namespaced = snapshot.filter((o) => o.kind !== "Namespace");
await pool(snapshot.filter((o) => o.kind === "Namespace"), (o) => baselineWrite(o));
await pool(namespaced, (o) => baselineWrite(o));
const baselineSeconds = (performance.now() - baselineStart) / 1000;
log(`baseline: ${snapshot.length} objects and their statuses written in ${baselineSeconds.toFixed(1)} s`);

async function baselineWrite(o: Obj): Promise<void> {
  const { name, namespace, labels, annotations } = o.metadata;
  const { status: _, ...rest } = o;
  const body = { ...rest, metadata: { name, namespace, labels, annotations } };
  const r = await create(collection(o), body);
  if (r.status !== 201 && r.status !== 409) {
    throw new Error(`baseline ${o.kind} ${name}: ${r.status} ${r.body.message}`);
  }
  if (o.status && o.kind !== "Namespace") {
    const s = await call(
      "PATCH",
      `${collection(o)}/${name}/status`,
      { status: o.status },
      "application/merge-patch+json",
    );
    if (s.status !== 200) throw new Error(`baseline status ${o.kind} ${name}: ${s.status} ${s.body.message}`);
  }
}

// --- the result --------------------------------------------------------------------------------------------------

const result = {
  clusters: size.clusters,
  teams: size.teams,
  pools: size.pools,
  metacontrollerArgs: mcArgs,
  admitted: outcome.admitted.size,
  refusedOnPurpose: outcome.refused.length,
  unexpectedAdmission: unexpected.length,
  contentionRefusals: outcome.contentionRefusals,
  firstReadySeconds,
  firstReady,
  readySeconds: Number(readySeconds.toFixed(1)),
  baselineSeconds: Number(baselineSeconds.toFixed(1)),
  ratio: Number((readySeconds / baselineSeconds).toFixed(2)),
  recreateSeconds,
  poolGrownAfterSeconds: poolGrown ? Number(poolGrown.at.toFixed(1)) : null,
  faults,
  leakReported,
  overlaps: found.overlaps.length,
  ledgerMismatches: found.ledgerMismatches.length,
  quotaOvershoot: found.quotaOvershoot.length,
  notReady: found.notReady.length,
  warningEvents: warnings.reduce((s, e) => s + (e.count ?? 1), 0),
  warningReasons,
  dryRunWrites,
  kubectlDiffFailed: diffFailed,
  afterDelete,
  uninstallStuck: uninstallStuck.length,
  metacontroller: mcUsage,
  hooks: hookUsage,
  reporter: reporterUsage,
  inventoriesMissing: found.inventoriesMissing.length,
  apiServer: apiUsage,
  apiRequests: requests,
  apiRequestsUntilReadyByResource: untilReady,
  steady,
  loadAverageAtSteady: steadyLoad,
  hookCalls: calls,
  hookCallsPerCluster: Number(callsPerCluster.toFixed(1)),
};
console.log(JSON.stringify(result, null, 2));
if (jsonFile) Deno.writeTextFileSync(jsonFile, JSON.stringify(result, null, 2) + "\n");

hookLb.close();
webhookLb.close();
await planeProc.close(); // stops the control plane
http.close();
const failed = [
  result.overlaps,
  result.ledgerMismatches,
  result.quotaOvershoot,
  result.notReady,
  result.inventoriesMissing,
  result.unexpectedAdmission,
  result.dryRunWrites,
  Number(diffFailed),
  result.uninstallStuck,
  afterDelete.finalizers,
  afterDelete.orphans,
  Number(withFaults && !leakReported),
  Number(!withFaults),
  Number(!poolGrown),
  Number(Number.isNaN(readySeconds)),
].some((v) => v !== 0);
if (failed || keep) console.log(`state and logs kept in ${plane.dir}`);
else await Deno.remove(plane.dir, { recursive: true });
Deno.exit(failed ? 1 : 0);
