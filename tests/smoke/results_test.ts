import assert from "node:assert/strict";
import { benchProblems, missingFigures } from "./results.ts";
import { LOAD_SMOKE } from "./recipes.ts";

Deno.test("benchProblems", async (t) => {
  const a = "file:///r/bench/a_bench.ts";
  const b = "file:///r/bench/b_bench.ts";
  const ok = { origin: a, name: "fast", results: [{ ok: { n: 1, avg: 10 } }] };

  await t.step("every file with a result for each benchmark: no problem", () => {
    assert.deepEqual(benchProblems({ benches: [ok] }, [a]), new Map());
  });
  await t.step("a file that registered no benchmark is a problem", () => {
    assert.deepEqual(benchProblems({ benches: [ok] }, [a, b]), new Map([[b, ["no benchmark ran"]]]));
  });
  await t.step("a benchmark that failed, or gave no result, is named", () => {
    const failed = { origin: a, name: "broken", results: [{ failed: "Error: boom" }] };
    const empty = { origin: a, name: "empty", results: [] };
    const problems = benchProblems({ benches: [ok, failed, empty] }, [a]).get(a)!;
    assert.equal(problems.length, 2);
    assert.match(problems[0]!, /^broken: .*boom/);
    assert.match(problems[1]!, /^empty: \[\]/);
  });
  await t.step("no report at all: every file is a problem", () => {
    assert.deepEqual([...benchProblems(null, [a]).keys()], [a]);
    assert.deepEqual([...benchProblems({}, [a]).keys()], [a]);
  });
});

Deno.test("missingFigures", async (t) => {
  await t.step("every path a finite number: nothing missing", () => {
    assert.deepEqual(missingFigures('{"a":{"b":1.5},"c":0}', ["a.b", "c"]), []);
  });
  await t.step("no file, or not JSON", () => {
    assert.deepEqual(missingFigures(undefined, ["a"]), ["no result written"]);
    assert.match(missingFigures("{", ["a"])[0]!, /^the result is not JSON/);
  });
  await t.step("a figure missing, null (NaN written), or not a number", () => {
    assert.deepEqual(
      missingFigures('{"a":{"b":null},"d":"7","e":{}}', ["a.b", "c.x", "d", "e"]),
      ["a.b: null", "c.x: missing", 'd: "7"', "e: {}"],
    );
  });
});

Deno.test("every load task of deno.json has a smoke run, and every smoke run a task", () => {
  const tasks = Object.keys(
    (JSON.parse(Deno.readTextFileSync(new URL("../../deno.json", import.meta.url))) as {
      tasks: Record<string, string>;
    }).tasks,
  ).filter((t) => t === "load" || t.startsWith("load:")).sort();
  assert.deepEqual(Object.keys(LOAD_SMOKE).sort(), tasks);
  for (const [task, smoke] of Object.entries(LOAD_SMOKE)) {
    assert.ok(smoke.figures.length > 0, `${task}: no figure checked`);
    assert.ok(!smoke.args.some((a) => a.startsWith("--json")), `${task}: the runner adds --json`);
  }
});
