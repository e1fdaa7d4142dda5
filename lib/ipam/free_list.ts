/**
 * The free list behind {@linkcode Allocator}: the free blocks of a pool in address order. Internal to
 * `lib/ipam` (not exported from `mod.ts`).
 *
 * Two representations share one interface. {@linkcode OffsetFreeList} keeps offsets from the pool's first
 * address as plain numbers; it serves every pool that spans at most 2^53 addresses (all IPv4 pools, IPv6 up
 * to a /75) and is the fast one. {@linkcode RangeFreeList} keeps BigInt ranges and is built from the interval
 * algebra of `range.ts`; it serves the larger IPv6 pools and is the reference the fast one is tested against.
 * They are two classes rather than one generic over `number | bigint` because V8 optimises an operator for the
 * types it has seen: shared code that had met both ran the number case about twice as slowly.
 *
 * @module
 */
import {
  isOffsetRanges,
  normalizeRanges,
  type OffsetRanges,
  type Range,
  rangeSize,
  subtractRanges,
  toRanges,
} from "./range.ts";

/** The free blocks of a pool: usable space (allocatable minus reserved) minus allocations. */
export interface FreeList {
  /** Addresses in the usable space. */
  readonly total: bigint;
  /** Number of free blocks. */
  readonly count: number;
  /** Free addresses: the sum of the block sizes. */
  available(): bigint;
  /** Size of the largest free block (zero when none). */
  largest(): bigint;
  /** The free blocks as absolute ranges, in address order. */
  blocks(): Range[];
  /**
   * Recomputes the blocks for these allocations (cheapest when sorted by start, as the ledger is, and given as
   * number offsets, as the ledger decodes them).
   */
  rebuild(allocations: readonly Range[] | OffsetRanges): void;
  /**
   * Removes `n` addresses from the start of the best-fitting block (smallest that fits, lowest on ties) and
   * returns the first address; `undefined` when no block fits.
   */
  takeBestFit(n: bigint): bigint | undefined;
  /** Removes exactly `r` from the free blocks, or returns the first address of `r` that is not free. */
  take(r: Range): bigint | undefined;
}

/** Which representation {@linkcode createFreeList} builds; tests force each in turn. */
export type Representation = "offsets" | "ranges";

const SMALL_SPAN = BigInt(Number.MAX_SAFE_INTEGER);
/**
 * 2^53: offsets are exact up to here. A shifted offset computed as exactly 2^53 may stand for 2^53 + 1, which is
 * past every usable span either way; beyond it the offset path gives up and converts to BigInt.
 */
const FAR = 2 ** 53;

/**
 * A free list for a pool. `allocatable` must be sorted and disjoint; `reserved` may be in any order and may
 * overlap. By default the representation follows the pool's span.
 */
export function createFreeList(
  allocatable: readonly Range[],
  reserved: readonly Range[],
  representation?: Representation,
): FreeList {
  const first = allocatable[0]?.start ?? 0n;
  const last = allocatable[allocatable.length - 1]?.end ?? 0n;
  const chosen = representation ?? (last - first <= SMALL_SPAN ? "offsets" : "ranges");
  return chosen === "offsets"
    ? new OffsetFreeList(allocatable, reserved)
    : new RangeFreeList(allocatable, reserved);
}

/**
 * BigInt-to-number conversion through a typed array: storing a BigInt into a `BigUint64Array` keeps its low 64
 * bits without allocating, and reading the two 32-bit halves back costs a fraction of `Number(bigint)`; with
 * 20,000 conversions per build this is most of the difference.
 */
const WORD = new BigUint64Array(1);
const HALVES = new Uint32Array(WORD.buffer);
WORD[0] = 1n;
const LO = HALVES[0] === 1 ? 0 : 1;
const HI = 1 - LO;
const TWO_32 = 2 ** 32;

/**
 * Free blocks as offsets (plain numbers) from the first allocatable address, in parallel columns. For pools
 * that span at most 2^53 addresses.
 */
export class OffsetFreeList implements FreeList {
  readonly total: bigint;
  #starts: number[] = [];
  #ends: number[] = [];
  #sizes: number[] = [];
  readonly #usable: { starts: number[]; ends: number[] };
  readonly #base: bigint;
  readonly #limit: bigint;
  readonly #baseLo: number;
  readonly #baseHi: number;

