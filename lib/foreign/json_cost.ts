/**
 * What parsing a JSON body can cost the heap, known before it is parsed. `JSON.parse` is one builtin call: an
 * isolate's heap limit cannot stop it halfway (a worker capped at 64 MiB reached 545 MiB resident parsing 15 MB
 * of `{},`), and 16 MiB of such text needs 360 MiB. So every body is scanned first, in one pass over its bytes
 * with no allocation but the keys it has not met yet, and refused when the heap its parse could need is over the
 * budget (docs/architecture.md#no-request-can-end-the-process).
 *
 * The cost of each token is an upper bound measured on V8 (Deno 2.9.6, `bench/json_cost_bench.ts` and
 * `lib/foreign/json_cost_test.ts` hold it to the heap a parse really takes, for Kubernetes objects and the shapes
 * that cost most per byte: empty objects and arrays, unique keys, deep nesting, numbers, long strings, keys in
 * varying orders, array-index keys, objects of many members).
 *
 * The keys and hidden classes met are remembered in tables whose lookups visit a bounded number of slots
 * (`json_tables.ts`), so the scan is linear in the body whatever keys it holds.
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
import { KeySet, ProbeCount, Transitions } from "./json_tables.ts";

/** Heap bytes charged per token (upper bounds, from measurement; see the module doc). */
export const JSON_TOKEN_COST = {
  /** An object: its header and property storage (an empty `{}` measured 64 with its slot). */
  object: 72,
  /** An array: its header and backing store (nested `[[]]` measured 48 per array, deep nesting 58). */
  array: 64,
  /** Every value's slot in its array or object, with the array's growth slack. */
  slot: 16,
  /** A number: a heap number when it is not a small integer. */
  number: 16,
  /** A string value: its header; its characters are charged per byte. */
  string: 24,
  /** Each byte of a string that is all Latin-1: one byte. */
  perStringByte: 1,
  /**
   * Each byte of a string with a character past Latin-1 (a UTF-8 lead byte of 0xC4 or more, or an escape, which
   * may be one): V8 keeps the whole string in two bytes per character.
   */
  perWideStringByte: 2,
  /** A member of an object: its property slot, or its dictionary entry (the key's own cost is `newKey`). */
  member: 16,
  /** A key not met before in the body: its internalized string, and the hidden class and descriptors it adds. */
  newKey: 160,
  /**
   * A member that takes an object's hidden class where no object of the body took it before: V8 gives every
   * object a map per sequence of keys, so objects whose keys come in varying orders (`{"a":0,"b":0}`,
   * `{"b":0,"a":0}`) each build maps of their own, and their descriptors (measured: 12 to 15 bytes of heap per
   * byte of such text, against 7 without this charge).
   */
  transition: 120,
  /**
   * A member whose key may be an array index (1 to 10 digits, or any escape): V8 keeps it in the object's
   * elements, a number dictionary when sparse (`{"1000":0}` measured 208 bytes with its slot, `{"1000":0.5}`
   * 224, against 136 charged without this).
   */
  element: 128,
  /**
   * Each member of an object of {@linkcode DICTIONARY_MEMBERS} members or more, all of them once it reaches it: V8
   * keeps such an object's properties in a dictionary, three words an entry in a table up to three times its
   * entries (measured: 48 to 72 bytes a member, against 16 charged without this).
   */
  dictionaryMember: 64,
} as const;

/** How many members make V8 keep an object's properties in a dictionary (measured: 127 do not, 128 do). */
export const DICTIONARY_MEMBERS = 128;

/**
 * Deepest nesting read: Go's `encoding/json` refuses deeper documents, so no object the API server stores, and no
 * request Metacontroller or the API server builds of them, is deeper. Past it a body is refused unparsed.
 */
export const MAX_JSON_DEPTH = 10_000;

/**
 * What a scan found: the heap of the parsed value, whether a string may be past Latin-1, too deep to read, and the
 * work its tables did.
 */
export interface JsonScan {
  /** Upper bound of the parsed value's heap, or `Infinity` past the budget (the scan stopped there). */
  readonly cost: number;
  /** Whether any string may hold a character past Latin-1 (the body's text is then two bytes a character). */
  readonly wide: boolean;
  /** Nested deeper than {@linkcode MAX_JSON_DEPTH} (the scan stopped there). */
  readonly tooDeep: boolean;
  /**
   * Slots the scan's key and hidden-class tables visited, rehashes included: at most `MAX_PROBES` per lookup or
   * placement (`json_tables.ts`), so linear in the body whatever its keys.
   */
  readonly probes: number;
  /** The most slots one lookup or placement visited. */
  readonly longestProbe: number;
}

