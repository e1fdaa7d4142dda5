import assert from "node:assert/strict";
import fc from "fast-check";
import { scanJson } from "./json_cost.ts";
import { jsonKeyHash, MAX_PROBES } from "./json_tables.ts";
import { JSON_WORST_PER_BYTE } from "./heap_budget.ts";

const encode = (s: string) => new TextEncoder().encode(s);

/**
 * `count` keys of `length` bytes whose hashes fall in the first `slots` slots of a table of `2^bits` (or, in a
 * larger table, in as few runs): found by brute force with the scan's own hash, as anyone can.
 */
function collidingKeys(count: number, slots: number, bits: number, prefix: string): string[] {
  const mask = (1 << bits) - 1;
  const keys: string[] = [];
  const bytes = new Uint8Array(16);
  for (let i = 0; keys.length < count; i++) {
    const key = prefix + i.toString(36);
    for (let j = 0; j < key.length; j++) bytes[j] = key.charCodeAt(j);
    if ((jsonKeyHash(bytes, 0, key.length) & mask) < slots) keys.push(key);
  }
  return keys;
}

/** A deterministic generator (the same bodies every run). */
function lcg(seed: number): (n: number) => number {
  return (n) => (seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff) % n;
}

/** The bodies an attacker holding `keys` can send: each a way to make one key's run long and use it often. */
function attacks(keys: readonly string[]): Record<string, unknown> {
  const next = lcg(keys.length);
  const last = keys[keys.length - 1]!;
  const all = Object.fromEntries(keys.map((k) => [k, 0]));
  return {
    "all the keys, then the last one again and again": [all, ...Array(4000).fill({ [last]: 0 })],
    "one key an object, then each again": [...keys, ...keys].map((k) => ({ [k]: 0 })),
    "objects of eight keys in orders of their own": Array.from(
      { length: 3000 },
      () => Object.fromEntries(Array.from({ length: 8 }, () => [keys[next(keys.length)]!, 0])),
    ),
    "nested: each key an object inside the last": keys.reduceRight<unknown>(
      (inner, k) => ({ [k]: inner }),
      0,
    ),
  };
}

/** Members of every object of a value, as the scan meets them. */
function members(value: unknown): number {
  if (Array.isArray(value)) return value.reduce((n: number, v) => n + members(v), 0);
  if (value === null || typeof value !== "object") return 0;
  return Object.values(value).reduce((n: number, v) => n + 1 + members(v), 0);
}

/**
 * The bound the scan holds whatever the keys: each member looks up one key and one hidden class, and places each
 * at most twice more over the tables' doublings, each of it within {@linkcode MAX_PROBES} slots.
 */
function assertLinear(value: unknown, label: string): ReturnType<typeof scanJson> {
  const bytes = encode(JSON.stringify(value));
  const scan = scanJson(bytes, Infinity);
  const bound = 6 * MAX_PROBES * members(value);
  assert.ok(scan.longestProbe <= MAX_PROBES, `${label}: one lookup visited ${scan.longestProbe} slots`);
  assert.ok(
    scan.probes <= bound,
    `${label}: ${scan.probes} slots visited for ${members(value)} members (${
      (scan.probes / members(value)).toFixed(1)
    } a member, the bound ${6 * MAX_PROBES})`,
  );
  return scan;
}

/** The same value with every key renamed to one of the same length that nobody chose (a benign body's twin). */
function renamed(value: unknown, names: Map<string, string>): unknown {
  if (Array.isArray(value)) return value.map((v) => renamed(v, names));
  if (value === null || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => {
      let name = names.get(k);
      if (name === undefined) {
        name = `r${names.size.toString(36)}`.padEnd(k.length, "_").slice(0, Math.max(k.length, 1));
        names.set(k, name);
      }
      return [name, renamed(v, names)];
    }),
  );
}

Deno.test("the scan's tables do bounded work per key, whatever keys a body chooses", async (t) => {
  // Hashes into k slots of tables of several sizes: one slot of 1,024, four of 4,096, sixteen of 16,384, and a
  // wider band of 64 of 4,096 (the reported attack put 60,000 keys in 4,096 slots of 131,072).
  for (const [slots, bits] of [[1, 10], [4, 12], [16, 14], [64, 12]] as const) {
    const keys = collidingKeys(1500, slots, bits, "k");
    for (const [label, body] of Object.entries(attacks(keys))) {
      await t.step(`${slots} of 2^${bits} slots: ${label}`, () => {
        const scan = assertLinear(body, label);
        // Forgetting a key charges more, never less: the body costs at least what its twin with keys nobody
        // chose costs, whose tables forget nothing.
        const twin = scanJson(encode(JSON.stringify(renamed(body, new Map()))), Infinity);
        assert.ok(twin.longestProbe < MAX_PROBES, "the twin's keys are benign");
        assert.ok(scan.cost >= twin.cost, `${label}: charged ${scan.cost}, its benign twin ${twin.cost}`);
      });
    }
  }
});

Deno.test("any body, of any keys, is scanned in linear work and charged at most the worst per byte", () => {
  const hostile = collidingKeys(300, 1, 10, "h");
  const key = fc.oneof(
    fc.constantFrom(...hostile),
    fc.constantFrom("0", "1", "1000", "4294967294", "4294967295", "01", "-1", "\\u0031"),
    fc.string({ maxLength: 6 }),
  );
  const { value } = fc.letrec<{ value: unknown }>((tie) => ({
    value: fc.oneof(
      { depthSize: "small", withCrossShrink: true },
      fc.constantFrom(0, 0.5, "", "x", true, null, {}, []),
      fc.array(tie("value"), { maxLength: 40 }),
      fc.dictionary(key, tie("value"), { maxKeys: 160 }),
    ),
  }));
  fc.assert(
    fc.property(value, (v) => {
      const bytes = encode(JSON.stringify(v));
      const scan = assertLinear(v, "generated");
      assert.ok(scan.cost <= JSON_WORST_PER_BYTE * bytes.length, "over the worst per byte");
    }),
    { numRuns: 300, seed: 55 },
  );
});
