/**
 * `npx -y deno@2.9.6 task load:pool [--runs=200] [--grants=5000,20000] [--json=FILE]`
 *
 * The latency distribution of NetworkPool syncs through the HTTP route (`app.request()`, as the bench), one
 * request at a time: `deno bench` prints the mean, min and p75 but no median, and this workload is
 * garbage-collection bound, so its mean sits well above its median. Prints min, p25, median, p75 and p99 for
 * pools of 5,000 and 20,000 grants, beside a bare `JSON.parse` + `JSON.stringify` of the same request and
 * response (`--json` writes them too). Not part of the test suite: timings belong in recorded figures, never in
 * assertions.
 */
import { HOOK_ROUTES } from "../../hooks/mod.ts";
import { poolSyncBody, postPoolSync } from "../../bench/pool_data.ts";
import { createTestApp } from "../../lib/testing/mod.ts";

const flag = (name: string) => Deno.args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);
const runs = Number(flag("runs") ?? 200);
const sizes = (flag("grants") ?? "5000,20000").split(",").map(Number);
const jsonFile = flag("json");
const results: { name: string; grants: number; minMs: number; medianMs: number; p99Ms: number }[] = [];
const { app } = createTestApp(HOOK_ROUTES);

const sync = (body: string) => postPoolSync(app, body);

async function measure(run: () => unknown): Promise<number[]> {
  const times: number[] = [];
  for (let i = 0; i < runs + 20; i++) {
    const t = performance.now();
    await run();
    if (i >= 20) times.push(performance.now() - t); // the first 20 warm the JIT up
  }
  return times.sort((a, b) => a - b);
}

const at = (s: number[], q: number) => s[Math.min(s.length - 1, Math.floor(s.length * q))]!.toFixed(1);
console.log(`| case (${runs} runs after 20 warm-up) | min | p25 | median | p75 | p99 |`);
console.log("|---|---|---|---|---|---|");
for (const grants of sizes) {
  const body = poolSyncBody(grants, 10);
  const response = JSON.parse(await sync(body));
  const cases: [string, () => unknown][] = [
    [
      `JSON.parse + JSON.stringify only, ${grants} grants`,
      () => JSON.stringify(JSON.parse(body) && response),
    ],
    [`NetworkPool sync over HTTP, ${grants} grants`, () => sync(body)],
  ];
  for (const [name, run] of cases) {
    const s = await measure(run);
    console.log(
      `| ${name} | ${s[0]!.toFixed(1)} ms | ${at(s, 0.25)} | ${at(s, 0.5)} | ${at(s, 0.75)} | ${
        at(s, 0.99)
      } |`,
    );
    results.push({ name, grants, minMs: s[0]!, medianMs: Number(at(s, 0.5)), p99Ms: Number(at(s, 0.99)) });
  }
}
if (jsonFile) Deno.writeTextFileSync(jsonFile, JSON.stringify({ runs, cases: results }, null, 2) + "\n");