/**
 * An upper bound of the heap `JSON.parse` takes for `bytes` (UTF-8 JSON), the parsed value and its strings, or
 * `Infinity` as soon as it passes `budget` (or nests past {@linkcode MAX_JSON_DEPTH}): the scan stops there, so a
 * body far over the budget costs no more to refuse than one just over it. Malformed JSON is estimated as if it
 * parsed (the parse then fails, costing less).
 *
 * @example
 * ```ts
 * const bytes = new TextEncoder().encode('{"a":[1,2,{}]}');
 * jsonHeapEstimate(bytes, 1 << 20); // a few hundred bytes
 * jsonHeapEstimate(new TextEncoder().encode("[" + "{},".repeat(1e6) + "{}]"), 64 << 20); // Infinity
 * ```
 */
export function jsonHeapEstimate(bytes: Uint8Array, budget: number): number {
  const scan = scanJson(bytes, budget);
  return scan.tooDeep ? Infinity : scan.cost;
}

/**
 * What parsing `bytes` takes at its peak: the text `JSON.parse` reads (one byte a character, two when a string may
 * be past Latin-1) and the value it builds ({@linkcode scanJson}), or `Infinity` past `budget` or too deep.
 */
export function jsonParseCost(bytes: Uint8Array, budget: number): number {
  const scan = scanJson(bytes, budget);
  if (scan.tooDeep) return Infinity;
  const cost = scan.cost + bytes.length * (scan.wide ? 2 : 1);
  return cost > budget ? Infinity : cost;
}

/** Scans a JSON body once: see {@linkcode JsonScan}. */
export function scanJson(bytes: Uint8Array, budget: number): JsonScan {
  const c = JSON_TOKEN_COST;
  const probes = new ProbeCount();
  const tables = { keys: new KeySet(bytes, probes), maps: new Transitions(probes) };
  const done = (cost: number, tooDeep: boolean): JsonScan => ({
    cost,
    wide,
    tooDeep,
    probes: probes.total,
    longestProbe: probes.longest,
  });
  let cost = 0;
  // Whether the next string is an object's key: after `{` or after a `,` inside an object. The containers open
  // are a stack of bits (1: an object), so nesting a million deep costs the scan 125 KB, not a million slots.
  const open = new ContainerStack();
  let expectKey = false;
  let wide = false;
  const n = bytes.length;
  for (let i = 0; i < n; i++) {
    const b = bytes[i]!;
    if (b === QUOTE) {
      const end = closingQuote(bytes, i + 1);
      if (end < 0) wide = true;
      const perByte = end < 0 ? c.perWideStringByte : c.perStringByte;
      const close = end < 0 ? -end - 1 : end;
      const length = close - i - 1;
      if (expectKey) {
        cost += memberCost(bytes, i + 1, close, perByte, tables, open);
        expectKey = false;
      } else {
        cost += c.slot + c.string + perByte * length;
      }
      i = close;
    } else if (b === OPEN_OBJECT) {
      cost += c.slot + c.object;
      if (open.push(true) > MAX_JSON_DEPTH) return done(cost, true);
      expectKey = true;
    } else if (b === OPEN_ARRAY) {
      cost += c.slot + c.array;
      if (open.push(false) > MAX_JSON_DEPTH) return done(cost, true);
    } else if (b === COMMA) {
      expectKey = open.top();
    } else if (b === CLOSE_OBJECT || b === CLOSE_ARRAY) {
      open.pop();
      expectKey = false;
    } else if (b === COLON) {
      expectKey = false;
    } else if ((b >= 0x30 && b <= 0x39) || b === 0x2d) {
      // A number: one slot and a possible heap number; its other characters are skipped.
      cost += c.slot + c.number;
      while (i + 1 < n && isNumberByte(bytes[i + 1]!)) i++;
    } else if (b === 0x74 || b === 0x66 || b === 0x6e) {
      // true, false, null: a slot.
      cost += c.slot;
      while (i + 1 < n && bytes[i + 1]! >= 0x61 && bytes[i + 1]! <= 0x7a) i++;
    }
    if (cost > budget) return done(Infinity, false);
  }
  return done(cost, false);
}

/**
 * What a member costs besides its value: its slot, its key when new, the hidden class it takes when new, its
 * elements store when its key may be an array index, and its dictionary entry when its object has
 * {@linkcode DICTIONARY_MEMBERS} members or more.
 */
function memberCost(
  bytes: Uint8Array,
  start: number,
  end: number,
  perByte: number,
  tables: { keys: KeySet; maps: Transitions },
  open: ContainerStack,
): number {
  const c = JSON_TOKEN_COST;
  const { keys, maps } = tables;
  const key = keys.idOf(start, end);
  let cost = c.member + (keys.added ? c.newKey + perByte * (end - start) : 0);
  const map = maps.next(open.state(), key);
  if (maps.added) cost += c.transition;
  open.setState(map);
  if (mayBeIndex(bytes, start, end)) cost += c.element;
  const members = open.addMember();
  if (members === DICTIONARY_MEMBERS) cost += DICTIONARY_MEMBERS * c.dictionaryMember;
  else if (members > DICTIONARY_MEMBERS) cost += c.dictionaryMember;
  return cost;
}

