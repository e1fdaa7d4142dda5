import { type Family, familyName, formatAddress, parseAddress } from "./address.ts";
import { type AllocationResult, MESSAGES, refuse } from "./errors.ts";
import {
  formatSpan,
  intersectRanges,
  normalizeRanges,
  type Range,
  subtractRanges,
  totalSize,
} from "./range.ts";

/** What a pool is made of. Allocatable ranges must be sorted and disjoint (see `readPoolSpec`). */
export interface PoolModel {
  readonly family: Family;
  /** Where grants may be made: the tenant range(s), or the whole CIDR. */
  readonly allocatable: readonly Range[];
  /** Never granted; only the parts inside `allocatable` reduce capacity. */
  readonly reserved: readonly Range[];
  /** Existing grants. Sorted input is cheapest (the NetworkPool ledger is kept sorted). */
  readonly allocations: readonly Range[];
}

/** Capacity figures of a pool, as upstream defines them. */
export interface Capacity {
  /** Addresses in the allocatable ranges that are not reserved. */
  readonly total: bigint;
  /** Of those, addresses held by allocations. */
  readonly allocated: bigint;
  /** `total - allocated`, which is also the sum of the free blocks. */
  readonly available: bigint;
  readonly allocationCount: number;
  readonly largestFreeBlock: bigint;
  readonly freeBlockCount: number;
  /** `100 - largest*100/totalFree` (integer division); 0 with zero or one free block. */
  readonly fragmentationPercent: number;
}

/**
 * Offsets from the pool's first address are plain numbers when every offset fits in 2^53 (all IPv4 pools, IPv6
 * up to a /75) and BigInt otherwise. The algorithm is written once over `N`: comparisons and `+`/`-` behave the
 * same on both; only the literals and conversions differ.
 */
type N = number | bigint;
interface Arith<T extends N> {
  readonly zero: T;
  readonly one: T;
  /** Offset of an absolute address from the pool's base. */
  from(address: bigint): T;
  /** Absolute address of an offset. */
  to(offset: T): bigint;
  /** A count as `T`, and back. */
  count(n: bigint): T;
  big(n: T): bigint;
}
const SMALL_SPAN = BigInt(Number.MAX_SAFE_INTEGER);

/**
 * Number offsets. Below 2^53 (every IPv4 address) `Number(v) - base` is exact and allocates no BigInt;
 * otherwise the subtraction is done in BigInt first.
 */
function smallArith(base: bigint): Arith<number> {
  const exact = base + SMALL_SPAN <= SMALL_SPAN * 2n;
  const b = Number(base);
  return {
    zero: 0,
    one: 1,
    from: exact ? (v) => Number(v) - b : (v) => Number(v - base),
    to: (o) => BigInt(o) + base,
    count: (n) => Number(n),
    big: (n) => BigInt(n),
  };
}

function largeArith(base: bigint): Arith<bigint> {
  return { zero: 0n, one: 1n, from: (v) => v - base, to: (o) => o + base, count: (n) => n, big: (n) => n };
}

const add = <T extends N>(a: T, b: T): T => ((a as number) + (b as number)) as T;
const sub = <T extends N>(a: T, b: T): T => ((a as number) - (b as number)) as T;

interface Span<T extends N> {
  start: T;
  end: T;
}
/** A free block, its size, and the allocatable range it lies in (blocks never span two ranges). */
interface Block<T extends N> extends Span<T> {
  size: T;
  readonly range: number;
}

function rangeList(family: Family, ranges: readonly Range[], indices: readonly number[]): string {
  return indices.map((i) => `ranges[${i}] ${formatSpan(family, ranges[i]!)}`).join(", ");
}

/**
 * The best-fit allocator over intervals. Its cost follows the number of allocations and reserved ranges, never
 * the pool size, so an IPv4 /8 or an IPv6 /48 costs the same as a /24 with as many grants.
 *
 * @example
 * ```ts
 * const a = Allocator.create({ family: 4, allocatable: [cidr("10.0.0.0/24")], reserved: [], allocations: [] });
 * a.allocate(8); // { ok: true, value: { start: 167772160n, end: 167772167n } }
 * ```
 */
export class Allocator {
  readonly family: Family;
  readonly allocatable: readonly Range[];
  readonly #reserved: readonly Range[];
  readonly #allocations: Range[];
  readonly #core: Core<N>;

  private constructor(model: PoolModel) {
    this.family = model.family;
    this.allocatable = model.allocatable;
    this.#reserved = model.reserved;
    this.#allocations = [...model.allocations];
    const first = model.allocatable[0]?.start ?? 0n;
    const last = model.allocatable[model.allocatable.length - 1]?.end ?? 0n;
    const arith = (last - first <= SMALL_SPAN ? smallArith(first) : largeArith(first)) as Arith<N>;
    this.#core = new Core(arith, model.allocatable, model.reserved);
    this.#core.rebuild(this.#allocations);
  }

