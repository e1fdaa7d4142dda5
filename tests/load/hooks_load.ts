/**
 * `npx -y deno@2.9.6 task load [--workers=N] [--queue=N] [--v8-flags=...] [--body-limit=BYTES] [--scenarios=burst,team,throughput,sizes]
 * [--grants=5000] [--burst=16] [--clusters=1000] [--clients=8] [--requests=20] [--seconds=10] [--json=FILE]`
 *
 * Runs the real service (`main.ts` in a child process) under the load docs/performance.md records, and prints one
 * table per scenario (`--json` writes the figures too; `deno task test:smoke` runs it with small sizes):
 *
 * - burst: `--burst` (16) concurrent NetworkPool syncs of a `--grants` (5,000) grant /12 (2.6 MB each), with
 *   `/healthz` and `/readyz` probed every 25 ms throughout and the child's resident memory sampled: every answer
 *   must be 200 or 429;
 * - team: Team syncs with `--clusters` (1,000) TenantClusters related, `--clients` (8) in parallel, `--requests`
 *   (20) each (429s retried after `Retry-After`), latency percentiles;
 * - throughput: 4 clients sending large pool syncs back to back for `--seconds` (10): answers per second;
 * - sizes (not run by default): one client syncing pools of 5,000 and 20,000 grants whose IPAllocations are what
 *   Metacontroller really sends (about 3.2 KB each: 16 MB and 64 MB requests), 5 times each, latency and resident
 *   memory. Run it with `--body-limit=` above 64 MiB, or the 20,000-grant pool is refused (413).
 *
 * Not part of the test suite: timings belong in recorded figures, never in assertions.
 */
import { poolSyncBody } from "../../bench/pool_data.ts";
import { teamSyncBody } from "../../bench/team_data.ts";

const args = Deno.args;
const flag = (name: string, fallback: string) => {
  const hit = args.find((a) => a.startsWith(`--${name}=`));
  return hit ? hit.slice(name.length + 3) : fallback;
};
const workers = flag("workers", "2");
const queue = flag("queue", "4");
const v8 = flag("v8-flags", "");
const scenarios = new Set(flag("scenarios", "burst,team,throughput").split(","));
const bodyLimit = flag("body-limit", "16777216");
const grants = Number(flag("grants", "5000"));
const burstSize = Number(flag("burst", "16"));
const teamClusters = Number(flag("clusters", "1000"));
const clients = Number(flag("clients", "8"));
const perClient = Number(flag("requests", "20"));
const seconds = Number(flag("seconds", "10"));
const jsonFile = args.find((a) => a.startsWith("--json="))?.slice(7);
/** The figures of every scenario run, for `--json`. */
const result: Record<string, unknown> = { workers: Number(workers), queue: Number(queue) };

const MAIN = new URL("../../main.ts", import.meta.url).pathname;
const child = new Deno.Command(Deno.execPath(), {
  args: ["run", "--allow-net", "--allow-env", "--allow-read", ...(v8 ? [`--v8-flags=${v8}`] : []), MAIN],
  env: {
    HOST: "127.0.0.1",
    PORT: "0",
    HOOK_WORKERS: workers,
    HOOK_QUEUE_LIMIT: queue,
    BODY_LIMIT_BYTES: bodyLimit,
    NO_COLOR: "1",
  },
  stdout: "piped",
  stderr: "inherit",
}).spawn();

const lines = child.stdout.pipeThrough(new TextDecoderStream()).getReader();
let port = 0;
let buffered = "";
while (!port) {
  const { value, done } = await lines.read();
  if (done) throw new Error("the service exited before listening");
  buffered += value;
  const m = /"port":(\d+)/.exec(buffered);
  if (m) port = Number(m[1]);
}
// Keep draining the log so the child never blocks on a full pipe.
(async () => {
  while (!(await lines.read()).done) { /* drain */ }
})();
const base = `http://127.0.0.1:${port}`;

function rssMiB(field: "VmRSS" | "VmHWM"): number {
  const status = Deno.readTextFileSync(`/proc/${child.pid}/status`);
  const kb = Number(new RegExp(`${field}:\\s+(\\d+)`).exec(status)?.[1] ?? 0);
  return Math.round(kb / 1024);
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length ? sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)]! : NaN;
}

const ms = (v: number) => `${v.toFixed(1)} ms`;

