/**
 * What parsing a JSON body can cost the heap, known before it is parsed. `JSON.parse` is one builtin call: an
 * isolate's heap limit cannot stop it halfway (a worker capped at 64 MiB reached 545 MiB resident parsing 15 MB
 * of `{},`), and 16 MiB of such text needs 360 MiB. So every body is scanned first, in one pass over its bytes
 * with no allocation but the keys it has not met yet, and refused when the heap its parse could need is over the
 * budget (docs/architecture.md#no-request-can-end-the-process).
 *
 * The cost of each token is an upper bound measured on V8 (Deno 2.9.6, `bench/json_cost_bench.ts` and
 * `lib/http/json_cost_test.ts` hold it to the heap a parse really takes, for Kubernetes objects and the shapes
 * that cost most per byte: empty objects and arrays, unique keys, deep nesting, numbers, long strings).
 *
 * @module
 */

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
} as const;

/** Distinct keys remembered for {@linkcode JSON_TOKEN_COST}.newKey; past it every key is charged as new. */
const KEYS_TRACKED = 65_536;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COLON = 0x3a;
const COMMA = 0x2c;

/**
 * Deepest nesting read: Go's `encoding/json` refuses deeper documents, so no object the API server stores, and no
 * request Metacontroller or the API server builds of them, is deeper. Past it a body is refused unparsed.
 */
export const MAX_JSON_DEPTH = 10_000;

/** What a scan found: the heap of the parsed value, whether a string may be past Latin-1, too deep to read. */
export interface JsonScan {
  /** Upper bound of the parsed value's heap, or `Infinity` past the budget (the scan stopped there). */
  readonly cost: number;
  /** Whether any string may hold a character past Latin-1 (the body's text is then two bytes a character). */
  readonly wide: boolean;
  /** Nested deeper than {@linkcode MAX_JSON_DEPTH} (the scan stopped there). */
  readonly tooDeep: boolean;
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
  const keys = new KeySet(bytes);
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
        cost += c.member + (keys.isNew(i + 1, close) ? c.newKey + perByte * length : 0);
        expectKey = false;
      } else {
        cost += c.slot + c.string + perByte * length;
      }
      i = close;
    } else if (b === OPEN_OBJECT) {
      cost += c.slot + c.object;
      if (open.push(true) > MAX_JSON_DEPTH) return { cost, wide, tooDeep: true };
      expectKey = true;
    } else if (b === OPEN_ARRAY) {
      cost += c.slot + c.array;
      if (open.push(false) > MAX_JSON_DEPTH) return { cost, wide, tooDeep: true };
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
    if (cost > budget) return { cost: Infinity, wide, tooDeep: false };
  }
  return { cost, wide, tooDeep: false };
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

/**
 * The keys of one body met so far, by their bytes: a key whose bytes were met before is not new. An open-addressing
 * table of typed arrays (hash, start, length), probed linearly and compared byte for byte, so two keys are never
 * taken for one and no string is decoded; it grows with the keys met, up to {@linkcode KEYS_TRACKED} (past it,
 * every key not met is charged as new).
 */
class KeySet {
  readonly #bytes: Uint8Array;
  #hashes = new Uint32Array(64);
  #starts = new Uint32Array(64);
  /** Length + 1 (0: an empty slot). */
  #lengths = new Uint32Array(64);
  #size = 0;

  constructor(bytes: Uint8Array) {
    this.#bytes = bytes;
  }

  isNew(start: number, end: number): boolean {
    const b = this.#bytes;
    let h = 0x811c9dc5;
    for (let i = start; i < end; i++) h = Math.imul(h ^ b[i]!, 0x01000193);
    h >>>= 0;
    const length = end - start;
    const mask = this.#hashes.length - 1;
    for (let slot = h & mask;; slot = (slot + 1) & mask) {
      const stored = this.#lengths[slot]!;
      if (stored === 0) {
        if (this.#size < KEYS_TRACKED) this.#insert(slot, h, start, length);
        return true;
      }
      if (
        this.#hashes[slot] === h && stored === length + 1 && this.#same(this.#starts[slot]!, start, length)
      ) {
        return false;
      }
    }
  }

  #same(a: number, b: number, length: number): boolean {
    const bytes = this.#bytes;
    for (let i = 0; i < length; i++) if (bytes[a + i] !== bytes[b + i]) return false;
    return true;
  }

  #insert(slot: number, h: number, start: number, length: number): void {
    this.#hashes[slot] = h;
    this.#starts[slot] = start;
    this.#lengths[slot] = length + 1;
    if (++this.#size * 2 > this.#hashes.length) this.#grow();
  }

  /** Doubles the table, placing every key again. */
  #grow(): void {
    const [hashes, starts, lengths] = [this.#hashes, this.#starts, this.#lengths];
    const size = hashes.length * 2;
    this.#hashes = new Uint32Array(size);
    this.#starts = new Uint32Array(size);
    this.#lengths = new Uint32Array(size);
    const mask = size - 1;
    for (let i = 0; i < hashes.length; i++) {
      if (lengths[i] === 0) continue;
      let slot = hashes[i]! & mask;
      while (this.#lengths[slot] !== 0) slot = (slot + 1) & mask;
      this.#hashes[slot] = hashes[i]!;
      this.#starts[slot] = starts[i]!;
      this.#lengths[slot] = lengths[i]!;
    }
  }
}

/** The containers open at a point of the scan, one bit each (1: an object, 0: an array). */
class ContainerStack {
  #bits = new Uint8Array(64);
  #depth = 0;

  /** Pushes a container; returns the depth it opens. */
  push(object: boolean): number {
    if (this.#depth >> 3 >= this.#bits.length) {
      const grown = new Uint8Array(this.#bits.length * 2);
      grown.set(this.#bits);
      this.#bits = grown;
    }
    const at = this.#depth++;
    if (object) this.#bits[at >> 3]! |= 1 << (at & 7);
    else this.#bits[at >> 3]! &= ~(1 << (at & 7));
    return this.#depth;
  }

  pop(): void {
    if (this.#depth > 0) this.#depth--;
  }

  /** Whether the innermost open container is an object. */
  top(): boolean {
    const at = this.#depth - 1;
    return at >= 0 && (this.#bits[at >> 3]! & (1 << (at & 7))) !== 0;
  }
}

/** Whether the four hex digits at `at` (a `\\u` escape's) name a Latin-1 character (`00XX`). */
function latin1Escape(bytes: Uint8Array, at: number): boolean {
  return bytes[at] === 0x30 && bytes[at + 1] === 0x30;
}

function isNumberByte(b: number): boolean {
  return (b >= 0x30 && b <= 0x39) || b === 0x2e || b === 0x65 || b === 0x45 || b === 0x2b || b === 0x2d;
}
