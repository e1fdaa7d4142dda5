/**
 * The two tables the parse estimate's scan (`json_cost.ts`) remembers a body in: the keys it has met, and the
 * hidden classes its objects took. Their keys and shapes are the body's, so chosen by whoever sent it, and the
 * hashes are unseeded (the scan is deterministic): anyone can find keys whose hashes fill one run of slots. So no
 * lookup, insert or rehash visits more than {@linkcode MAX_PROBES} slots; an entry that does not fit within them
 * is not remembered, and every later meeting of it is charged as new. That keeps the scan linear in the body for
 * every input (issue #55: 60,000 keys hashed into one run made a 1 MB body cost 29 s), and the estimate an upper
 * bound: forgetting only ever charges more.
 *
 * @module
 */

/** The most slots one lookup, insert or rehash placement visits in either table. */
export const MAX_PROBES = 64;

/** Distinct keys remembered; past it every key not met is charged as new. */
const KEYS_TRACKED = 65_536;
/** Hidden-class transitions remembered; past it every member is charged as a new one. */
const TRANSITIONS_TRACKED = 262_144;

/**
 * The hash a key's bytes are placed by: FNV-1a, then mixed (MurmurHash3's finalizer) so that keys that differ in
 * their last bytes spread over the low bits. Unseeded: the probe bound, not the hash, holds the work.
 */
export function jsonKeyHash(bytes: Uint8Array, start: number, end: number): number {
  let h = 0x811c9dc5;
  for (let i = start; i < end; i++) h = Math.imul(h ^ bytes[i]!, 0x01000193);
  return mix(h);
}