async function post(
  route: string,
  body: string,
): Promise<{ status: number; ms: number; retryAfter: number }> {
  const start = performance.now();
  const res = await fetch(`${base}${route}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
  });
  await res.arrayBuffer();
  return {
    status: res.status,
    ms: performance.now() - start,
    retryAfter: Number(res.headers.get("retry-after") ?? 0),
  };
}

/** Probes `/healthz` and `/readyz` every 25 ms from a separate process and samples RSS until stopped. */
function monitor() {
  const probe = new Deno.Command(Deno.execPath(), {
    args: ["run", "-A", new URL("./probe.ts", import.meta.url).pathname, base, String(child.pid)],
    stdin: "piped",
    stdout: "piped",
  }).spawn();
  return {
    async done(): Promise<{ probes: Record<string, number[]>; notReady: number; peak: number }> {
      await probe.stdin.close();
      const { stdout } = await probe.output();
      return JSON.parse(new TextDecoder().decode(stdout));
    },
  };
}

const pool = poolSyncBody(grants, 10);
const team = teamSyncBody(teamClusters);
console.log(`service: HOOK_WORKERS=${workers} HOOK_QUEUE_LIMIT=${queue}${v8 ? ` --v8-flags=${v8}` : ""}`);
console.log(`idle RSS ${rssMiB("VmRSS")} MiB; pool request ${(pool.length / 1e6).toFixed(1)} MB`);

// burst
if (scenarios.has("burst")) {
  const m = monitor();
  await new Promise((r) => setTimeout(r, 300)); // the prober is up
  const start = performance.now();
  const answers = await Promise.all(
    Array.from({ length: burstSize }, () => post("/hooks/networkpool/sync", pool)),
  );
  const wall = performance.now() - start;
  await new Promise((r) => setTimeout(r, 500));
  const { probes, notReady, peak } = await m.done();
  const statuses: Record<number, number> = {};
  for (const a of answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
  console.log(`\nburst: ${burstSize} concurrent pool syncs (${grants} grants), ${ms(wall)} wall`);
  console.log(`| answers | ${JSON.stringify(statuses)} |`);
  console.log(
    `| 200 latency p50 / max | ${
      ms(percentile(
        answers.filter((a) => a.status === 200).map((a) => a.ms),
        50,
      ))
    } / ${ms(Math.max(...answers.map((a) => a.ms)))} |`,
  );
  for (const [path, values] of Object.entries(probes)) {
    console.log(
      `| ${path} p50 / p99 / max (${values.length} probes) | ${ms(percentile(values, 50))} / ${
        ms(percentile(values, 99))
      } / ${ms(Math.max(...values))} |`,
    );
  }
  console.log(`| /readyz not ready | ${notReady} |`);
  console.log(`| peak RSS (sampled) / high-water mark | ${peak} MiB / ${rssMiB("VmHWM")} MiB |`);
  await new Promise((r) => setTimeout(r, 3000));
  console.log(`| RSS 3 s after the burst | ${rssMiB("VmRSS")} MiB |`);
  result.burst = {
    answers: statuses,
    // Answered 200 or 429, as the goal wants every answer.
    answered: answers.filter((a) => a.status === 200 || a.status === 429).length,
    healthzP99Ms: percentile(probes["/healthz"] ?? [], 99),
    readyzP99Ms: percentile(probes["/readyz"] ?? [], 99),
    notReady,
    peakRssMiB: peak,
  };
}

// team
if (scenarios.has("team")) {
  const latencies: number[] = [];
  let busy = 0;
  await Promise.all(Array.from({ length: clients }, async () => {
    for (let i = 0; i < perClient; i++) {
      for (;;) {
        const a = await post("/hooks/team/sync", team);
        if (a.status === 429) {
          busy++;
          await new Promise((r) => setTimeout(r, a.retryAfter * 1000));
          continue;
        }
        if (a.status !== 200) throw new Error(`team sync answered ${a.status}`);
        latencies.push(a.ms);
        break;
      }
    }
  }));
  console.log(`\nteam: ${teamClusters} TenantClusters, ${clients} clients x ${perClient} requests`);
  console.log(
    `| p50 / p99 / max | ${ms(percentile(latencies, 50))} / ${ms(percentile(latencies, 99))} / ${
      ms(Math.max(...latencies))
    } |`,
  );
  console.log(`| 429 answers (retried) | ${busy} |`);
  result.team = { p50Ms: percentile(latencies, 50), p99Ms: percentile(latencies, 99), busy };
}

// throughput
if (scenarios.has("throughput")) {
  let ok = 0;
  let busy = 0;
  const until = performance.now() + seconds * 1000;
  await Promise.all(Array.from({ length: 4 }, async () => {
    while (performance.now() < until) {
      const a = await post("/hooks/networkpool/sync", pool);
      if (a.status === 200) ok++;
      else if (a.status === 429) (busy++, await new Promise((r) => setTimeout(r, 100)));
      else throw new Error(`pool sync answered ${a.status}`);
    }
  }));
  console.log(`\nthroughput: 4 clients, large pool syncs for ${seconds} s`);
  console.log(`| answered 200 per second | ${(ok / seconds).toFixed(1)} |`);
  console.log(`| 429 answers | ${busy} |`);
  result.throughput = { perSecond: ok / seconds, busy };
  console.log(`| high-water mark over the whole run | ${rssMiB("VmHWM")} MiB |`);
}

// sizes
if (scenarios.has("sizes")) {
  console.log(
    `\nsizes: pools whose IPAllocations are as Metacontroller sends them, one client, 5 syncs each`,
  );
  console.log("| grants | request | answers | p50 / max | high-water mark |");
  console.log("|---|---|---|---|---|");
  const sizes: Record<string, unknown>[] = [];
  for (const grants of [5000, 20000]) {
    const body = poolSyncBody(grants, 10, "v2", "as-sent");
    const answers = [];
    for (let i = 0; i < 5; i++) answers.push(await post("/hooks/networkpool/sync", body));
    const statuses: Record<number, number> = {};
    for (const a of answers) statuses[a.status] = (statuses[a.status] ?? 0) + 1;
    const times = answers.map((a) => a.ms);
    console.log(
      `| ${grants} | ${(body.length / 1e6).toFixed(1)} MB | ${JSON.stringify(statuses)} | ${
        ms(percentile(times, 50))
      } / ${ms(Math.max(...times))} | ${rssMiB("VmHWM")} MiB |`,
    );
    sizes.push({ grants, bytes: body.length, answers: statuses, p50Ms: percentile(times, 50) });
  }
  result.sizes = sizes;
}

result.peakRssMiB = rssMiB("VmHWM");
if (jsonFile) Deno.writeTextFileSync(jsonFile, JSON.stringify(result, null, 2) + "\n");
child.kill("SIGTERM");
await child.status;
