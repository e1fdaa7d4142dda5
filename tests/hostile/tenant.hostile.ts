/**
 * The tenant adversary (issue #55, part c): tenant API servers that answer the reporter in the costliest shapes
 * within its caps (a list page of 8 MiB, a watch event of 1 MiB) and past them: a page just under 8 MiB of empty
 * objects, one of Services whose members come in varying orders, one past the cap, one of 35 KB of gzip that
 * inflates to 8 MiB; watch events sent a byte at a time, and events at the cap whose objects' keys come in varying
 * orders. The reporter
 * runs with its shipped command line and heap cap (restarted after an exit, as the kubelet would) beside a benign
 * tenant. Measured: its exits and out-of-memory ends, its peak resident memory against its Deployment's limit, the
 * CPU it spends while the byte-at-a-time tenants send (a reader quadratic in the chunks holds a core), and each
 * tenant's Reporting reason.
 */
import assert from "node:assert/strict";
import { REPORTER_BINDING } from "../../hooks/team/mod.ts";
import { api, applyObject, installManifests, kubectl } from "../api/cluster.ts";
import { b64 } from "../api/tenant.ts";
import { benignTenant, loadBalancer, serveTenant, tenantKubeconfig } from "./fake_tenant.ts";
import { providerConfigSpec } from "./generate.ts";
import { record } from "./measure.ts";
import { installReporterRbac, reporterMemoryLimit, shippedReporter, supervise } from "./processes.ts";

const NS = "team-tenants";
const PC = "tenants-elastic";
const GROUP = "/apis/butler.butlerlabs.dev/v1alpha1";
const MIB = 1024 * 1024;
/** The reporter's caps on a tenant's list page (the watch's `maxPageBytes`) and on one watch event. */
const PAGE_CAP = 8 * MIB;
const EVENT_CAP = MIB;
const enc = new TextEncoder();
/** How long the reporter's CPU is measured beside the byte-at-a-time tenant, and every tenant then runs on. */
const WINDOW_MS = 12_000;

/** A ServiceList page whose items are `items()` (JSON text, made once), ignoring any limit asked. */
function page(items: () => string): () => Response {
  let body: Uint8Array | undefined;
  return () => {
    body ??= enc.encode(
      `{"kind":"ServiceList","apiVersion":"v1","metadata":{"resourceVersion":"1"},"items":[${items()}]}`,
    );
    return new Response(body as Uint8Array<ArrayBuffer>);
  };
}

/** `n` bytes of `{},{},…` (JSON array members). */
const empties = (n: number) => `${"{},".repeat(Math.floor(n / 3) - 1)}{}`;

/** A Service whose members, and its metadata's, come in the `i`th of their orders. */
function shuffledService(i: number): string {
  const s = loadBalancer(`s${i}`, `10.0.${(i >> 8) & 255}.${i & 255}`) as Record<
    string,
    Record<string, unknown>
  >;
  const rotate = <T>(xs: T[], by: number) => xs.map((_, k) => xs[(k + by) % xs.length]!);
  const meta = Object.fromEntries(rotate(Object.entries(s.metadata!), i % 5));
  const members = rotate([["metadata", meta], ["spec", s.spec], ["status", s.status]] as const, i % 3);
  return JSON.stringify(Object.fromEntries(i % 2 ? members.reverse() : members));
}

/** Services of varying orders, just under `n` bytes. */
function shuffledServices(n: number): string {
  const out: string[] = [];
  for (let i = 0, used = 0;; i++) {
    const s = shuffledService(i);
    if (used + s.length + 1 > n) return out.join(",");
    out.push(s);
    used += s.length + 1;
  }
}

/** One watch event of a Service padded with objects of varying key orders to about `n` bytes. */
function paddedEvent(i: number, n: number): string {
  const keys = ["a", "b", "c", "d", "e", "f"];
  const pad: string[] = [];
  for (let k = 0, used = 0; used < n - 400; k++) {
    const o = `{${keys.map((_, j) => `"${keys[(j + k) % 6]}${k % 7}":0`).join(",")}}`;
    pad.push(o);
    used += o.length + 1;
  }
  const s = JSON.parse(shuffledService(i));
  return `{"object":${
    JSON.stringify({ ...s, x: "PAD" }).replace('"PAD"', `[${pad.join(",")}]`)
  },"type":"ADDED"}\n`;
}

