/**
 * `npx -y deno@2.9.6 task load:pool [--runs=200]`
 *
 * The latency distribution of NetworkPool syncs through the HTTP route (`app.request()`, as the bench), one
 * request at a time: `deno bench` prints the mean, min and p75 but no median, and this workload is
 * garbage-collection bound, so its mean sits well above its median. Prints min, p25, median, p75 and p99 for
 * pools of 5,000 and 20,000 grants, beside a bare `JSON.parse` + `JSON.stringify` of the same request and
 * response. Not part of the test suite: timings belong in recorded figures, never in assertions.
 */
import { HOOK_ROUTES } from "../../hooks/mod.ts";
import { poolSyncBody, postPoolSync } from "../../bench/pool_data.ts";
import { createTestApp } from "../../lib/testing/mod.ts";

const runs = Number(Deno.args.find((a) => a.startsWith("--runs="))?.slice(7) ?? 200);
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
for (const grants of [5000, 20000]) {
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
  }
}
