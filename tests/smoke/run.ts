/**
 * `deno task test:smoke [--only=bench,load,load:admission,...]` (`--only`: exact names; `bench` is every benchmark)
 *
 * Every benchmark and every load task, run once in a smoke mode: small sizes, seconds each, so that none of them
 * breaks unnoticed between the runs that record their figures (docs/performance.md). A run fails when its command
 * fails or writes no result (a benchmark without an `ok` result, a load task's JSON missing a figure); never on
 * timing.
 *
 * - benchmarks: every `*_bench.ts` of the repository in one `deno bench --json`, with `BENCH_SMOKE=1`
 *   (bench/smoke.ts: small data, one measured iteration);
 * - load tasks: every `load` and `load:*` task of deno.json with the small flags of {@linkcode LOAD_SMOKE} and
 *   `--json`; a load task without an entry there fails, so a new one cannot be left out. `load:admission` and
 *   `load:reporter` start the test control plane (tests/api, built on first use).
 *
 * Each run's output goes to a log, printed only when it fails. Ends with `ok | N passed | N failed`.
 *
 * @module
 */
import { relative } from "node:path";
import { benchProblems, missingFigures } from "./results.ts";
import { LOAD_SMOKE } from "./recipes.ts";

const ROOT = new URL("../../", import.meta.url).pathname;
const only = Deno.args.find((a) => a.startsWith("--only="))?.slice(7).split(",");
const selected = (name: string) => !only || only.includes(name);

interface Outcome {
  readonly name: string;
  readonly problems: readonly string[];
  /** How long its own run took; undefined for a file of the one `deno bench` run. */
  readonly seconds?: number;
  readonly log: string;
}

/** Runs `args` with Deno, its output to a log file, stopped after `timeout` seconds. */
async function run(
  args: readonly string[],
  timeout: number,
  env: Record<string, string> = {},
): Promise<{ code: number; stdout: string; log: string; timedOut: boolean }> {
  const log = await Deno.makeTempFile({ prefix: "butler-smoke-", suffix: ".log" });
  const file = await Deno.open(log, { write: true });
  const child = new Deno.Command(Deno.execPath(), {
    args: [...args],
    cwd: ROOT,
    env: { NO_COLOR: "1", ...env },
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    child.kill("SIGTERM");
  }, timeout * 1000);
  const stdout: Uint8Array[] = [];
  const [status] = await Promise.all([
    child.status,
    child.stdout.pipeTo(
      new WritableStream({
        write: async (chunk) => {
          stdout.push(chunk);
          await file.write(chunk);
        },
      }),
    ),
    child.stderr.pipeTo(new WritableStream({ write: async (chunk) => void await file.write(chunk) })),
  ]);
  clearTimeout(timer);
  file.close();
  const text = new TextDecoder().decode(
    stdout.reduce((all, c) => {
      const joined = new Uint8Array(all.length + c.length);
      joined.set(all);
      joined.set(c, all.length);
      return joined;
    }, new Uint8Array()),
  );
  return { code: status.code, stdout: text, log, timedOut };
}

/** Every `*_bench.ts` under the repository (bench/, tests/), as file URLs, sorted. */
function benchFiles(): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const e of Deno.readDirSync(dir)) {
      if (e.name.startsWith(".") || e.name === "node_modules") continue;
      const path = `${dir}/${e.name}`;
      if (e.isDirectory) walk(path);
      else if (/_bench\.ts$/.test(e.name)) found.push(new URL(`file://${path}`).href);
    }
  };
  for (const dir of ["bench", "tests", "lib", "hooks", "cli", "tools"]) {
    try {
      walk(`${ROOT}${dir}`);
    } catch { /* no such folder */ }
  }
  return found.sort();
}

async function benches(): Promise<Outcome[]> {
  const files = benchFiles();
  const started = performance.now();
  const paths = files.map((f) => relative(ROOT, new URL(f).pathname));
  const r = await run(["bench", "--allow-read", "--allow-env", "--json", ...paths], 600, {
    BENCH_SMOKE: "1",
  });
  const seconds = (performance.now() - started) / 1000;
  let report: unknown;
  try {
    report = JSON.parse(r.stdout);
  } catch { /* no report: every file is a problem */ }
  const problems = benchProblems(report, files);
  console.log(`deno bench (BENCH_SMOKE=1): ${files.length} files in ${seconds.toFixed(1)} s`);
  const outcomes: Outcome[] = paths.map((path, i) => ({
    name: `bench ${path}`,
    problems: problems.get(files[i]!) ?? [],
    log: r.log,
  }));
  // A run that failed though every benchmark has a result (a crash at exit): the failure is the run's own.
  if (r.code !== 0 && !problems.size) {
    outcomes.push({
      name: "deno bench",
      problems: [`exited ${r.code}${r.timedOut ? " (timed out)" : ""}`],
      seconds,
      log: r.log,
    });
  }
  return outcomes;
}

async function loadTask(name: string): Promise<Outcome> {
  const smoke = LOAD_SMOKE[name];
  if (!smoke) {
    return {
      name: `task ${name}`,
      problems: ["no smoke run defined for it in tests/smoke/run.ts (LOAD_SMOKE)"],
      seconds: 0,
      log: "",
    };
  }
  const json = await Deno.makeTempFile({ prefix: "butler-smoke-", suffix: ".json" });
  await Deno.remove(json);
  const started = performance.now();
  const r = await run(["task", name, ...smoke.args, `--json=${json}`], smoke.timeout);
  const seconds = (performance.now() - started) / 1000;
  let text: string | undefined;
  try {
    text = Deno.readTextFileSync(json);
    Deno.removeSync(json);
  } catch { /* none written */ }
  const problems = [
    ...(r.code !== 0 ? [`exited ${r.code}${r.timedOut ? ` (stopped after ${smoke.timeout} s)` : ""}`] : []),
    ...missingFigures(text, smoke.figures),
  ];
  return { name: `task ${name} ${smoke.args.join(" ")}`, problems, seconds, log: r.log };
}

function tail(log: string, lines = 40): string {
  try {
    return Deno.readTextFileSync(log).trimEnd().split("\n").slice(-lines).join("\n");
  } catch {
    return "";
  }
}

const tasks = Object.keys(
  (JSON.parse(Deno.readTextFileSync(`${ROOT}deno.json`)) as { tasks: Record<string, string> }).tasks,
).filter((t) => t === "load" || t.startsWith("load:"));
const outcomes: Outcome[] = [];
const report = (o: Outcome) => {
  outcomes.push(o);
  const took = o.seconds === undefined ? "" : ` (${o.seconds.toFixed(1)} s)`;
  if (o.problems.length) {
    console.log(`FAILED ${o.name}${took}\n  ${o.problems.join("\n  ")}`);
    if (o.log) console.log(`--- the last lines of its output (${o.log}):\n${tail(o.log)}\n---`);
  } else console.log(`ok ${o.name}${took}`);
};
if (selected("bench")) { for (const o of await benches()) report(o); }
for (const t of tasks.filter(selected)) report(await loadTask(t));
for (const o of outcomes) if (!o.problems.length && o.log) await Deno.remove(o.log).catch(() => {});
const failed = outcomes.filter((o) => o.problems.length).length;
console.log(`${failed ? "FAILED" : "ok"} | ${outcomes.length - failed} passed | ${failed} failed`);
Deno.exit(failed ? 1 : 0);
