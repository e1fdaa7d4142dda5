import assert from "node:assert/strict";
import {
  DICTIONARY_MEMBERS,
  JSON_TOKEN_COST,
  jsonHeapEstimate,
  jsonParseCost,
  MAX_JSON_DEPTH,
  scanJson,
} from "./json_cost.ts";
import { SHAPES } from "./json_cost_measure.ts";
import { createHeapBudget, isHeapRefusal, JSON_WORST_PER_BYTE } from "./heap_budget.ts";

const encode = (s: string) => new TextEncoder().encode(s);

Deno.test("the parse estimate is an upper bound of the heap V8 takes, for every shape measured", async (t) => {
  // A process per shape: nothing else in the heap measured. Two at a time (the machine's cores).
  const names = Object.keys(SHAPES);
  const results: Record<string, { bytes: number; heap: number; estimate: number }> = {};
  for (let i = 0; i < names.length; i += 2) {
    await Promise.all(
      names.slice(i, i + 2).map(async (name) => {
        const out = await new Deno.Command(Deno.execPath(), {
          args: [
            "run",
            "--v8-flags=--expose-gc",
            new URL("./json_cost_measure.ts", import.meta.url).pathname,
            name,
          ],
          stdout: "piped",
          stderr: "inherit",
        }).output();
        assert.ok(out.success, name);
        results[name] = JSON.parse(new TextDecoder().decode(out.stdout));
      }),
    );
  }
  for (const name of names) {
    await t.step(name, () => {
      const r = results[name]!;
      assert.ok(r.estimate >= r.heap, `${name}: estimated ${r.estimate}, took ${r.heap}`);
      assert.ok(r.estimate <= JSON_WORST_PER_BYTE * r.bytes, `${name}: over the worst per byte`);
    });
  }
  await t.step(
    "for Kubernetes objects it stays within 5x what is taken (not so loose it refuses real syncs)",
    () => {
      const r = results["Kubernetes objects"]!;
      assert.ok(r.estimate <= 5 * r.heap, `estimated ${r.estimate}, took ${r.heap}`);
    },
  );
});

Deno.test("the estimate's scan", async (t) => {
  await t.step("stops as soon as the budget is passed", () => {
    assert.equal(jsonHeapEstimate(encode(`[${"{},".repeat(1000)}{}]`), 1000), Infinity);
  });
  await t.step("tells keys from values, and counts a key met before once", () => {
    const once = jsonHeapEstimate(encode('[{"name":"a"}]'), Infinity);
    const twice = jsonHeapEstimate(encode('[{"name":"a"},{"name":"a"}]'), Infinity);
    const other = jsonHeapEstimate(encode('[{"name":"a"},{"other":"a"}]'), Infinity);
    assert.ok(twice - once < once, "the second object's key was met before: it costs less than the first");
    assert.ok(other > twice, "a new key costs more than one met before");
  });
  await t.step(
    "a key that may be an array index is charged its elements store, written plain or escaped",
    () => {
      for (const key of ["1000", "4294967294", "\\u0031000", "0"]) {
        const named = jsonHeapEstimate(encode(`{"${"a".repeat(key.length)}":0}`), Infinity);
        const cost = jsonHeapEstimate(encode(`{"${key}":0}`), Infinity);
        assert.ok(cost >= named + JSON_TOKEN_COST.element, `${key}: ${cost}`);
      }
    },
  );
  await t.step("every member of an object of 128 members or more is charged its dictionary entry", () => {
    const object = (n: number) =>
      encode(`{${Array.from({ length: n }, (_, i) => `"k${i.toString(36).padStart(2, "0")}":0`)}}`);
    const step = (n: number) =>
      jsonHeapEstimate(object(n), Infinity) - jsonHeapEstimate(object(n - 1), Infinity);
    const fast = step(DICTIONARY_MEMBERS - 1);
    assert.equal(step(DICTIONARY_MEMBERS), fast + DICTIONARY_MEMBERS * JSON_TOKEN_COST.dictionaryMember);
    assert.equal(step(DICTIONARY_MEMBERS + 1), fast + JSON_TOKEN_COST.dictionaryMember);
  });
  await t.step("escaped quotes do not end a string", () => {
    // The same length, one escape each: one string, whatever the escape is; only \u past Latin-1 is wide.
    const newline = jsonHeapEstimate(encode('["abc\\nefgh"]'), Infinity);
    assert.equal(jsonHeapEstimate(encode('["abc\\"efgh"]'), Infinity), newline);
    assert.equal(newline, jsonHeapEstimate(encode('["abcxxefgh"]'), Infinity));
    assert.ok(
      jsonHeapEstimate(encode('["a\\u20acefgh"]'), Infinity) >
        jsonHeapEstimate(encode('["a\\u00e9efgh"]'), Infinity),
    );
  });
  await t.step("nesting to Go's limit is scanned; past it the scan stops at once", () => {
    const at = (depth: number) => encode("[".repeat(depth) + "]".repeat(depth));
    assert.equal(jsonHeapEstimate(at(MAX_JSON_DEPTH), Infinity), MAX_JSON_DEPTH * 80);
    assert.equal(jsonHeapEstimate(at(MAX_JSON_DEPTH + 1), Infinity), Infinity);
    assert.equal(scanJson(at(1_000_000), Infinity).tooDeep, true);
  });
  await t.step("the parse's peak counts its text, two bytes a character when a string may be wide", () => {
    const ascii = encode('["abc"]');
    const wide = encode('["ab\\u20ac"]');
    assert.equal(jsonParseCost(ascii, Infinity), jsonHeapEstimate(ascii, Infinity) + ascii.length);
    assert.equal(jsonParseCost(wide, Infinity), jsonHeapEstimate(wide, Infinity) + 2 * wide.length);
  });
});

