import assert from "node:assert/strict";
import { decodeGoString, goStringLiterals } from "./go_literals.ts";

Deno.test("Go string literals are read from a test table as Go decodes them", () => {
  const src = [
    "package x",
    "func TestA(t *testing.T) {",
    '  good := []string{"a", `b\\n`, "c\\td", "\\u00e9", "\\x41", "\\101"} // "not-in-a-comment"',
    '  bad := []string{"}", \'r\'} /* "nor-here" */',
    "}",
    'func TestB() { _ = "other" }',
  ].join("\n");
  assert.deepEqual(goStringLiterals(src, ["TestA"]), ["a", "b\\n", "c\td", "é", "A", "}"]);
  assert.deepEqual(goStringLiterals(src), ["a", "b\\n", "c\td", "é", "A", "}", "other"]);
  assert.equal(decodeGoString("\\xff"), undefined, "not UTF-8: JSON cannot carry it");
});
