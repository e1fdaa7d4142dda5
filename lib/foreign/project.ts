/**
 * Reading only what is wanted of a JSON document. A cache that keeps three fields of an object must not build the
 * whole object to find them: a team's free-form values (`{},{},…` under `spec.addons[].values`) cost 88 bytes of
 * heap per byte once parsed, and a list page of them ends the process. A {@linkcode Projection} names the members
 * wanted; everything else is skipped over in the bytes, unparsed and unallocated, and each member kept is parsed on
 * its own, after its cost was charged (`json_cost.ts`). What a projection keeps costs what it keeps, whatever the
 * rest of the document holds.
 *
 * @module
 */
import {
  BACKSLASH,
  CLOSE_ARRAY,
  CLOSE_OBJECT,
  COLON,
  COMMA,
  OPEN_ARRAY,
  OPEN_OBJECT,
  QUOTE,
} from "./json_bytes.ts";

/** What to keep of a JSON value: the whole of it, some members of an object, or some of each item of an array. */
export type Projection = WholeValue | ObjectMembers | ArrayItems;

/** The value as `JSON.parse` makes it; past `maxBytes` of JSON text, `over` instead (or dropped, when unset). */
export interface WholeValue {
  readonly kind: "whole";
  readonly maxBytes?: number;
  readonly over?: unknown;
}

/**
 * Some members of an object: those `fields` names, and those `other` gives a projection for. Not an object: the
 * value is kept whole (its cost charged), so that a reader sees the same malformed value it would have parsed.
 */
export interface ObjectMembers {
  readonly kind: "object";
  readonly fields?: Readonly<Record<string, Projection>>;
  readonly other?: (key: string) => Projection | undefined;
}

/** Each item of an array, projected; at most `maxItems` of them (the rest dropped). Not an array: kept whole. */
export interface ArrayItems {
  readonly kind: "array";
  readonly items: Projection;
  readonly maxItems?: number;
}

/** The whole value. */
export const WHOLE: WholeValue = Object.freeze({ kind: "whole" });

/**
 * The whole value when its JSON text is at most `maxBytes`, else `over`.
 *
 * @example
 * ```ts
 * const owner = bounded(1024, "(over 1024 bytes)");
 * ```
 */
export function bounded(maxBytes: number, over?: unknown): WholeValue {
  return over === undefined ? { kind: "whole", maxBytes } : { kind: "whole", maxBytes, over };
}

/**
 * These members of an object (each with its projection), and those `other` gives one for.
 *
 * @example
 * ```ts
 * const meta = members({ name: WHOLE, namespace: WHOLE }, (key) => key.startsWith("butler.") ? WHOLE : undefined);
 * ```
 */
export function members(
  fields: Readonly<Record<string, Projection>>,
  other?: (key: string) => Projection | undefined,
): ObjectMembers {
  return other ? { kind: "object", fields, other } : { kind: "object", fields };
}

/** Each item of an array, projected; at most `maxItems`. */
export function each(items: Projection, maxItems?: number): ArrayItems {
  return maxItems === undefined ? { kind: "array", items } : { kind: "array", items, maxItems };
}

/**
 * A projection that keeps what either keeps: members of both, items of both, the whole value where either wants it.
 *
 * @example
 * ```ts
 * merge(members({ metadata: members({ name: WHOLE }) }), members({ metadata: members({ uid: WHOLE }) }));
 * // members({ metadata: members({ name: WHOLE, uid: WHOLE }) })
 * ```
 */
export function merge(a: Projection, b: Projection): Projection {
  if (a.kind === "object" && b.kind === "object") {
    const [af, bf] = [a.fields ?? {}, b.fields ?? {}];
    const keys = new Set([...Object.keys(af), ...Object.keys(bf)]);
    const own = (o: Readonly<Record<string, Projection>>, k: string) =>
      Object.hasOwn(o, k) ? o[k] : undefined;
    const fields = Object.fromEntries([...keys].map((k) => {
      const [l, r] = [own(af, k), own(bf, k)];
      return [k, l && r ? merge(l, r) : (l ?? r)!];
    }));
    const [x, y] = [a.other, b.other];
    const other = x && y
      ? (key: string) => {
        const [l, r] = [x(key), y(key)];
        return l && r ? merge(l, r) : l ?? r;
      }
      : x ?? y;
    return members(fields, other);
  }
  if (a.kind === "array" && b.kind === "array") {
    const max = Math.max(a.maxItems ?? Infinity, b.maxItems ?? Infinity);
    return each(merge(a.items, b.items), Number.isFinite(max) ? max : undefined);
  }
  if (a.kind === "whole" && b.kind === "whole") {
    return a.maxBytes === undefined || b.maxBytes === undefined
      ? WHOLE
      : bounded(Math.max(a.maxBytes, b.maxBytes));
  }
  return WHOLE;
}

/** Keys longer than this are never decoded: no projection names one, and decoding them would cost their length. */
const MAX_KEY_BYTES = 4096;

