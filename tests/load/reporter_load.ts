/**
 * `deno task load:reporter [--tenants=500] [--services=20] [--seconds=120] [--json=FILE]`: the reporter at rest with many
 * tenants. Starts the test control plane as the management cluster (or uses `BUTLER_TEST_CLUSTER`), one process
 * of fake tenant API servers, `--tenants` elastic TenantClusters with kubeconfig Secrets, and `main.ts reporter`
 * with the shipped defaults; once every inventory is written, it measures the reporter's resident memory, CPU
 * and inventory writes per minute over `--seconds`, and prints them (docs/performance.md records the figures).
 * The fake tenants serve HTTPS and each kubeconfig carries their CA, as real tenants do (the reporter refuses a
 * plain-HTTP tenant: its token would travel in clear): every tenant has its own TLS client. The plain-HTTP figures
 * in docs/performance.md were measured before that rule.
 *
 * @module
 */
import { API_VERSION as API } from "../../lib/butler/mod.ts";
import { b64 } from "../api/tenant.ts";
import { inTestCluster, numberFlag, stringFlag } from "./cli.ts";
import { startFakeTenants } from "./fake_tenant_fleet.ts";
import { cpuSeconds, statusMiB } from "./proc.ts";

const args = Deno.args;
const flag = (name: string, fallback: number) => numberFlag(args, name, fallback);
const tenants = flag("tenants", 500);
const perTenant = flag("services", 20);
const seconds = flag("seconds", 120);
const jsonFile = stringFlag(args, "json");
const tls = true;

await inTestCluster(import.meta.url, args);

const { cluster, freePort, installManifests, kubectlOk, ROOT } = await import("../api/cluster.ts");
const c = cluster();
const NS = "team-reporter-load";

// --- fake tenants (the hook service's pair is issued for 127.0.0.1 by the control plane's CA)
const fake = await startFakeTenants(
  perTenant,
  tls ? { certFile: c.hookCertFile, keyFile: c.hookKeyFile, caFile: c.caFile } : undefined,
);

// --- management objects
await installManifests();
// A team namespace, as its Team makes it: TenantClusters live nowhere else.
await kubectlOk(["create", "namespace", NS]).catch(() => "");
await kubectlOk(["label", "namespace", NS, `butler.butlerlabs.dev/team=${NS.slice(5)}`, "--overwrite"]);
const apply = (obj: unknown) =>
  kubectlOk(["apply", "--server-side", "-f", "-"], { stdin: JSON.stringify(obj) });
const pc = Deno.readTextFileSync(`${ROOT}/examples/providerconfigs/proxmox-elastic.yaml`)
  .replace("name: proxmox-elastic", "name: load-elastic");
await kubectlOk(["apply", "-f", "-"], { stdin: pc });
for (let i = 0; i < tenants; i += 100) {
  const n = Math.min(100, tenants - i);
  await apply({
    apiVersion: "v1",
    kind: "List",
    items: Array.from({ length: n }, (_, j) => ({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: `tc-${i + j}-kubeconfig`, namespace: NS },
      data: { value: b64(fake.kubeconfig(i + j)) },
    })),
  });
  await apply({
    apiVersion: "v1",
    kind: "List",
    items: Array.from({ length: n }, (_, j) => ({
      apiVersion: API,
      kind: "TenantCluster",
      metadata: { name: `tc-${i + j}`, namespace: NS },
      spec: { providerConfigRef: { name: "load-elastic" } },
    })),
  });
}
console.log(`${tenants} elastic TenantClusters, ${perTenant} LoadBalancer Services each, on ${c.server}`);

// --- the reporter, with the shipped defaults
const port = freePort();
const reporter = new Deno.Command(Deno.execPath(), {
  args: ["run", "--allow-net", "--allow-env", "--allow-read", `${ROOT}/main.ts`, "reporter"],
  env: {
    // The shipped Deployment's heap settings.
    DENO_V8_FLAGS: "--max-old-space-size=96,--max-semi-space-size=1",
    KUBECONFIG: c.kubeconfig,
    HOSTNAME: "load-reporter",
    HOST: "127.0.0.1",
    PORT: String(port),
    NO_COLOR: "1",
    // Extra environment for experiments, e.g. REPORTER_ENV='{"MALLOC_ARENA_MAX":"2"}'.
    ...JSON.parse(Deno.env.get("REPORTER_ENV") ?? "{}"),
  },
  stdout: "null",
  stderr: "inherit",
}).spawn();