Deno.test("the heap budget", async (t) => {
  await t.step(
    "a small body is charged the most its bytes could cost, unscanned, and given it back once",
    () => {
      const budget = createHeapBudget({ share: 1, heapLimit: () => 1 << 30, heapUsed: () => 0 });
      const body = encode('{"a":1}');
      const charge = budget.charge(body);
      assert.ok(!isHeapRefusal(charge));
      assert.equal(charge.bytes, (JSON_WORST_PER_BYTE + 2) * body.length);
      assert.equal(budget.charged, charge.bytes);
      charge.release();
      charge.release();
      assert.equal(budget.charged, 0, "released once");
    },
  );
  await t.step("requests in flight are held to maxInFlight, whatever the heap has room for", () => {
    const budget = createHeapBudget({
      share: 1,
      maxInFlight: 1000,
      heapLimit: () => 1 << 30,
      heapUsed: () => 0,
    });
    const small = budget.charge(encode("[1,2,3,4,5,6,7,8,9,10]"));
    assert.ok(!isHeapRefusal(small));
    const big = budget.charge(encode(`[${"1,".repeat(100)}1]`));
    assert.ok(isHeapRefusal(big) && big.never, "over the bound alone: never");
  });
  await t.step("too deep is refused as such", () => {
    const budget = createHeapBudget({ share: 1, heapLimit: () => 1 << 20, heapUsed: () => 0 });
    const refusal = budget.charge(encode("[".repeat(20_000) + "]".repeat(20_000)));
    assert.ok(isHeapRefusal(refusal) && refusal.tooDeep && refusal.never);
  });
  await t.step("charges add up: past the share, the next is refused until one is given back", () => {
    const budget = createHeapBudget({ share: 0.5, heapLimit: () => 4000, heapUsed: () => 0 });
    const body = encode("[1,2,3]"); // 7 bytes: 630 charged, unscanned
    const a = budget.charge(body);
    assert.ok(!isHeapRefusal(a));
    const charges = [a];
    for (let i = 0; i < 20; i++) {
      const c = budget.charge(body);
      if (isHeapRefusal(c)) {
        assert.equal(c.never, false);
        break;
      }
      charges.push(c);
    }
    assert.ok(budget.charged <= 2000);
    for (const c of charges) if (!isHeapRefusal(c)) c.release();
    assert.equal(budget.charged, 0);
  });
});

Deno.test("the largest pool syncs the manifests serve fit their worker's budget", async () => {
  const { poolSyncBody } = await import("../../bench/pool_data.ts");
  // 5,000 grants with their IPAllocations as Metacontroller sends them: the base's 16 MiB body limit.
  const body = encode(poolSyncBody(5000, 10, "v2", "as-sent"));
  const perByte = jsonParseCost(body, Infinity) / body.length;
  const MIB = 1024 * 1024;
  const held = 40 * MIB; // a worker's own heap, measured at 20-30 MiB
  assert.ok(perByte * 16 * MIB <= 0.75 * 160 * MIB - held, `base: ${perByte.toFixed(2)} per byte`);
  // examples/kustomize/large-pools: an 80 MiB body limit (20,000 grants are 64 MB), isolates of 512 MiB.
  assert.ok(perByte * 80 * MIB <= 0.75 * 512 * MIB - held, `large pools: ${perByte.toFixed(2)} per byte`);
});