  /** Builds an allocator; the free list is computed once here, in one sweep. */
  static create(model: PoolModel): Allocator {
    return new Allocator(model);
  }

  /** Free blocks in address order. */
  freeBlocks(): Range[] {
    return this.#core.blocks.map((b) => this.#core.toRange(b));
  }

  /** Existing grants, in the order they were added. */
  allocations(): readonly Range[] {
    return this.#allocations;
  }

  /**
   * Best-fit: the smallest free block with at least `count` addresses, the lowest such block on ties, taken
   * from its start.
   */
  allocate(count: number | bigint): AllocationResult<Range> {
    const n = BigInt(count);
    if (n <= 0n) return refuse("invalid-count", MESSAGES.invalidCount);
    const core = this.#core;
    if (n > core.arith.big(core.largest())) return refuse("exhausted", MESSAGES.exhausted);
    const granted = core.takeBestFit(core.arith.count(n));
    return this.#grant(core.toRange(granted));
  }

  #grant(r: Range): AllocationResult<Range> {
    this.#allocations.push(r);
    return { ok: true, value: r };
  }

  /**
   * Grants exactly `start..end` (address strings), with upstream's checks and messages in upstream's order.
   */
  pin(startText: string, endText: string): AllocationResult<Range> {
    const a = parseAddress(startText);
    const b = parseAddress(endText);
    if (!a || !b) return refuse("invalid-address", `invalid pinned range IPs: ${startText}-${endText}`);
    if (a.family !== this.family || b.family !== this.family) {
      return refuse(
        "invalid-address",
        `invalid pinned range IPs: ${startText}-${endText} (the pool is ${familyName(this.family)})`,
      );
    }
    if (a.value > b.value) {
      return refuse(
        "reversed",
        `${MESSAGES.invalidRange}: pinned start ${startText} is after end ${endText}`,
      );
    }
    return this.pinRange({ start: a.value, end: b.value });
  }

  /** {@linkcode Allocator.pin} for a range already parsed. */
  pinRange(r: Range): AllocationResult<Range> {
    const span = formatSpan(this.family, r);
    const inside = this.allocatable.findIndex((x) => r.start >= x.start && r.end <= x.end);
    if (inside < 0) {
      const touched = this.allocatable.flatMap((x, i) => (x.start <= r.end && r.start <= x.end ? [i] : []));
      if (touched.length > 1) {
        return refuse(
          "straddle",
          `${MESSAGES.outOfRange}: pinned range ${span} straddles allocatable ranges; must fit entirely within one range. Overlapping ranges: ${
            rangeList(this.family, this.allocatable, touched)
          }`,
        );
      }
      const all = this.allocatable.map((_, i) => i);
      return refuse(
        "outside",
        `${MESSAGES.outOfRange}: pinned range ${span} is outside allocatable ranges [${
          rangeList(this.family, this.allocatable, all)
        }]`,
      );
    }
    const conflict = this.#core.take(this.#core.fromRange(r));
    if (conflict !== undefined) {
      return refuse(
        "conflict",
        `pinned range conflicts at IP ${
          formatAddress(this.family, conflict)
        } (reserved or already allocated)`,
      );
    }
    return this.#grant({ start: r.start, end: r.end });
  }

  /** Returns a grant to the pool. Returns false when no grant has exactly that range. */
  release(r: Range): boolean {
    const i = this.#allocations.findIndex((x) => x.start === r.start && x.end === r.end);
    if (i < 0) return false;
    this.#allocations.splice(i, 1);
    this.#core.rebuild(this.#allocations);
    return true;
  }

  /** Capacity figures, computed from the free list. */
  capacity(): Capacity {
    const core = this.#core;
    const free = core.arith.big(core.available);
    const largest = core.arith.big(core.largest());
    const blocks = core.blocks.length;
    return {
      total: core.arith.big(core.total),
      allocated: core.arith.big(core.total) - free,
      available: free,
      allocationCount: this.#allocations.length,
      largestFreeBlock: largest,
      freeBlockCount: blocks,
      fragmentationPercent: blocks <= 1 || free === 0n ? 0 : 100 - Number((largest * 100n) / free),
    };
  }

  /** Addresses of grants in usable space, computed independently of the free list (a cross-check for tests). */
  allocatedInUsable(): bigint {
    const usable = subtractRanges(this.allocatable, normalizeRanges(this.#reserved));
    return totalSize(intersectRanges(normalizeRanges(this.#allocations), usable));
  }
}

/** The free list over offsets, generic in the number representation. */
class Core<T extends N> {
  blocks: Block<T>[] = [];
  available: T;
  readonly total: T;
  readonly #ranges: readonly Span<T>[];
  readonly #reserved: readonly Span<T>[];

  constructor(
    readonly arith: Arith<T>,
    allocatable: readonly Range[],
    reserved: readonly Range[],
  ) {
    this.#ranges = allocatable.map((r) => this.fromRange(r));
    this.#reserved = sortedSpans(reserved.map((r) => this.fromRange(r)));
    this.available = arith.zero;
    this.total = sumSizes(sweep(this.#ranges, this.#reserved, arith), arith);
  }

  fromRange(r: Range): Span<T> {
    return { start: this.arith.from(r.start), end: this.arith.from(r.end) };
  }

  toRange(s: Span<T>): Range {
    return { start: this.arith.to(s.start), end: this.arith.to(s.end) };
  }

  rebuild(allocations: readonly Range[]): void {
    const spans: Span<T>[] = new Array(allocations.length);
    for (let i = 0; i < allocations.length; i++) spans[i] = this.fromRange(allocations[i]!);
    this.blocks = sweep(this.#ranges, mergeSorted(this.#reserved, sortedSpans(spans)), this.arith);
    this.available = sumSizes(this.blocks, this.arith);
  }

  largest(): T {
    let largest = this.arith.zero;
    for (const b of this.blocks) if (b.size > largest) largest = b.size;
    return largest;
  }

  /** Removes `n` addresses from the start of the best-fitting block; the caller checked one fits. */
  takeBestFit(n: T): Span<T> {
    let best = -1;
    let bestSize = this.arith.zero;
    const blocks = this.blocks;
    for (let i = 0; i < blocks.length; i++) {
      const size = blocks[i]!.size;
      if (size >= n && (best < 0 || size < bestSize)) {
        best = i;
        bestSize = size;
        if (size === n) break;
      }
    }
    const block = blocks[best]!;
    const granted = { start: block.start, end: sub(add(block.start, n), this.arith.one) };
    if (bestSize === n) blocks.splice(best, 1);
    else {
      block.start = add(granted.end, this.arith.one);
      block.size = sub(block.size, n);
    }
    this.available = sub(this.available, n);
    return granted;
  }

  /** Removes exactly `r` from the free list, or returns the first address of `r` that is not free. */
  take(r: Span<T>): bigint | undefined {
    const i = this.#indexAt(r.start);
    const block = i < 0 ? undefined : this.blocks[i]!;
    if (!block || block.end < r.end) {
      const at = block ? add(block.end, this.arith.one) : r.start;
      return this.arith.to(at);
    }
    const one = this.arith.one;
    const pieces: Block<T>[] = [];
    if (block.start < r.start) pieces.push(makeBlock(block.start, sub(r.start, one), block.range, one));
    if (r.end < block.end) pieces.push(makeBlock(add(r.end, one), block.end, block.range, one));
    this.blocks.splice(i, 1, ...pieces);
    this.available = sub(this.available, add(sub(r.end, r.start), one));
    return undefined;
  }

  #indexAt(v: T): number {
    let lo = 0;
    let hi = this.blocks.length - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >> 1;
      const b = this.blocks[mid]!;
      if (v < b.start) hi = mid - 1;
      else if (v > b.end) lo = mid + 1;
      else return mid;
    }
    return -1;
  }
}

function makeBlock<T extends N>(start: T, end: T, range: number, one: T): Block<T> {
  return { start, end, size: add(sub(end, start), one), range };
}

/** Sorts by start unless already sorted (the common case costs one pass). */
function sortedSpans<T extends N>(spans: Span<T>[]): Span<T>[] {
  for (let i = 1; i < spans.length; i++) {
    if (spans[i]!.start < spans[i - 1]!.start) {
      return spans.sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
    }
  }
  return spans;
}

/** Merges two start-sorted lists (which may overlap) into one start-sorted list, preallocated. */
function mergeSorted<T extends N>(a: readonly Span<T>[], b: Span<T>[]): Span<T>[] {
  if (!a.length) return b;
  const out: Span<T>[] = new Array(a.length + b.length);
  let i = 0;
  let j = 0;
  for (let k = 0; k < out.length; k++) {
    out[k] = j >= b.length || (i < a.length && a[i]!.start <= b[j]!.start) ? a[i++]! : b[j++]!;
  }
  return out;
}

/** Free blocks: each allocatable range minus the used spans (start-sorted, possibly overlapping), one pass. */
function sweep<T extends N>(
  ranges: readonly Span<T>[],
  used: readonly Span<T>[],
  arith: Arith<T>,
): Block<T>[] {
  const blocks: Block<T>[] = [];
  const one = arith.one;
  let j = 0;
  ranges.forEach((r, range) => {
    let cursor = r.start;
    while (j > 0 && used[j - 1]!.end >= r.start) j--;
    for (; j < used.length && used[j]!.start <= r.end; j++) {
      const u = used[j]!;
      if (u.end < cursor) continue;
      if (u.start > cursor) blocks.push(makeBlock(cursor, sub(u.start, one), range, one));
      if (u.end >= r.end) {
        cursor = r.end;
        return;
      }
      cursor = add(u.end, one);
    }
    blocks.push(makeBlock(cursor, r.end, range, one));
  });
  return blocks;
}

function sumSizes<T extends N>(blocks: readonly Block<T>[], arith: Arith<T>): T {
  let n = arith.zero;
  for (const b of blocks) n = add(n, b.size);
  return n;
}