/** A watch whose events come one byte per chunk, `rate` bytes a second, for ever. */
function byteByByte(event: string, rate: number): Response {
  const bytes = enc.encode(event);
  let at = 0;
  const perTick = Math.max(1, Math.round(rate / 100));
  return new Response(
    new ReadableStream<Uint8Array>({
      async pull(c) {
        await new Promise((r) => setTimeout(r, 10));
        for (let k = 0; k < perTick; k++) {
          c.enqueue(bytes.subarray(at % bytes.length, at % bytes.length + 1));
          at++;
        }
      },
    }, { highWaterMark: 0 }),
  );
}

const emptyList = page(() => "");
const openWatch = () => new Response(new ReadableStream({ start() {} }));
const isWatch = (req: Request) => new URL(req.url).searchParams.get("watch") !== null;

/** `page` compressed with gzip (sent as such whatever the client asked for): 8 MiB of `{}` is about 35 KB. */
function gzipped(items: () => string): () => Promise<Response> {
  let body: Uint8Array | undefined;
  return async () => {
    body ??= new Uint8Array(
      await new Response(
        new Blob([await page(items)().arrayBuffer()]).stream().pipeThrough(new CompressionStream("gzip")),
      ).arrayBuffer(),
    );
    return new Response(body as Uint8Array<ArrayBuffer>, { headers: { "content-encoding": "gzip" } });
  };
}

const pages = {
  gzip: gzipped(() => empties(PAGE_CAP - 1024)),
  empties: page(() => empties(PAGE_CAP - 1024)),
  keyOrders: page(() => shuffledServices(PAGE_CAP - 1024)),
  pastCap: page(() => empties(PAGE_CAP + MIB)),
};

/** The hostile tenants: what each answers. */
const TENANTS: Record<string, (req: Request) => Response | Promise<Response>> = {
  "page-gzip-inflates-to-8mib": (req) => isWatch(req) ? openWatch() : pages.gzip(),
  "page-8mib-empties": (req) => isWatch(req) ? openWatch() : pages.empties(),
  "page-8mib-key-orders": (req) => isWatch(req) ? openWatch() : pages.keyOrders(),
  "page-past-cap-empties": (req) => isWatch(req) ? openWatch() : pages.pastCap(),
  "watch-byte-by-byte": (req) => isWatch(req) ? byteByByte(paddedEvent(1, 256 * 1024), 20_000) : emptyList(),
  "watch-events-at-cap-key-orders": (req) => {
    if (!isWatch(req)) return emptyList();
    const events = Array.from({ length: 8 }, (_, i) => paddedEvent(i, EVENT_CAP - 2048));
    return new Response(
      new ReadableStream({
        async pull(c) {
          const e = events.shift();
          if (e) c.enqueue(enc.encode(e));
          else await new Promise(() => {});
        },
      }),
    );
  },
};

const wait = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** CPU seconds a process has used (user and system), from /proc. */
function cpuSeconds(pid: number): number {
  try {
    const fields = Deno.readTextFileSync(`/proc/${pid}/stat`).split(") ")[1]!.split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return NaN;
  }
}

/** The Reporting reason of each inventory of the namespace. */
async function reasons(): Promise<Record<string, string | undefined>> {
  const r = await api("GET", `${GROUP}/namespaces/${NS}/loadbalancerinventories`);
  const items = (r.body as {
    items?: { metadata: { name: string }; status?: { conditions?: { type: string; reason: string }[] } }[];
  }).items ?? [];
  return Object.fromEntries(
    items.map((i) => [i.metadata.name, i.status?.conditions?.find((c) => c.type === "Reporting")?.reason]),
  );
}

