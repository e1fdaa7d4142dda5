/**
 * What judging objects as the API server does costs `plan`: the 2,600-object corpus of tests/schema/corpus.ts
 * (goal: under 5 s) and the seeds' examples alone, to set against a plan of them (tests/plan/plan_bench.ts;
 * goal: the plan within 1.5 times its time without the judge). Figures in docs/performance.md.
 */
import { readInstall } from "../lib/plan/mod.ts";
import { crdKinds, judge, type ManifestObject } from "../lib/schema/mod.ts";
import { corpus } from "../tests/schema/corpus.ts";
import { APPLIED_TOGETHER, examples } from "../tests/plan/helpers.ts";
import { RUNS, SMOKE } from "./smoke.ts";

const ROOT = new URL("../", import.meta.url).pathname;
const kinds = crdKinds(readInstall(ROOT));
const all = corpus(ROOT);
const cases = SMOKE ? all.slice(0, 50) : all;
const seeds = examples(...APPLIED_TOGETHER).map((s) => s.object as unknown as ManifestObject)
  .filter((o) => kinds.has(`${o.apiVersion}/${o.kind}`));

Deno.bench({
  name: `judge: the corpus (${cases.length} objects)`,
  group: "schema",
  n: 5,
  warmup: 1,
  ...RUNS,
  fn() {
    for (const c of cases) judge(kinds, c.object);
  },
});

Deno.bench({
  name: `judge: the seeds' examples (${seeds.length} Butler objects)`,
  group: "schema",
  n: 20,
  warmup: 2,
  ...RUNS,
  fn() {
    for (const o of seeds) if (!judge(kinds, o).ok) throw new Error("an example is refused");
  },
});
