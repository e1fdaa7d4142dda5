/**
 * `deno task test:sim`: the deterministic simulation tier. Runs seeds in workers, each a generated list of
 * operations through the simulated API server and Metacontroller and the real hooks and webhooks, with faults and
 * the invariants checked after every operation (docs/simulation.md).
 *
 *   npx -y deno@2.9.6 task test:sim [--seed=1] [--ops=100000] [--per-seed=2000] [--workers=2] [--json=FILE]
 *                                   [--shrink-runs=300] [--failures=DIR]
 *   npx -y deno@2.9.6 task test:sim --replay=FILE
 *
 * A failing seed is shrunk to the shortest trace that breaks the same invariant, written to
 * `DIR/sim-failure-<seed>.json` (operations, violation, digest) and replayed once more to show it gives the same
 * bytes. `--replay` runs such a file and fails unless its digest and violation come back identical. Ends with
 * `ok | N passed | N failed` (N seeds).
 *
 * @module
 */
import process from "node:process";
import { parseArgs } from "node:util";
import { shrink } from "./shrink.ts";
import { generateOps, type Op, OP_KINDS, type SimResult, simulate } from "./simulate.ts";

const { values } = parseArgs({
  args: Deno.args,
  options: {
    seed: { type: "string", default: "1" },
    ops: { type: "string", default: "100000" },
    "per-seed": { type: "string", default: "2000" },
    workers: { type: "string", default: "2" },
    json: { type: "string" },
    "shrink-runs": { type: "string", default: "300" },
    failures: { type: "string", default: "." },
    replay: { type: "string" },
  },
});

/** A failure file: enough to replay the run and to check it replays byte-identically. */
interface FailureFile {
  readonly seed: number;
  readonly violation: SimResult["violation"];
  readonly digest: string;
  readonly ops: readonly Op[];
  /** The operations by name, for people. */
  readonly trace: readonly string[];
}

/** CPU time of this process, every worker thread included (what /proc/self/stat counts), in seconds. */
function cpuSeconds(): number {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
}

async function replay(file: string): Promise<void> {
  const recorded = JSON.parse(Deno.readTextFileSync(file)) as FailureFile;
  // What each operation did, for people: short traces are what shrinking leaves.
  const again = await simulate(recorded.ops, { log: (line) => console.log(line.slice(0, 400)) });
  const same = again.digest === recorded.digest &&
    JSON.stringify(again.violation) === JSON.stringify(recorded.violation);
  console.log(JSON.stringify({ file, seed: recorded.seed, ...again }, null, 2));
  console.log(
    same
      ? "replayed byte-identically"
      : `!! the replay differs: digest ${again.digest}, recorded ${recorded.digest}`,
  );
  console.log(`${same ? "ok" : "FAILED"} | ${same ? 1 : 0} passed | ${same ? 0 : 1} failed`);
  if (!same) Deno.exit(1);
}

async function report(seed: number, perSeed: number, result: SimResult): Promise<string> {
  const shrunk = await shrink(generateOps(seed, perSeed), Number(values["shrink-runs"]));
  const again = await simulate(shrunk.ops);
  const file: FailureFile = {
    seed,
    violation: shrunk.result.violation,
    digest: shrunk.result.digest,
    ops: shrunk.ops,
    trace: shrunk.ops.map(([k, a, b]) => `${OP_KINDS[k]![0]} ${a} ${b}`),
  };
  const path = `${values.failures}/sim-failure-${seed}.json`;
  Deno.writeTextFileSync(path, JSON.stringify(file) + "\n");
  const identical = again.digest === shrunk.result.digest;
  return [
    `!! seed ${seed}: ${result.violation!.invariant} after operation ${result.violation!.step}: ${
      result.violation!.message
    }`,
    `   shrunk from ${result.ops} to ${shrunk.ops.length} operations in ${shrunk.runs} runs; written to ${path}`,
    `   replay: ${
      identical ? "byte-identical" : "DIFFERENT"
    } (digest ${again.digest}); deno task test:sim --replay=${path}`,
  ].join("\n");
}

async function main(): Promise<void> {
  if (values.replay) return replay(values.replay);
  const first = Number(values.seed);
  const perSeed = Number(values["per-seed"]);
  const seeds = Math.max(1, Math.ceil(Number(values.ops) / perSeed));
  const workers = Math.max(1, Math.min(Number(values.workers), seeds));
  const started = performance.now();
  const cpuBefore = cpuSeconds();
  const results = new Map<number, SimResult>();
  let next = 0;
  await Promise.all(Array.from({ length: workers }, () =>
    new Promise<void>((resolve, reject) => {
      const worker = new Worker(new URL("./worker.ts", import.meta.url).href, { type: "module" });
      const feed = () => {
        if (next >= seeds) {
          worker.postMessage(null);
          resolve();
          return;
        }
        worker.postMessage({ seed: first + next++, ops: perSeed });
      };
      worker.onmessage = (e: MessageEvent<{ seed: number; result: SimResult }>) => {
        results.set(e.data.seed, e.data.result);
        const r = e.data.result;
        const done = results.size;
        if (r.violation || done % 25 === 0 || done === seeds) {
          const ops = [...results.values()].reduce((s, x) => s + x.ops, 0);
          console.log(
            `seed ${e.data.seed}: ${
              r.violation ? `VIOLATION ${r.violation.invariant}` : "ok"
            } (${done}/${seeds} seeds, ${ops} operations, ${
              Math.round(ops / ((performance.now() - started) / 1000))
            }/s)`,
          );
        }
        feed();
      };
      worker.onerror = (e) => reject(e.error ?? new Error(e.message));
      feed();
    })));
  const seconds = (performance.now() - started) / 1000;
  const all = [...results.entries()].sort(([a], [b]) => a - b);
  const sum = (f: (r: SimResult) => number) => all.reduce((s, [, r]) => s + f(r), 0);
  const faults: Record<string, number> = {};
  for (const [, r] of all) for (const [k, n] of Object.entries(r.faults)) faults[k] = (faults[k] ?? 0) + n;
  const failing = all.filter(([, r]) => r.violation);
  const summary = {
    seeds: { first, count: seeds, perSeed },
    operations: sum((r) => r.ops),
    quietSteps: sum((r) => r.quietSteps),
    syncs: sum((r) => r.syncs),
    hookCalls: sum((r) => r.hookCalls),
    admitted: sum((r) => r.admitted),
    refused: sum((r) => r.refused),
    faults: Object.fromEntries(Object.entries(faults).sort()),
    faultsTotal: Object.values(faults).reduce((s, n) => s + n, 0),
    violations: failing.map(([seed, r]) => ({ seed, ...r.violation! })),
    seconds: Math.round(seconds * 10) / 10,
    operationsPerSecond: Math.round(sum((r) => r.ops) / seconds),
    cpuSeconds: Math.round((cpuSeconds() - cpuBefore) * 10) / 10,
    workers,
  };
  console.log(JSON.stringify(summary, null, 2));
  if (values.json) Deno.writeTextFileSync(values.json, JSON.stringify(summary, null, 2) + "\n");
  for (const [seed, r] of failing.slice(0, 3)) console.log(await report(seed, perSeed, r));
  const failed = failing.length;
  console.log(`${failed ? "FAILED" : "ok"} | ${seeds - failed} passed | ${failed} failed`);
  if (failed) Deno.exit(1);
}

await main();