/** A document that is not JSON where the projection reads it. */
export class ProjectionSyntaxError extends SyntaxError {
  constructor(at: number) {
    super(`malformed JSON at byte ${at}`);
  }
}

function isSpace(b: number): boolean {
  return b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;
}

function skipSpace(bytes: Uint8Array, i: number): number {
  while (i < bytes.length && isSpace(bytes[i]!)) i++;
  return i;
}

/** The index of the quote closing a string whose text starts at `from`; throws at the end of the bytes. */
function stringEnd(bytes: Uint8Array, from: number): number {
  for (let i = from;;) {
    const q = bytes.indexOf(QUOTE, i);
    if (q < 0) throw new ProjectionSyntaxError(bytes.length);
    let slashes = 0;
    for (let j = q - 1; j >= from && bytes[j] === BACKSLASH; j--) slashes++;
    if (slashes % 2 === 0) return q;
    i = q + 1;
  }
}

/** The index just past the value starting at `i` (after space): strings, containers (iteratively) and scalars. */
export function skipValue(bytes: Uint8Array, i: number): number {
  i = skipSpace(bytes, i);
  const first = bytes[i];
  if (first === QUOTE) return stringEnd(bytes, i + 1) + 1;
  if (first === OPEN_OBJECT || first === OPEN_ARRAY) {
    let depth = 0;
    for (; i < bytes.length; i++) {
      const b = bytes[i]!;
      if (b === QUOTE) i = stringEnd(bytes, i + 1);
      else if (b === OPEN_OBJECT || b === OPEN_ARRAY) depth++;
      else if (b === CLOSE_OBJECT || b === CLOSE_ARRAY) {
        if (--depth === 0) return i + 1;
      }
    }
    throw new ProjectionSyntaxError(bytes.length);
  }
  const start = i;
  while (
    i < bytes.length && !isSpace(bytes[i]!) && bytes[i] !== COMMA && bytes[i] !== CLOSE_OBJECT &&
    bytes[i] !== CLOSE_ARRAY
  ) i++;
  if (i === start) throw new ProjectionSyntaxError(i);
  return i;
}

/** Parses the JSON text of `bytes[from, to)` once `charge` has accepted its cost. */
export type ParseSlice = (from: number, to: number) => unknown;

/**
 * Takes the heap a projection is about to build itself (the objects and arrays that hold what it keeps), before it
 * builds it: throws when it cannot be had. An item kept as an empty object costs its object though no member of it
 * is parsed: a list page of `{},{},…` kept item by item is 2.8 million objects in 8 MiB.
 */
export type BuildCharge = (bytes: number) => void;

/**
 * What one object or array the projection makes takes on V8's heap, at most, and each member or item put in it
 * (measured: 66.5 bytes an empty object kept as an array's item).
 */
export const BUILT_OBJECT_BYTES = 64;
export const BUILT_SLOT_BYTES = 16;

const free: BuildCharge = () => {};

/**
 * The value of the document `bytes` as `projection` keeps it: skipped members are never parsed, each kept one is
 * parsed by `parse` (which charges it first). Throws {@linkcode ProjectionSyntaxError} where the document is not
 * JSON along the projection's path (a skipped member is only delimited, not validated).
 *
 * @example
 * ```ts
 * const bytes = new TextEncoder().encode('{"metadata":{"name":"a"},"spec":{"values":[{},{}]}}');
 * project(bytes, members({ metadata: WHOLE }), (from, to) => JSON.parse(decode(bytes.subarray(from, to))));
 * // { metadata: { name: "a" } }
 * ```
 */
export function project(
  bytes: Uint8Array,
  projection: Projection,
  parse: ParseSlice,
  build: BuildCharge = free,
): unknown {
  const [value, end] = projectAt(bytes, skipSpace(bytes, 0), projection, parse, build);
  if (skipSpace(bytes, end) !== bytes.length) throw new ProjectionSyntaxError(end);
  return value;
}

/**
 * The members of a top-level object that `projection` keeps, read only as far as it takes to meet the first one
 * `wanted` names: what comes after it is neither parsed nor scanned (a hook call's parent comes before its children
 * and related objects, so 16 MB cost the scan of a few hundred bytes). Undefined when the document is not an
 * object or has none of them; the rest of the document is not validated.
 *
 * @example
 * ```ts
 * projectUntil(bytes, members({ parent: IDENTITY, object: IDENTITY }), ["parent", "object"], parse);
 * ```
 */