  constructor(allocatable: readonly Range[], reserved: readonly Range[]) {
    this.#base = allocatable[0]?.start ?? 0n;
    this.#limit = this.#base + SMALL_SPAN;
    WORD[0] = this.#base;
    this.#baseLo = HALVES[LO]!;
    this.#baseHi = HALVES[HI]!;
    this.#usable = {
      starts: allocatable.map((r) => this.#from(r.start)),
      ends: allocatable.map((r) => this.#from(r.end)),
    };
    // Swept against the reserved ranges, the allocatable ranges become the usable space every build starts from.
    this.#sweep(reserved);
    this.#usable = { starts: this.#starts, ends: this.#ends };
    this.total = this.available();
  }

  get count(): number {
    return this.#starts.length;
  }

  /**
   * Inside `[base, base + 2^53)` an offset is the difference of the low 64 bits of the address and of the
   * base, modulo 2^64: exact, and no BigInt is allocated. Anything else (a reserved range before the pool, say)
   * is subtracted in BigInt first and clamped to 2^53 either side, where only the side matters.
   */
  #from(v: bigint): number {
    if (v >= this.#base && v <= this.#limit) return this.#low(v);
    return v < this.#base ? Math.max(-FAR, Number(v - this.#base)) : Math.min(FAR, Number(v - this.#base));
  }

  /** {@linkcode OffsetFreeList.#from} for an address known to be inside the window. */
  #low(v: bigint): number {
    WORD[0] = v;
    const lo = HALVES[LO]! - this.#baseLo;
    const hi = (HALVES[HI]! - this.#baseHi - (lo < 0 ? 1 : 0)) >>> 0;
    return hi * TWO_32 + (lo >>> 0);
  }

  #to(offset: number): bigint {
    return BigInt(offset) + this.#base;
  }

  available(): bigint {
    let sum = 0;
    for (const size of this.#sizes) sum += size;
    return BigInt(sum);
  }

  largest(): bigint {
    let largest = 0;
    for (const size of this.#sizes) if (size > largest) largest = size;
    return BigInt(largest);
  }

  blocks(): Range[] {
    return this.#starts.map((s, i) => ({ start: this.#to(s), end: this.#to(this.#ends[i]!) }));
  }

  rebuild(allocations: readonly Range[] | OffsetRanges): void {
    if (!isOffsetRanges(allocations)) return this.#sweep(allocations);
    const shift = allocations.base - this.#base;
    const exact = shift >= -SMALL_SPAN && shift <= SMALL_SPAN &&
      this.#sweepSorted(allocations.starts, allocations.ends, Number(shift));
    if (!exact) this.#sweep(toRanges(allocations));
  }

  /** The usable spans minus `used`; sorted input is swept once, anything else is sorted and merged first. */
  #sweep(used: readonly Range[]): void {
    if (!this.#sweepSorted(...this.#columns(used), 0)) {
      this.#sweepSorted(...this.#columns(normalizeRanges(used)), 0);
    }
  }

  /** Ranges as offsets from the first allocatable address, in two columns. */
  #columns(ranges: readonly Range[]): [number[], number[]] {
    const starts = new Array<number>(ranges.length);
    const ends = new Array<number>(ranges.length);
    for (let i = 0; i < ranges.length; i++) {
      const r = ranges[i]!;
      // Both ends in the window (the common case) is two comparisons rather than four.
      const inside = r.start >= this.#base && r.end <= this.#limit;
      starts[i] = inside ? this.#low(r.start) : this.#from(r.start);
      ends[i] = inside ? this.#low(r.end) : this.#from(r.end);
    }
    return [starts, ends];
  }

