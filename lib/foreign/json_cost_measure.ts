/**
 * Measures what `JSON.parse` takes of the heap for one shape of JSON, beside what {@linkcode jsonHeapEstimate}
 * charges it: `deno run --v8-flags=--expose-gc lib/foreign/json_cost_measure.ts SHAPE` prints one JSON line. A
 * process per shape, so that nothing else lives in the heap measured (`json_cost_test.ts` runs them).
 *
 * @module
 */
import { jsonHeapEstimate } from "./json_cost.ts";

const SIZE = 2 * 1024 * 1024;

function repeated(unit: string, open = "[", close = "]"): string {
  return open + Array(Math.floor(SIZE / (unit.length + 1))).fill(unit).join(",") + close;
}
function unique(make: (i: number) => string, open = "[", close = "]"): string {
  const parts: string[] = [];
  for (let i = 0, size = 2; size < SIZE; i++) {
    const part = make(i);
    parts.push(part);
    size += part.length + 1;
  }
  return open + parts.join(",") + close;
}

/** A deterministic shuffle (a linear congruential generator seeded per shape): the same bytes every run. */
function shuffled<T>(items: readonly T[], next: () => number): T[] {
  const a = [...items];
  for (let i = a.length - 1; i > 0; i--) {
    const j = next() % (i + 1);
    [a[i], a[j]] = [a[j]!, a[i]!];
  }
  return a;
}

/**
 * Objects of `keys` keys drawn from `alphabet`, each in an order of its own, with values from `values`: every
 * object builds hidden classes of its own (issue #55: V8 kept 2.1 to 2.55 times what was charged before the
 * transition charge).
 */
function varyingOrders(alphabet: number, keys: number, values: readonly string[]): string {
  let seed = 1;
  const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff);
  const names = Array.from({ length: alphabet }, (_, i) => i.toString(36));
  return unique(() =>
    `{${
      shuffled(names, next).slice(0, keys).map((k) => `"${k}":${values[next() % values.length]}`).join(",")
    }}`
  );
}

/**
 * Objects of 1 to `most` members whose keys are array indexes drawn at random up to the largest (2^32 - 2), with
 * values from `values`: V8 keeps them in elements, sparse ones in number dictionaries.
 */
function indexKeys(most: number, values: readonly string[]): string {
  let seed = 7;
  const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff);
  const index = () => String(((next() * 2 + (next() & 1)) >>> 0) % 4294967295);
  return unique(() =>
    `{${Array.from({ length: 1 + next() % most }, () => `"${index()}":${values[next() % values.length]}`)}}`
  );
}

/** Objects of `fewest` to `most` members from one set of keys: V8 keeps 128 or more in a dictionary. */
function manyMembers(fewest: number, most: number): string {
  let seed = 11;
  const next = () => (seed = (Math.imul(seed, 1103515245) + 12345) & 0x7fffffff);
  const names = Array.from({ length: most }, (_, i) => `${i.toString(36)}k`);
  return unique(() => `{${names.slice(0, fewest + next() % (most - fewest + 1)).map((k) => `"${k}":0`)}}`);
}

/** A Kubernetes object as Metacontroller sends one, told apart by `i`. */
function kubeObject(i: number): string {
  return JSON.stringify({
    apiVersion: "butler.butlerlabs.dev/v1alpha1",
    kind: "IPAllocation",
    metadata: {
      name: `tc-${i}-lb`,
      namespace: `team-${i % 50}`,
      uid: `11111111-2222-4333-8444-${String(i).padStart(12, "0")}`,
      resourceVersion: String(100000 + i),
      labels: { "butler.butlerlabs.dev/network-pool": "big", "butler.butlerlabs.dev/tenant": `tc-${i}` },
      annotations: { "butler.butlerlabs.dev/owner": `user${i % 20}@example.com` },
    },
    spec: { poolRef: { name: "big", namespace: "butler-system" }, type: "loadbalancer", count: 8 },
    status: { phase: "Allocated", cidr: `10.${i % 250}.0.0/29`, allocatedCount: 8, addresses: ["10.0.0.1"] },
  });
}

/** The shapes measured: the costliest per byte there are, and what Metacontroller and the API server send. */
export const SHAPES: Record<string, () => string> = {
  "empty objects": () => repeated("{}"),
  "empty arrays": () => repeated("[]"),
  "nested arrays": () => repeated("[".repeat(5000) + "]".repeat(5000)),
  "nested objects": () => repeated('{"a":'.repeat(2000) + "0" + "}".repeat(2000)),
  "objects of one unique key": () => unique((i) => `{"${i.toString(36)}":0}`),
  "one object of unique keys": () => unique((i) => `"${i.toString(36)}":{}`, "{", "}"),
  "numbers": () => repeated("0.5"),
  "empty strings": () => repeated('""'),
  "a long string": () => `["${"a".repeat(SIZE)}"]`,
  "a long string with one wide character": () => `["${"a".repeat(SIZE)}€"]`,
  "short strings with a wide escape": () => repeated('"a\\u20ac"'),
  "objects whose keys come in varying orders": () => varyingOrders(512, 64, ["0"]),
  "objects of few keys in varying orders": () => varyingOrders(128, 32, ["0"]),
  "objects whose keys and value types vary": () =>
    varyingOrders(128, 32, ["0", '""', "{}", "[]", "0.5", "true", "null", '"x"']),
  "objects of one sparse index key": () => repeated('{"1000":0}'),
  "objects of one sparse index key and a number": () => repeated('{"1000":0.5}'),
  "objects of the largest index key": () => repeated('{"4294967294":0}'),
  "objects of holey index keys": () => repeated('{"0":0,"1000000":0}'),
  "objects of keys past the largest index, or not canonical": () =>
    repeated('{"4294967295":0,"-1":0,"01":0}'),
  "objects of random index keys": () => indexKeys(6, ["0", "0.5", "{}"]),
  "objects of 1,500 keys": () => manyMembers(1500, 1500),
  "objects of 172 keys (a dictionary at its emptiest)": () => manyMembers(172, 172),
  "objects of 128 to 1,400 keys": () => manyMembers(128, 1400),
  "Kubernetes objects": () => `[${Array.from({ length: SIZE / 700 }, (_, i) => kubeObject(i)).join(",")}]`,
};

if (import.meta.main) {
  const text = SHAPES[Deno.args[0]!]!();
  const bytes = new TextEncoder().encode(text); // and the text is flat before the parse, as a request's is
  const gc = (globalThis as unknown as { gc(): void }).gc;
  // The estimate runs after the measure: V8 installs the code it compiles for a long scan when it is done, kilobytes
  // of heap that would land in the parse's (more than a long string's margin). A pause lets the text's own settle.
  await new Promise((resolve) => setTimeout(resolve, 100));
  gc();
  gc();
  const before = Deno.memoryUsage().heapUsed;
  const value = JSON.parse(text);
  gc();
  gc();
  const heap = Deno.memoryUsage().heapUsed - before;
  const estimate = jsonHeapEstimate(bytes, Infinity);
  console.log(JSON.stringify({ bytes: bytes.length, heap, estimate, kept: typeof value }));
}
