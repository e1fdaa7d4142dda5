import assert from "node:assert/strict";
import fc from "fast-check";
import {
  bounded,
  each,
  ForeignRefused,
  members,
  parseForeign,
  project,
  projectForeign,
  type Projection,
  WHOLE,
} from "./mod.ts";
import { createHeapBudget } from "./heap_budget.ts";

const encode = (s: string) => new TextEncoder().encode(s);
const roomy = () => createHeapBudget({ share: 1, heapLimit: () => 1 << 30, heapUsed: () => 0 });

/** The projection applied to a parsed value: what `project` must give without parsing what it skips. */
function reference(value: unknown, p: Projection): unknown {
  if (p.kind === "object" && value !== null && typeof value === "object" && !Array.isArray(value)) {
    const out: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) {
      const wanted = Object.hasOwn(p.fields ?? {}, k) ? p.fields![k] : p.other?.(k);
      if (!wanted) continue;
      const kept = reference(v, wanted);
      if (kept !== undefined) {
        Object.defineProperty(out, k, { value: kept, enumerable: true, writable: true });
      }
    }
    return out;
  }
  if (p.kind === "array" && Array.isArray(value)) {
    return value.slice(0, p.maxItems ?? Infinity).map((v) => reference(v, p.items));
  }
  if (p.kind === "whole" && p.maxBytes !== undefined && JSON.stringify(value).length > p.maxBytes) {
    return p.over;
  }
  return value;
}

const projection: fc.Arbitrary<Projection> = fc.letrec((tie) => ({
  p: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constant(WHOLE),
    fc.record({
      fields: fc.dictionary(fc.constantFrom("a", "b", "c", "__proto__", "é", 'q"'), tie("p")),
      prefix: fc.option(fc.constantFrom("a", "x", ""), { nil: undefined }),
    }).map(({ fields, prefix }) =>
      members(
        fields as Record<string, Projection>,
        prefix === undefined ? undefined : (k) => {
          return k.startsWith(prefix) ? WHOLE : undefined;
        },
      )
    ),
    fc.tuple(tie("p"), fc.option(fc.nat(3), { nil: undefined })).map(([items, max]) =>
      each(items as Projection, max)
    ),
  ),
})).p;

const keys = fc.constantFrom("a", "b", "c", "ab", "x1", "__proto__", "é", 'q"', "a\\b", "");

Deno.test("a projection keeps exactly what the same projection of the parsed value keeps", () => {
  fc.assert(
    fc.property(fc.jsonValue({ maxDepth: 4 }), projection, fc.boolean(), (value, p, spaced) => {
      // Keys the projections name, at every level.
      const text = JSON.stringify(value, null, spaced ? 2 : undefined);
      const got = projectForeign(encode(text), p, roomy());
      assert.deepEqual(got, reference(JSON.parse(text), p));
    }),
    { numRuns: 400 },
  );
  fc.assert(
    fc.property(fc.dictionary(keys, fc.jsonValue({ maxDepth: 3 })), projection, (value, p) => {
      const text = JSON.stringify(value);
      assert.deepEqual(projectForeign(encode(text), p, roomy()), reference(JSON.parse(text), p));
    }),
    { numRuns: 400 },
  );
});

Deno.test("what a projection skips is never parsed, nor charged", async (t) => {
  // 8 MiB of empty objects in a member nobody reads: 700 MiB of heap if parsed.
  const hostile = `{"metadata":{"name":"a"},"spec":{"values":[${"{},".repeat(2_800_000)}{}]}}`;
  const small = createHeapBudget({
    share: 1,
    maxInFlight: 64 * 1024,
    heapLimit: () => 1 << 30,
    heapUsed: () => 0,
  });
  await t.step("kept: the name", () => {
    assert.deepEqual(projectForeign(encode(hostile), members({ metadata: WHOLE }), small), {
      metadata: { name: "a" },
    });
    assert.equal(small.charged, 0, "every charge given back");
  });
  await t.step("the whole document is refused by the same budget, before it is parsed", () => {
    assert.throws(() => parseForeign(encode(hostile), small), ForeignRefused);
  });
  await t.step("a kept member over the budget is refused", () => {
    assert.throws(() => projectForeign(encode(hostile), members({ spec: WHOLE }), small), ForeignRefused);
    assert.equal(small.charged, 0);
  });
});

Deno.test("projection details", async (t) => {
  const parse = (bytes: Uint8Array) => (from: number, to: number) =>
    JSON.parse(new TextDecoder().decode(bytes.subarray(from, to)));
  await t.step("strings with escaped quotes and backslashes are skipped whole", () => {
    const bytes = encode(String.raw`{"s":"a\"}\\","t":"\\\"","u":1}`);
    assert.deepEqual(project(bytes, members({ u: WHOLE }), parse(bytes)), { u: 1 });
  });
  await t.step("an escaped key is read as JSON reads it", () => {
    const bytes = encode(String.raw`{"n\u0061me":"x"}`);
    assert.deepEqual(project(bytes, members({ name: WHOLE }), parse(bytes)), { name: "x" });
  });
  await t.step("__proto__ is an own member, never the prototype", () => {
    const bytes = encode('{"__proto__":{"polluted":true}}');
    const got = project(bytes, members(Object.fromEntries([["__proto__", WHOLE]])), parse(bytes)) as object;
    assert.equal(Object.getPrototypeOf(got), Object.prototype);
    assert.deepEqual(Object.getOwnPropertyDescriptor(got, "__proto__")?.value, { polluted: true });
  });
  await t.step("a value over its bound is replaced", () => {
    const bytes = encode(`{"a":"${"x".repeat(100)}","b":"ok"}`);
    assert.deepEqual(
      project(bytes, members({ a: bounded(10, "(long)"), b: bounded(10) }), parse(bytes)),
      { a: "(long)", b: "ok" },
    );
  });
  await t.step("malformed JSON along the path is a SyntaxError", () => {
    for (const text of ['{"a":', '{"a" 1}', '{"a":1', "[1,]x", '{"a":"unterminated}']) {
      const bytes = encode(text);
      assert.throws(() => project(bytes, members({ a: WHOLE, b: WHOLE }), parse(bytes)), SyntaxError, text);
    }
  });
});

Deno.test("what a projection builds is charged too: an item kept as an empty object costs its object (issue #55)", async (t) => {
  // A tenant's list page of 2 MiB of `{}`: no member of an item is kept, but each item is: 700,000 objects, about
  // 47 MiB of heap, that no parse was charged for. An 8 MiB page of them ended the reporter at its 96 MiB heap.
  const page = encode(`{"items":[${"{},".repeat(700_000)}{}]}`);
  const service = members({ items: each(members({ metadata: members({ name: WHOLE }) })) });
  const budget = (maxInFlight: number) =>
    createHeapBudget({ share: 1, maxInFlight, heapLimit: () => 1 << 30, heapUsed: () => 0 });
  await t.step("refused by a budget smaller than what it builds", () => {
    const small = budget(8 * 1024 * 1024);
    assert.throws(() => projectForeign(page, service, small), ForeignRefused);
    assert.equal(small.charged, 0, "every charge given back");
  });
  await t.step("built within a budget that holds it, every charge given back", () => {
    const large = budget(256 * 1024 * 1024);
    assert.equal((projectForeign(page, service, large) as { items: unknown[] }).items.length, 700_001);
    assert.equal(large.charged, 0);
  });
});