  /**
   * One pass over used ranges `shift + starts[i] .. shift + ends[i]` (offsets), sorted by start and possibly
   * overlapping; returns false as soon as it meets one out of order, or one whose shifted offsets would not be
   * exact numbers. No block spans two usable spans.
   */
  #sweepSorted(usedStarts: readonly number[], usedEnds: readonly number[], shift: number): boolean {
    const { starts: us, ends: ue } = this.#usable;
    const n = usedStarts.length;
    const capacity = n + us.length;
    const starts = new Array<number>(capacity);
    const ends = new Array<number>(capacity);
    const sizes = new Array<number>(capacity);
    let k = 0;
    let j = 0;
    let previous = -Infinity;
    for (let r = 0; r < us.length; r++) {
      const end = ue[r]!;
      let cursor = us[r]!;
      // A range passed over ends before this span does, so it cannot reach the next one: j never moves back.
      for (; j < n; j++) {
        const s = usedStarts[j]! + shift;
        if (s < previous || s < -FAR) return false;
        previous = s;
        if (s > end) break;
        const e = usedEnds[j]! + shift;
        if (e > FAR) return false;
        if (e < cursor) continue;
        if (s > cursor) {
          starts[k] = cursor;
          ends[k] = s - 1;
          sizes[k++] = s - cursor;
        }
        cursor = e + 1;
        if (e >= end) break;
      }
      if (cursor <= end) {
        starts[k] = cursor;
        ends[k] = end;
        sizes[k++] = end - cursor + 1;
      }
    }
    for (; j < n; j++) {
      const s = usedStarts[j]! + shift;
      if (s < previous) return false;
      previous = s;
    }
    starts.length = ends.length = sizes.length = k;
    this.#starts = starts;
    this.#ends = ends;
    this.#sizes = sizes;
    return true;
  }

  takeBestFit(count: bigint): bigint | undefined {
    // Above 2^53 `Number(count)` rounds (2^53 + 1 becomes 2^53, which may fit); no block is larger than total.
    if (count > this.total) return undefined;
    const n = Number(count);
    const sizes = this.#sizes;
    let i = -1;
    for (let k = 0; k < sizes.length; k++) {
      if (sizes[k]! >= n && (i < 0 || sizes[k]! < sizes[i]!)) {
        i = k;
        if (sizes[k] === n) break;
      }
    }
    if (i < 0) return undefined;
    const start = this.#starts[i]!;
    if (this.#sizes[i] === n) this.#replace(i);
    else {
      this.#starts[i] = start + n;
      this.#sizes[i]! -= n;
    }
    return this.#to(start);
  }

  take(r: Range): bigint | undefined {
    const start = this.#from(r.start);
    const end = this.#from(r.end);
    const i = this.#indexAt(start);
    if (i < 0) return r.start;
    const [blockStart, blockEnd] = [this.#starts[i]!, this.#ends[i]!];
    if (blockEnd < end) return this.#to(blockEnd + 1);
    const pieces: [number, number][] = [];
    if (blockStart < start) pieces.push([blockStart, start - 1]);
    if (end < blockEnd) pieces.push([end + 1, blockEnd]);
    this.#replace(i, ...pieces);
    return undefined;
  }

  /** Replaces block `i` with the given spans. */
  #replace(i: number, ...spans: [number, number][]): void {
    this.#starts.splice(i, 1, ...spans.map(([s]) => s));
    this.#ends.splice(i, 1, ...spans.map(([, e]) => e));
    this.#sizes.splice(i, 1, ...spans.map(([s, e]) => e - s + 1));
  }

  #indexAt(v: number): number {
    let lo = 0;
    let hi = this.#starts.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      if (v < this.#starts[mid]!) hi = mid - 1;
      else if (v > this.#ends[mid]!) lo = mid + 1;
      else return mid;
    }
    return -1;
  }
}

/**
 * Free blocks as BigInt ranges, built with `normalizeRanges` and `subtractRanges`. For pools that span more
 * than 2^53 addresses, where offsets do not fit in a number.
 */
export class RangeFreeList implements FreeList {
  readonly total: bigint;
  readonly #usable: readonly Range[];
  #blocks: Range[] = [];
  #sizes: bigint[] = [];

  constructor(allocatable: readonly Range[], reserved: readonly Range[]) {
    this.#usable = subtractRanges(allocatable, normalizeRanges(reserved));
    this.#set(this.#usable);
    this.total = this.available();
  }

  get count(): number {
    return this.#blocks.length;
  }

  #set(blocks: readonly Range[]): void {
    this.#blocks = [...blocks];
    this.#sizes = blocks.map(rangeSize);
  }

  available(): bigint {
    let sum = 0n;
    for (const size of this.#sizes) sum += size;
    return sum;
  }

  largest(): bigint {
    let largest = 0n;
    for (const size of this.#sizes) if (size > largest) largest = size;
    return largest;
  }

  blocks(): Range[] {
    return [...this.#blocks];
  }

  rebuild(allocations: readonly Range[] | OffsetRanges): void {
    const ranges = isOffsetRanges(allocations) ? toRanges(allocations) : allocations;
    this.#set(subtractRanges(this.#usable, normalizeRanges(ranges)));
  }

  takeBestFit(n: bigint): bigint | undefined {
    // Written out again rather than shared with the offset list, to keep each loop seeing one type.
    const sizes = this.#sizes;
    let i = -1;
    for (let k = 0; k < sizes.length; k++) {
      if (sizes[k]! >= n && (i < 0 || sizes[k]! < sizes[i]!)) {
        i = k;
        if (sizes[k] === n) break;
      }
    }
    if (i < 0) return undefined;
    const block = this.#blocks[i]!;
    this.#replace(i, block.start + n <= block.end ? [{ start: block.start + n, end: block.end }] : []);
    return block.start;
  }

  take(r: Range): bigint | undefined {
    const i = this.#blocks.findIndex((b) => b.start <= r.start && r.start <= b.end);
    if (i < 0) return r.start;
    const block = this.#blocks[i]!;
    if (block.end < r.end) return block.end + 1n;
    const pieces: Range[] = [];
    if (block.start < r.start) pieces.push({ start: block.start, end: r.start - 1n });
    if (r.end < block.end) pieces.push({ start: r.end + 1n, end: block.end });
    this.#replace(i, pieces);
    return undefined;
  }

  #replace(i: number, pieces: Range[]): void {
    this.#blocks.splice(i, 1, ...pieces);
    this.#sizes.splice(i, 1, ...pieces.map(rangeSize));
  }
}