/** MurmurHash3's finalizer: every bit of `h` reaches the low bits a table is indexed by. */
function mix(h: number): number {
  h = Math.imul(h ^ (h >>> 16), 0x85ebca6b);
  h = Math.imul(h ^ (h >>> 13), 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** The slots visited so far by a scan's tables, and the most one operation visited. */
export class ProbeCount {
  total = 0;
  longest = 0;

  add(slots: number): void {
    this.total += slots;
    if (slots > this.longest) this.longest = slots;
  }
}

/**
 * The keys of one body met so far, by their bytes: a key whose bytes were met before is not new. An open-addressing
 * table of typed arrays (hash, start, length), probed linearly for at most {@linkcode MAX_PROBES} slots and
 * compared byte for byte, so two keys are never taken for one and no string is decoded. A key is compared only
 * when its whole hash and length match, so a lookup reads at most `MAX_PROBES` times the key's bytes.
 */
export class KeySet {
  readonly #bytes: Uint8Array;
  readonly #probes: ProbeCount;
  #hashes = new Uint32Array(64);
  #starts = new Uint32Array(64);
  /** Length + 1 (0: an empty slot). */
  #lengths = new Uint32Array(64);
  /** The key's number: its rank among the keys remembered. */
  #ids = new Uint32Array(64);
  #size = 0;

  constructor(bytes: Uint8Array, probes: ProbeCount) {
    this.#bytes = bytes;
    this.#probes = probes;
  }

  /** Whether the last {@linkcode idOf} met its key for the first time (or could not tell: charged as new). */
  added = false;

  /** The key's number, in the order keys were remembered (-1: not remembered); sets `added`. */
  idOf(start: number, end: number): number {
    const h = jsonKeyHash(this.#bytes, start, end);
    const length = end - start;
    const mask = this.#hashes.length - 1;
    let slot = h & mask;
    for (let probe = 1; probe <= MAX_PROBES; probe++, slot = (slot + 1) & mask) {
      const stored = this.#lengths[slot]!;
      if (stored === 0) {
        this.#probes.add(probe);
        this.added = true;
        if (this.#size >= KEYS_TRACKED) return -1;
        return this.#insert(slot, h, start, length);
      }
      if (
        this.#hashes[slot] === h && stored === length + 1 && this.#same(this.#starts[slot]!, start, length)
      ) {
        this.#probes.add(probe);
        this.added = false;
        return this.#ids[slot]!;
      }
    }
    // A run no longer than the bound holds neither the key nor room for it: new, as far as the charge goes.
    this.#probes.add(MAX_PROBES);
    this.added = true;
    return -1;
  }

  #same(a: number, b: number, length: number): boolean {
    const bytes = this.#bytes;
    for (let i = 0; i < length; i++) if (bytes[a + i] !== bytes[b + i]) return false;
    return true;
  }

  #insert(slot: number, h: number, start: number, length: number): number {
    const id = this.#size++;
    this.#hashes[slot] = h;
    this.#starts[slot] = start;
    this.#lengths[slot] = length + 1;
    this.#ids[slot] = id;
    if (this.#size * 2 > this.#hashes.length) this.#grow();
    return id;
  }

  /** Doubles the table, placing every key again; one that finds no slot within the bound is forgotten. */
  #grow(): void {
    const [hashes, starts, lengths, ids] = [this.#hashes, this.#starts, this.#lengths, this.#ids];
    const size = hashes.length * 2;
    this.#hashes = new Uint32Array(size);
    this.#starts = new Uint32Array(size);
    this.#lengths = new Uint32Array(size);
    this.#ids = new Uint32Array(size);
    const mask = size - 1;
    for (let i = 0; i < hashes.length; i++) {
      if (lengths[i] === 0) continue;
      const slot = freeSlot(this.#lengths, hashes[i]! & mask, this.#probes);
      if (slot < 0) continue;
      this.#hashes[slot] = hashes[i]!;
      this.#starts[slot] = starts[i]!;
      this.#lengths[slot] = lengths[i]!;
      this.#ids[slot] = ids[i]!;
    }
  }
}

/**
 * The hidden classes the objects of one body take, as V8 builds them: a map per sequence of keys from the empty
 * object's, numbered as they are met. `next(map, key)` is the map an object of `map` takes with `key`, and says
 * whether it is new. For an unremembered map or key (-1), past {@linkcode TRANSITIONS_TRACKED}, or when the
 * pair's run holds neither it nor room within {@linkcode MAX_PROBES}, every step is new.
 */
export class Transitions {
  /** Whether the last {@linkcode next} made a new map. */
  added = false;
  readonly #probes: ProbeCount;
  #from = new Int32Array(1024);
  #key = new Int32Array(1024);
  #to = new Int32Array(1024);
  #size = 0;

  constructor(probes: ProbeCount) {
    this.#probes = probes;
  }

  next(map: number, key: number): number {
    if (map < 0 || key < 0) return (this.added = true, -1);
    const mask = this.#from.length - 1;
    let slot = pairHash(map, key) & mask;
    let probe = 1;
    for (; probe <= MAX_PROBES; probe++, slot = (slot + 1) & mask) {
      const to = this.#to[slot]!;
      if (to === 0) break;
      if (this.#from[slot] === map && this.#key[slot] === key) {
        this.#probes.add(probe);
        return (this.added = false, to);
      }
    }
    this.#probes.add(Math.min(probe, MAX_PROBES));
    this.added = true;
    if (probe > MAX_PROBES || this.#size >= TRANSITIONS_TRACKED) return -1;
    const to = ++this.#size; // 0 is the empty object's map
    this.#from[slot] = map;
    this.#key[slot] = key;
    this.#to[slot] = to;
    if (this.#size * 2 > this.#from.length) this.#grow();
    return to;
  }

  /** Doubles the table, placing every pair again; one that finds no slot within the bound is forgotten. */
  #grow(): void {
    const [from, key, to] = [this.#from, this.#key, this.#to];
    this.#from = new Int32Array(from.length * 2);
    this.#key = new Int32Array(from.length * 2);
    this.#to = new Int32Array(from.length * 2);
    const mask = this.#from.length - 1;
    for (let i = 0; i < from.length; i++) {
      if (to[i] === 0) continue;
      const slot = freeSlot(this.#to, pairHash(from[i]!, key[i]!) & mask, this.#probes);
      if (slot < 0) continue;
      this.#from[slot] = from[i]!;
      this.#key[slot] = key[i]!;
      this.#to[slot] = to[i]!;
    }
  }
}

function pairHash(map: number, key: number): number {
  return mix(Math.imul(map, 0x9e3779b1) + key);
}

/** The first empty slot (0 in `used`) from `slot` on within {@linkcode MAX_PROBES}, or -1. */
function freeSlot(used: Uint32Array | Int32Array, slot: number, probes: ProbeCount): number {
  const mask = used.length - 1;
  for (let probe = 1; probe <= MAX_PROBES; probe++, slot = (slot + 1) & mask) {
    if (used[slot] === 0) {
      probes.add(probe);
      return slot;
    }
  }
  probes.add(MAX_PROBES);
  return -1;
}
