import assert from "node:assert/strict";
import { readStream } from "./mod.ts";

const values = (text: string) =>
  readStream(text).map((d) => d.error ? `error at line ${d.error.line}` : d.value);

Deno.test("a stream read as kubectl reads it", async (t) => {
  await t.step("YAML 1.1 scalars as go-yaml v2 resolves them", () => {
    assert.deepEqual(
      values(
        "a: yes\nb: Off\nc: y\nd: ~\ne: 0x1F\nf: 017\ng: 0o17\nh: 0b101\ni: 1_000\nj: 1e3\nk: .5\nl: 2001-12-14\nm: '1'\nnn: 12:30:45\n",
      ),
      [{
        a: true,
        b: false,
        c: true,
        d: null,
        e: 31,
        f: 15,
        g: 15,
        h: 5,
        i: 1000,
        j: 1000,
        k: 0.5,
        l: "2001-12-14",
        m: "1",
        nn: "12:30:45",
      }],
    );
  });
  await t.step("repeated keys keep the last; merge keys write in document order; keys become strings", () => {
    assert.deepEqual(values("a: 1\na: 2\n"), [{ a: 2 }]);
    assert.deepEqual(values("b: &b { x: 1, z: 1 }\nm: { x: 0, <<: *b, z: 2 }\n"), [{
      b: { x: 1, z: 1 },
      m: { x: 1, z: 2 },
    }]);
    assert.deepEqual(values("m: { <<: [{ x: 1 }, { x: 2, w: 2 }] }\n"), [{ m: { x: 1, w: 2 } }]);
    assert.deepEqual(values("yes: a\n1.5: b\n0x10: c\n"), [{ true: "a", "1.5": "b", "16": "c" }]);
  });
  await t.step("what JSON cannot hold is an error of its document only", () => {
    assert.deepEqual(values("a: .nan\n---\nb: 1\n---\n~: x\n"), [
      "error at line 1",
      { b: 1 },
      "error at line 5",
    ]);
  });
  await t.step("separators as apimachinery splits them, and JSON streams", () => {
    assert.deepEqual(values("# only a comment\n---\na: 1\n--- # c\nb: 2\n--- x\nc: 3\n"), [
      { a: 1 },
      { b: 2 },
      "error at line 6",
      { c: 3 },
    ]);
    assert.deepEqual(values('{"a": 1}\n{"a": 2, "a": 3}\n'), [{ a: 1 }, { a: 3 }]);
    assert.deepEqual(values("{a: 1}\n"), ["error at line 1"], "not JSON: as kubectl before 1.33 reads it");
  });
});