/**
 * Whether a key may name an array index (V8 keeps those in elements, not properties): 1 to 10 digits, or a key
 * short enough to be one written with escapes. Keys past the largest index (2^32 - 2) or with a leading zero are
 * charged too: a few bytes more, never less.
 */
function mayBeIndex(bytes: Uint8Array, start: number, end: number): boolean {
  const length = end - start;
  // An index's first character is a digit, literal or escaped: most keys are told by their first byte.
  const first = bytes[start]!;
  if (length === 0 || length > 60 || ((first < 0x30 || first > 0x39) && first !== BACKSLASH)) return false;
  let digits = true;
  for (let i = start; i < end; i++) {
    const b = bytes[i]!;
    if (b === BACKSLASH) return true;
    if (b < 0x30 || b > 0x39) digits = false;
  }
  return digits && length <= 10;
}

/**
 * The index of the quote that closes a string whose text starts at `from` (or the end of the bytes), negated
 * (`-index - 1`) when the string may hold a character past Latin-1 (a UTF-8 lead byte of 0xC4 or more, or a
 * `\u` escape past `\u00FF`).
 */
function closingQuote(bytes: Uint8Array, from: number): number {
  const n = bytes.length;
  let i = from;
  let wide = false;
  // A loop, not indexOf: most strings are a few bytes, where a call per string costs more than the bytes.
  while (i < n) {
    const b = bytes[i]!;
    if (b === QUOTE) return wide ? -i - 1 : i;
    if (b === BACKSLASH) {
      // Only a \u escape of a character past Latin-1 makes the string wide; \" \\ \n and the like do not.
      if (bytes[i + 1] === 0x75 && !latin1Escape(bytes, i + 2)) wide = true;
      i += 2;
    } else {
      if (b >= 0xc4) wide = true;
      i++;
    }
  }
  return wide ? -n - 1 : n;
}

/** The containers open at a point of the scan, one bit each (1: an object, 0: an array). */
class ContainerStack {
  #bits = new Uint8Array(64);
  /** The map of each open object so far (see {@linkcode Transitions}); arrays keep 0. */
  #states = new Int32Array(512);
  /** The members of each open object so far. */
  #members = new Int32Array(512);
  #depth = 0;

  /** Pushes a container; returns the depth it opens. */
  push(object: boolean): number {
    if (this.#depth >> 3 >= this.#bits.length) {
      const grown = new Uint8Array(this.#bits.length * 2);
      grown.set(this.#bits);
      this.#bits = grown;
    }
    if (this.#depth >= this.#states.length) {
      this.#states = doubled(this.#states);
      this.#members = doubled(this.#members);
    }
    const at = this.#depth++;
    this.#states[at] = 0;
    this.#members[at] = 0;
    if (object) this.#bits[at >> 3]! |= 1 << (at & 7);
    else this.#bits[at >> 3]! &= ~(1 << (at & 7));
    return this.#depth;
  }

  pop(): void {
    if (this.#depth > 0) this.#depth--;
  }

  /** The map of the innermost open object (0 at the top level). */
  state(): number {
    return this.#depth > 0 ? this.#states[this.#depth - 1]! : 0;
  }

  setState(map: number): void {
    if (this.#depth > 0) this.#states[this.#depth - 1] = map;
  }

  /** Counts a member of the innermost open object; returns its members so far (1 at the top level). */
  addMember(): number {
    return this.#depth > 0 ? ++this.#members[this.#depth - 1]! : 1;
  }

  /** Whether the innermost open container is an object. */
  top(): boolean {
    const at = this.#depth - 1;
    return at >= 0 && (this.#bits[at >> 3]! & (1 << (at & 7))) !== 0;
  }
}

function doubled(a: Int32Array<ArrayBuffer>): Int32Array<ArrayBuffer> {
  const grown = new Int32Array(a.length * 2);
  grown.set(a);
  return grown;
}

/** Whether the four hex digits at `at` (a `\\u` escape's) name a Latin-1 character (`00XX`). */
function latin1Escape(bytes: Uint8Array, at: number): boolean {
  return bytes[at] === 0x30 && bytes[at + 1] === 0x30;
}

function isNumberByte(b: number): boolean {
  return (b >= 0x30 && b <= 0x39) || b === 0x2e || b === 0x65 || b === 0x45 || b === 0x2b || b === 0x2d;
}