async function metrics(): Promise<Map<string, number>> {
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  const out = new Map<string, number>();
  for (const line of text.split("\n")) {
    const m = line.match(
      /^((?:butler_reporter_|nodejs_heap_size_used|nodejs_external)\w*(?:\{[^}]*\})?) ([\d.e+-]+)$/,
    );
    if (m) out.set(m[1]!, Number(m[2]));
  }
  return out;
}
const WRITES = "butler_reporter_inventory_writes_total";
/** The inventory writes so far by their labels (`{part,reason}`). */
const writesByLabels = (m: Map<string, number>) =>
  [...m].filter(([k]) => k.startsWith(WRITES)).map(([k, v]) => [k.slice(WRITES.length), v] as const);
const writes = (m: Map<string, number>) => writesByLabels(m).reduce((n, [, v]) => n + v, 0);
const proc = () => ({ rss: statusMiB(reporter.pid, "VmRSS")!, cpuSeconds: cpuSeconds(reporter.pid)! });

const started = performance.now();
for (;;) {
  await new Promise((r) => setTimeout(r, 1000));
  try {
    const m = await metrics();
    if ((m.get('butler_reporter_tenants{state="Watching"}') ?? 0) >= tenants && writes(m) >= tenants * 2) {
      break;
    }
  } catch { /* not listening yet */ }
  if (performance.now() - started > 600_000) {
    throw new Error("the reporter did not watch every tenant in 10 min");
  }
}
console.log(
  `every tenant watched and its inventory written after ${
    ((performance.now() - started) / 1000).toFixed(1)
  } s`,
);
const startupRss = proc().rss;

const beforeMetrics = await metrics();
const before = { ...proc(), writes: writes(beforeMetrics), at: performance.now() };
let peak = 0;
const samples: number[] = [];
while (performance.now() - before.at < seconds * 1000) {
  await new Promise((r) => setTimeout(r, 2000));
  const p = proc();
  peak = Math.max(peak, p.rss);
  samples.push(p.rss);
}
const m = await metrics();
const after = { ...proc(), writes: writes(m), at: performance.now() };
const minutes = (after.at - before.at) / 60_000;
// The writes of the window by part and reason: at rest they must all be heartbeats.
const beforeByLabels = new Map(writesByLabels(beforeMetrics));
const byReason = writesByLabels(m).map(([k, v]) => [k, v - (beforeByLabels.get(k) ?? 0)] as const)
  .filter(([, n]) => n > 0).map(([k, n]) => `${k}=${n}`).join(" ");
const median = samples.sort((a, b) => a - b)[samples.length >> 1]!;
// Each tenant's heartbeat period is its own in 36-45 s, and a beat waits for the worker's next 5 s tick: one
// beat every 36-50 s. In a window of W seconds a tenant beats between floor(W/50) and ceil(W/36) times.
const windowSeconds = minutes * 60;
const result = {
  tenants,
  servicesPerTenant: perTenant,
  tls,
  windowSeconds: Math.round(windowSeconds),
  rssMiB: {
    afterStartup: Math.round(startupRss),
    median: Math.round(median),
    peak: Math.round(peak),
    // Against afterStartup: growth over the window would show here.
    atEnd: Math.round(after.rss),
  },
  rssPerTenantKiB: Math.round((median * 1024) / tenants),
  cpuPercentOfOneCore: Number((((after.cpuSeconds - before.cpuSeconds) / windowSeconds) * 100).toFixed(1)),
  inventoryWritesPerMinute: Math.round((after.writes - before.writes) / minutes),
  heartbeatsPerMinuteRange: [
    Math.round((tenants * Math.floor(windowSeconds / 50)) / minutes),
    Math.round((tenants * Math.ceil(windowSeconds / 36)) / minutes),
  ],
  windowWrites: byReason,
  heapUsedMiB: Math.round((m.get("nodejs_heap_size_used_bytes") ?? 0) / 1048576),
  externalMiB: Math.round((m.get("nodejs_external_memory_bytes") ?? 0) / 1048576),
};
console.log(JSON.stringify(result, null, 2));
if (jsonFile) Deno.writeTextFileSync(jsonFile, JSON.stringify(result, null, 2) + "\n");

reporter.kill("SIGTERM");
await reporter.status;
await fake.stop();
await kubectlOk(["delete", "namespace", NS, "--wait=false"]).catch(() => "");
