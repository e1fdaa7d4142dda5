/**
 * The costliest JSON shapes a free-form place can hold, each built to about a given number of bytes of JSON text:
 * what costs a parser, a projection's skipper or V8's heap the most per byte sent. Measured against V8 in
 * `lib/foreign/json_cost_measure.ts`: empty objects take about 88 bytes of heap per byte, objects whose keys come
 * in varying orders make a hidden class each, deep nesting tries the recursion of every reader, one long or wide
 * (two-byte, non-Latin-1) string tries what counts bytes against characters, many keys make dictionaries.
 *
 * @module
 */

/** JSON text to put in a value as it is: a shape too deep for `JSON.stringify`'s recursion. */
export class RawJson {
  constructor(readonly text: string) {}
}

/**
 * `JSON.stringify` of a value whose members may be {@linkcode RawJson}, each written as its text.
 *
 * @example
 * ```ts
 * toJson({ a: new RawJson("[[]]") }); // '{"a":[[]]}'
 * ```
 */
export function toJson(value: unknown): string {
  const raws: string[] = [];
  const text = JSON.stringify(
    value,
    (_k, v) => v instanceof RawJson ? `\u0000raw${raws.push(v.text) - 1}` : v,
  );
  return text.replace(/"\\u0000raw(\d+)"/g, (_, i) => raws[Number(i)]!);
}

/** The shapes of a free-form JSON value. */
export const VALUE_SHAPES = ["empties", "keyOrders", "deep", "longString", "wideString", "manyKeys"] as const;
export type ValueShape = typeof VALUE_SHAPES[number];

/** The shapes of a map of strings (annotations, a Secret's data): values that are strings only. */
export const STRING_MAP_SHAPES = ["longString", "wideString", "manyKeys"] as const;
export type StringMapShape = typeof STRING_MAP_SHAPES[number];

/** A character that takes three bytes in UTF-8 and makes V8 keep the string two bytes a character. */
export const WIDE = "\u8a9e";

const KEYS = ["a", "b", "c", "d", "e", "f"];

/** The `i`th of the 720 orders of six keys (the factorial number system). */
function order(i: number): string[] {
  const pool = [...KEYS];
  const out: string[] = [];
  for (let base = KEYS.length; base > 0; base--) {
    out.push(pool.splice(i % base, 1)[0]!);
    i = Math.floor(i / base);
  }
  return out;
}

/** Objects nested `depth` deep: `{"a":{"a":…{}…}}`. */
export function nested(depth: number): RawJson {
  return new RawJson(`${'{"a":'.repeat(depth - 1)}{}${"}".repeat(depth - 1)}`);
}

/**
 * A JSON value of the given shape, about `bytes` bytes as JSON (for `deep`: a level per 140 bytes, at most
 * `maxDepth`, so that the object bound asks for the API server's depth and a smaller size for less).
 *
 * @example
 * ```ts
 * JSON.stringify(valueShape("empties", 9)); // "[{},{},{}]"
 * ```
 */
export function valueShape(shape: ValueShape, bytes: number, maxDepth = 9_990): unknown {
  switch (shape) {
    case "empties":
      return Array.from({ length: Math.max(1, Math.floor(bytes / 3)) }, () => ({}));
    case "keyOrders":
      return Array.from(
        { length: Math.max(1, Math.floor(bytes / 38)) },
        (_, i) => Object.fromEntries(order(i % 720).map((k) => [k, 0])),
      );
    case "deep":
      // The API server reads JSON up to 10,000 levels deep (Go's encoding/json); the place itself is a few.
      return nested(Math.min(maxDepth, Math.max(1, Math.floor(bytes / 140))));
    case "longString":
      return "x".repeat(bytes);
    case "wideString":
      return WIDE.repeat(Math.floor(bytes / 3));
    case "manyKeys":
      return Object.fromEntries(
        Array.from({ length: Math.max(1, Math.floor(bytes / 12)) }, (_, i) => [`k${i}`, 0]),
      );
  }
}

/**
 * A map of strings of the given shape, about `bytes` bytes of keys and values (what the API server counts against
 * the 256 KiB of a kind's annotations): one long ASCII value, one long wide value, or many short keys.
 */
export function stringMapShape(shape: StringMapShape, bytes: number, key = "hostile.example.com/pad"): Record<
  string,
  string
> {
  switch (shape) {
    case "longString":
      return { [key]: "x".repeat(Math.max(0, bytes - key.length)) };
    case "wideString":
      return { [key]: WIDE.repeat(Math.max(0, Math.floor((bytes - key.length) / 3))) };
    case "manyKeys": {
      const out: Record<string, string> = {};
      for (let i = 0, used = 0; used + `k${i}`.length <= bytes; used += `k${i}`.length, i++) {
        out[`k${i}`] = "";
      }
      return out;
    }
  }
}

/** Many labels of the shortest form (`k<i>: v`), about `bytes` bytes as JSON. */
export function manyLabels(bytes: number): Record<string, string> {
  return Object.fromEntries(
    Array.from({ length: Math.max(1, Math.floor(bytes / 14)) }, (_, i) => [`k${i}`, "v"]),
  );
}

/** Many finalizers (`f.example.com/<i>`), about `bytes` bytes as JSON. */
export function manyFinalizers(bytes: number): string[] {
  return Array.from({ length: Math.max(1, Math.floor(bytes / 22)) }, (_, i) => `f.example.com/${i}`);
}
