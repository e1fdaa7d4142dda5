/**
 * Class: YAML whose aliases and merge keys make decoding unbounded or wrong. Random graphs of anchors (maps that
 * merge earlier anchors, alias them as values, reuse an anchor's name, name themselves or a later anchor) are
 * decoded against a model of go-yaml's semantics: a document whose expansion is larger than the run's budget is
 * refused, one well under it decodes to the model's value, none throws, and the work done (the budget's counter)
 * never passes the bound, over one document or many.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import { DecodeBudget } from "./decode.ts";
import { readStream } from "./documents.ts";

/** One anchored map: the anchor name it takes, the names it merges (`<<`), and its own keys (scalar or alias). */
interface AnchorSpec {
  readonly name: string;
  readonly merges: readonly string[];
  readonly own: readonly { key: string; alias?: string; value: string }[];
}

const NAMES = ["a", "b", "c", "d", "e"];
const anchorName = fc.constantFrom(...NAMES);
const spec = fc.record({
  name: anchorName,
  merges: fc.array(anchorName, { maxLength: 10 }),
  own: fc.array(
    fc.record({
      // No scalar YAML 1.1 reads as a boolean (`y`, `n`): the model is about anchors, not scalars (resolve_test.ts).
      key: fc.constantFrom("k", "l", "m", "p"),
      alias: fc.option(anchorName, { nil: undefined }),
      value: fc.constantFrom("x", "w", "z"),
    }),
    { maxLength: 3 },
  ),
});

function yamlOf(specs: readonly AnchorSpec[]): string {
  return specs.map((s, i) => {
    const merge = s.merges.length === 1
      ? [`<<: *${s.merges[0]}`]
      : s.merges.length
      ? [`<<: [${s.merges.map((m) => `*${m}`).join(", ")}]`]
      : [];
    const own = s.own.map((o) => `${o.key}: ${o.alias ? `*${o.alias}` : o.value}`);
    return `m${i}: &${s.name} {${[...merge, ...own].join(", ")}}\n`;
  }).join("");
}

type Model = { value: Record<string, unknown>; work: number } | "error";

/**
 * The model: an alias in the content of anchor `i` refers to the latest anchor of its name at or before `i` (at
 * `i`: the map contains itself, an error; none: an unknown anchor, an error). A merge list's first map wins, own
 * keys win over merged ones. `work` counts map entries and merges visited, each expansion again.
 */
function model(specs: readonly AnchorSpec[]): Model {
  const memo = new Map<number, Model>();
  const latest = (i: number, name: string) => {
    for (let k = i; k >= 0; k--) if (specs[k]!.name === name) return k;
    return -1;
  };
  const expand = (i: number): Model => {
    if (memo.has(i)) return memo.get(i)!;
    const s = specs[i]!;
    let work = 1;
    const merged: Record<string, unknown> = {};
    const refs = (name: string) => {
      const k = latest(i, name);
      return k < 0 || k === i ? "error" : expand(k);
    };
    for (const name of [...s.merges].reverse()) {
      const m = refs(name);
      if (m === "error") return memo.set(i, "error"), "error";
      work += 1 + m.work;
      Object.assign(merged, m.value);
    }
    for (const o of s.own) {
      const v = o.alias ? refs(o.alias) : { value: o.value, work: 1 };
      if (v === "error") return memo.set(i, "error"), "error";
      work += 1 + v.work;
      merged[o.key] = v.value;
    }
    const out = { value: merged, work };
    memo.set(i, out);
    return out;
  };
  const value: Record<string, unknown> = {};
  let work = 0;
  for (let i = 0; i < specs.length; i++) {
    const m = expand(i);
    if (m === "error") return "error";
    value[`m${i}`] = m.value;
    work += m.work;
  }
  return { value, work };
}

const LIMIT = 20_000;

Deno.test("aliases and merge keys: bounded work, the model's value, no exception", () => {
  fc.assert(
    fc.property(
      fc.array(spec, { minLength: 1, maxLength: 12 }),
      fc.integer({ min: 1, max: 4 }),
      (specs, copies) => {
        const text = Array.from({ length: copies }, () => yamlOf(specs)).join("---\n");
        const budget = new DecodeBudget(LIMIT);
        const docs = readStream(text, budget);
        const expected = model(specs);
        assert.ok(budget.nodes <= LIMIT + 1, `work ${budget.nodes} over the bound`);
        assert.equal(docs.length, copies);
        docs.forEach((d, n) => {
          if (expected === "error") {
            assert.ok(d.error, `document ${n + 1} must be refused`);
            return;
          }
          // The run's budget is shared: the documents before this one spent their part of it.
          const spentBefore = expected.work * n;
          if (spentBefore + expected.work * 4 < LIMIT) {
            assert.deepEqual(d.value, expected.value, d.error?.message);
          }
          if (expected.work > LIMIT) {
            assert.ok(d.error, `document ${n + 1} (work ${expected.work}) must be refused`);
          }
        });
      },
    ),
    { numRuns: 400, seed: 57 },
  );
});

Deno.test("an anchor reused after its aliases: each alias is the anchor before it", () => {
  const [doc] = readStream("a: &x {v: 1}\nb: *x\nc: &x {v: 2}\nd: *x\ne: {<<: *x}\n");
  assert.deepEqual(doc!.value, { a: { v: 1 }, b: { v: 1 }, c: { v: 2 }, d: { v: 2 }, e: { v: 2 } });
});

Deno.test("a map that merges itself, or nests past the stack, is its document's error alone", () => {
  const deep = `${"[".repeat(20_000)}${"]".repeat(20_000)}`;
  const docs = readStream(`z: &a {k: v, <<: *a}\n---\nx: ${deep}\n---\nkind: ok\n`);
  assert.match(docs[0]!.error?.message ?? "", /anchor 'a' value contains itself/);
  assert.ok(docs[1]!.error);
  assert.deepEqual(docs[2]!.value, { kind: "ok" });
});
