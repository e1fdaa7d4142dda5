/**
 * Every Argo CD health script runs in gopher-lua with the libraries Argo CD gives custom scripts (base, package and
 * table: no string library), against the cases of its `health_test.yaml` in Argo CD's own layout, and against the
 * status every golden fixture of its kind writes: each must give a valid health status with a message.
 */
import assert from "node:assert/strict";
import { parse } from "yaml";
import { discoverGoldenCases, runCommand } from "../../lib/testing/mod.ts";
import { ROOT } from "./cluster.ts";
import { luaHealthBinary } from "./tools.ts";

const DIR = `${ROOT}/manifests/argocd/resource_customizations/butler.butlerlabs.dev`;
const VALID = ["Healthy", "Progressing", "Degraded", "Suspended", "Missing", "Unknown"];

async function health(
  bin: string,
  kind: string,
  obj: unknown,
): Promise<{ status: string; message?: string }> {
  const out = await runCommand(bin, [`${DIR}/${kind}/health.lua`], { stdin: JSON.stringify(obj) });
  assert.equal(out.code, 0, `${kind}/health.lua failed: ${out.stderr}`);
  return JSON.parse(out.stdout);
}

const kinds = [...Deno.readDirSync(DIR)].filter((e) => e.isDirectory).map((e) => e.name).sort();

Deno.test("Argo CD health scripts give the health their tests expect", async (t) => {
  const bin = await luaHealthBinary();
  for (const kind of kinds) {
    const { tests } = parse(Deno.readTextFileSync(`${DIR}/${kind}/health_test.yaml`)) as {
      tests: { healthStatus: { status: string; message: string }; inputPath: string }[];
    };
    for (const c of tests) {
      await t.step(`${kind}: ${c.inputPath} is ${c.healthStatus.status}`, async () => {
        const obj = parse(Deno.readTextFileSync(`${DIR}/${kind}/${c.inputPath}`));
        assert.deepEqual(await health(bin, kind, obj), c.healthStatus);
      });
    }
  }
});

Deno.test("every status a hook writes gives a valid health with a message", async (t) => {
  const bin = await luaHealthBinary();
  const cases = discoverGoldenCases(`${ROOT}/tests/fixtures`).filter((c) =>
    c.hook !== "customize" && c.hook !== "admission"
  );
  let checked = 0;
  for (const c of cases) {
    const res = JSON.parse(Deno.readTextFileSync(`${c.dir}/response.json`));
    const req = JSON.parse(Deno.readTextFileSync(`${c.dir}/request.json`));
    const parent = req.parent ?? req.object;
    if (!res.status || !kinds.includes(parent.kind)) continue;
    await t.step(c.dir.replace(`${ROOT}/tests/fixtures/`, ""), async () => {
      const got = await health(bin, parent.kind, { ...parent, status: res.status });
      assert.ok(VALID.includes(got.status), JSON.stringify(got));
      assert.ok(got.message, JSON.stringify(got));
    });
    checked++;
  }
  assert.ok(checked >= 60, `${checked} statuses checked`);
});