Deno.test("the reporter against tenants answering the costliest shapes within its caps", async (t) => {
  await installManifests();
  await installReporterRbac();
  await applyObject({
    apiVersion: "v1",
    kind: "Namespace",
    metadata: { name: NS, labels: { "butler.butlerlabs.dev/team": "tenants" } },
  });
  await applyObject({
    apiVersion: "rbac.authorization.k8s.io/v1",
    kind: "RoleBinding",
    metadata: { name: REPORTER_BINDING, namespace: NS },
    roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: REPORTER_BINDING },
    subjects: [{ kind: "ServiceAccount", name: "butler-reporter", namespace: "butler-system" }],
  });
  await applyObject({
    apiVersion: "butler.butlerlabs.dev/v1alpha1",
    kind: "ProviderConfig",
    metadata: { name: PC, namespace: NS },
    spec: providerConfigSpec({ team: "tenants", namespace: NS }),
  });
  const servers = Object.fromEntries(
    [...Object.entries(TENANTS), ["benign", benignTenant] as const].map((
      [name, serve],
    ) => [name, serveTenant(serve)]),
  );
  const tenant = async (name: string) => {
    await applyObject({
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: `${name}-kubeconfig`, namespace: NS },
      data: { value: b64(tenantKubeconfig(servers[name]!.url)) },
    });
    await applyObject({
      apiVersion: "butler.butlerlabs.dev/v1alpha1",
      kind: "TenantCluster",
      metadata: { name, namespace: NS },
      spec: { providerConfigRef: { name: PC, namespace: NS } },
    });
  };
  /** Waits until each of `names` is read to a reason (or 60 s); the reasons. */
  const readTo = async (names: string[]) => {
    let seen = await reasons();
    for (const end = performance.now() + 60_000; performance.now() < end; await wait(1000)) {
      seen = await reasons();
      if (names.every((k) => seen[k] && seen[k] !== "Connecting")) break;
    }
    return seen;
  };

  // First the tenants that send a byte at a time, beside the benign one: the CPU the reporter spends in a window of
  // them is theirs (a reader quadratic in the chunks held a core). Then every other tenant.
  const slow = ["benign", "watch-byte-by-byte"];
  for (const name of slow) await tenant(name);
  const reporter = await supervise(await shippedReporter({ KUBECONFIG_RECHECK_SECONDS: "5" }));
  await readTo(slow);
  const pid = reporter.current.child.pid;
  const [cpuFrom, wallFrom] = [cpuSeconds(pid), performance.now()];
  await wait(WINDOW_MS);
  const cpu = (cpuSeconds(pid) - cpuFrom) / ((performance.now() - wallFrom) / 1000);
  for (const name of Object.keys(servers).filter((n) => !slow.includes(n))) await tenant(name);
  await readTo(Object.keys(servers));
  // A window more of every tenant answering as it does.
  await wait(WINDOW_MS);
  const seen = await reasons();
  const code = await reporter.stop();
  await Promise.all(Object.values(servers).map((s) => s.shutdown()));
  await kubectl(["delete", "namespace", NS, "--wait=false"]);

  const limit = reporterMemoryLimit();
  const result = {
    ...reporter.exits(),
    exitCodeAtShutdown: code,
    peakResidentBytes: reporter.peakResident(),
    podLimitBytes: limit,
    coresWhileByteByByte: +cpu.toFixed(2),
    tenants: seen,
    tails: reporter.incarnations.flatMap((i) => i.tail ? [i.tail.slice(-600)] : []).slice(0, 3),
  };
  await record("tenant", result);

  await t.step("the reporter never ended, or ran out of memory", () => {
    assert.deepEqual(reporter.exits(), { exits: 0, outOfMemory: 0, codes: [] }, result.tails.join("\n---\n"));
    assert.equal(code, 0);
  });
  await t.step("its resident memory stayed within its Deployment's limit", () => {
    assert.ok(result.peakResidentBytes < limit, `${result.peakResidentBytes}`);
  });
  await t.step("a tenant sending a byte at a time holds less than half a core", () => {
    assert.ok(Number.isFinite(cpu) && cpu < 0.5, `${cpu} cores`);
  });
  await t.step("the benign tenant is watched, and every tenant is read to a reason", () => {
    assert.equal(seen.benign, "Watching");
    for (const name of Object.keys(TENANTS)) assert.ok(seen[name], `${name}: ${JSON.stringify(seen)}`);
  });
});
