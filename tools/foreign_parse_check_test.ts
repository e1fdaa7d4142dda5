import assert from "node:assert/strict";
import { ALLOWED, forbiddenParses, parsesIn } from "./foreign_parse_check.ts";

Deno.test("the foreign parse check finds every form of parse, and only parses", async (t) => {
  await t.step("JSON.parse, .json(), and the yaml parsers a file imports, wherever they are called", () => {
    const source = [
      'import { parse as y, stringify } from "yaml";',
      'import * as YAML from "yaml";',
      "const a = JSON.parse(text);",
      "const b = await res.json();",
      "const c = y(text);",
      "const d = YAML.parseAllDocuments(text);",
      "const e = stringify(a); // JSON.parse( in a comment",
      "/* JSON.parse(x) */ const f = Date.parse(s) + schema.parse(v);",
    ].join("\n");
    assert.deepEqual(parsesIn("lib/x.ts", source).map((p) => `${p.line} ${p.text}`), [
      "3 JSON.parse(",
      "4 .json()",
      "5 y(",
      "6 YAML.parseAllDocuments(",
    ]);
  });
  await t.step(
    "a parse outside lib/foreign and the list fails; tests and test helpers are not product code",
    () => {
      const files = new Map([
        ["lib/kube/new_reader.ts", "export const read = (t: string) => JSON.parse(t);"],
        ["lib/kube/new_reader_test.ts", "JSON.parse(t);"],
        ["lib/testing/golden.ts", "JSON.parse(t);"],
      ]);
      assert.deepEqual(forbiddenParses(files, []).map((p) => p.file), ["lib/kube/new_reader.ts"]);
    },
  );
  await t.step("a listed file may hold its count and no more; a count it no longer holds fails too", () => {
    const allowed = [{ file: "plan.ts", count: 1, why: "test" }];
    assert.deepEqual(forbiddenParses(new Map([["plan.ts", "JSON.parse(a);"]]), allowed), []);
    assert.equal(forbiddenParses(new Map([["plan.ts", "JSON.parse(a); JSON.parse(b);"]]), allowed).length, 1);
    assert.equal(forbiddenParses(new Map([["plan.ts", "const a = 1;"]]), allowed).length, 1);
  });
  await t.step("every allowed file says why", () => {
    for (const a of ALLOWED) assert.ok(a.why.length > 20, a.file);
  });
});
