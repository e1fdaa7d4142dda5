/**
 * `deno task test:hostile [--json=FILE]`: the hostile-input tier (issue #46). Starts the test control plane (the
 * real API server tier's, built once from Go modules and cached), runs every `tests/hostile/*.hostile.ts` against
 * it, and writes what they measured as one JSON document (to FILE, and printed): the hook service fed a hostile
 * corpus at both listeners while a benign team's syncs and reviews run, and the reporter fed hostile tenants.
 * The exit code is the test run's.
 *
 * @module
 */
import { startControlPlane } from "../api/run.ts";
import { controlPlaneBinary } from "../api/tools.ts";
import { ROOT } from "../api/cluster.ts";

const jsonFlag = Deno.args.find((a) => a.startsWith("--json="))?.slice("--json=".length);
const plane = await controlPlaneBinary();
const cp = await startControlPlane(plane, { controllers: true });
const parts = await Deno.makeTempDir({ prefix: "butler-hostile-" });
const files = [...Deno.readDirSync(`${ROOT}/tests/hostile`)].map((e) => e.name).filter((n) =>
  n.endsWith(".hostile.ts")
)
  .sort().map((n) => `tests/hostile/${n}`);
const test = new Deno.Command(Deno.execPath(), {
  args: ["test", "--allow-all", ...Deno.args.filter((a) => !a.startsWith("--json=")), ...files],
  cwd: ROOT,
  env: { BUTLER_TEST_CLUSTER: cp.dir, DENO_CERT: `${cp.dir}/ca.crt`, HOSTILE_RESULTS: parts },
  stdout: "inherit",
  stderr: "inherit",
}).spawn();
const status = await test.status;
await cp.stop();
const report: Record<string, unknown> = {};
for (const e of [...Deno.readDirSync(parts)].sort((a, b) => a.name < b.name ? -1 : 1)) {
  report[e.name.replace(/\.json$/, "")] = JSON.parse(Deno.readTextFileSync(`${parts}/${e.name}`));
}
const text = JSON.stringify(report, null, 2);
console.log(`hostile tier results:\n${text}`);
if (jsonFlag) Deno.writeTextFileSync(jsonFlag, `${text}\n`);
if (status.success) await Deno.remove(cp.dir, { recursive: true });
else console.log(`control plane state and log kept in ${cp.dir}`);
Deno.exit(status.code);