export function projectUntil(
  bytes: Uint8Array,
  projection: ObjectMembers,
  wanted: readonly string[],
  parse: ParseSlice,
  build: BuildCharge = free,
): Record<string, unknown> | undefined {
  let i = skipSpace(bytes, 0);
  if (bytes[i] !== OPEN_OBJECT) return undefined;
  build(BUILT_OBJECT_BYTES);
  const out: Record<string, unknown> = {};
  i = skipSpace(bytes, i + 1);
  while (bytes[i] === QUOTE) {
    const close = stringEnd(bytes, i + 1);
    const key = close - i - 1 <= MAX_KEY_BYTES ? keyOf(bytes, i + 1, close, parse) : undefined;
    i = skipSpace(bytes, close + 1);
    if (bytes[i] !== COLON) throw new ProjectionSyntaxError(i);
    const p = key !== undefined && Object.hasOwn(projection.fields ?? {}, key)
      ? projection.fields![key]
      : undefined;
    if (p) {
      const [value, end] = projectAt(bytes, i + 1, p, parse, build);
      build(BUILT_SLOT_BYTES);
      setMember(out, key!, value);
      if (wanted.includes(key!)) return out;
      i = end;
    } else {
      i = skipValue(bytes, i + 1);
    }
    i = skipSpace(bytes, i);
    if (bytes[i] !== COMMA) return undefined;
    i = skipSpace(bytes, i + 1);
  }
  return undefined;
}

/** The projected value starting at `i` and the index past it; `undefined` for a member to drop. */
function projectAt(
  bytes: Uint8Array,
  i: number,
  p: Projection,
  parse: ParseSlice,
  build: BuildCharge,
): [unknown, number] {
  i = skipSpace(bytes, i);
  const first = bytes[i];
  if (p.kind === "object" && first === OPEN_OBJECT) return objectAt(bytes, i, p, parse, build);
  if (p.kind === "array" && first === OPEN_ARRAY) return arrayAt(bytes, i, p, parse, build);
  const end = skipValue(bytes, i);
  if (p.kind === "whole" && p.maxBytes !== undefined && end - i > p.maxBytes) return [p.over, end];
  return [parse(i, end), end];
}

function objectAt(
  bytes: Uint8Array,
  i: number,
  p: ObjectMembers,
  parse: ParseSlice,
  build: BuildCharge,
): [unknown, number] {
  build(BUILT_OBJECT_BYTES);
  const out: Record<string, unknown> = {};
  i = skipSpace(bytes, i + 1);
  if (bytes[i] === CLOSE_OBJECT) return [out, i + 1];
  for (;;) {
    if (bytes[i] !== QUOTE) throw new ProjectionSyntaxError(i);
    const close = stringEnd(bytes, i + 1);
    const key = close - i - 1 <= MAX_KEY_BYTES ? keyOf(bytes, i + 1, close, parse) : undefined;
    i = skipSpace(bytes, close + 1);
    if (bytes[i] !== COLON) throw new ProjectionSyntaxError(i);
    const wanted = key === undefined
      ? undefined
      : (Object.hasOwn(p.fields ?? {}, key) ? p.fields![key] : p.other?.(key));
    if (wanted) {
      const [value, end] = projectAt(bytes, i + 1, wanted, parse, build);
      if (value !== undefined) {
        build(BUILT_SLOT_BYTES);
        setMember(out, key!, value);
      }
      i = end;
    } else {
      i = skipValue(bytes, i + 1);
    }
    i = skipSpace(bytes, i);
    if (bytes[i] === CLOSE_OBJECT) return [out, i + 1];
    if (bytes[i] !== COMMA) throw new ProjectionSyntaxError(i);
    i = skipSpace(bytes, i + 1);
  }
}

function arrayAt(
  bytes: Uint8Array,
  i: number,
  p: ArrayItems,
  parse: ParseSlice,
  build: BuildCharge,
): [unknown, number] {
  build(BUILT_OBJECT_BYTES);
  const out: unknown[] = [];
  const max = p.maxItems ?? Infinity;
  i = skipSpace(bytes, i + 1);
  if (bytes[i] === CLOSE_ARRAY) return [out, i + 1];
  for (;;) {
    if (out.length < max) {
      const [value, end] = projectAt(bytes, i, p.items, parse, build);
      build(BUILT_SLOT_BYTES);
      out.push(value);
      i = end;
    } else {
      i = skipValue(bytes, i);
    }
    i = skipSpace(bytes, i);
    if (bytes[i] === CLOSE_ARRAY) return [out, i + 1];
    if (bytes[i] !== COMMA) throw new ProjectionSyntaxError(i);
    i = skipSpace(bytes, i + 1);
  }
}

const utf8 = new TextDecoder();

/** Sets an own member, as `JSON.parse` does: an assignment to `__proto__` would set the prototype instead. */
function setMember(out: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") {
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  } else out[key] = value;
}

/**
 * A key's text: decoded as it is when it has no escape (a short ASCII key, as most are, without a decoder), else by
 * `parse` (charged like any value).
 */
function keyOf(bytes: Uint8Array, from: number, to: number, parse: ParseSlice): string {
  if (to - from <= 64) {
    let ascii = "";
    for (let i = from; i < to; i++) {
      const b = bytes[i]!;
      if (b === BACKSLASH || b >= 0x80) return slowKey(bytes, from, to, parse);
      ascii += String.fromCharCode(b);
    }
    return ascii;
  }
  return slowKey(bytes, from, to, parse);
}

function slowKey(bytes: Uint8Array, from: number, to: number, parse: ParseSlice): string {
  const text = bytes.subarray(from, to);
  return text.includes(BACKSLASH) ? parse(from - 1, to + 1) as string : utf8.decode(text);
}
