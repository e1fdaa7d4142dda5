import { type Family, familyName, formatAddress, parseAddress } from "./address.ts";
import { type AllocationResult, MESSAGES, refuse } from "./errors.ts";
import { createFreeList, type FreeList } from "./free_list.ts";
import {
  formatSpan,
  intersectRanges,
  isOffsetRanges,
  normalizeRanges,
  type OffsetRanges,
  type Range,
  subtractRanges,
  toRanges,
  totalSize,
} from "./range.ts";

/** What a pool is made of. Allocatable ranges must be sorted and disjoint (see `readPoolSpec`). */
export interface PoolModel {
  readonly family: Family;
  /** Where grants may be made: the tenant range(s), or the whole CIDR. */
  readonly allocatable: readonly Range[];
  /** Never granted; only the parts inside `allocatable` reduce capacity. */
  readonly reserved: readonly Range[];
  /**
   * Existing grants. Sorted input is cheapest (the NetworkPool ledger is kept sorted), and number offsets
   * ({@linkcode OffsetRanges}, the form the ledger decodes to) cheaper than BigInt ranges.
   */
  readonly allocations: readonly Range[] | OffsetRanges;
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
  /** The model's grants, never copied: building an allocator converts nothing. */
  #given: readonly Range[] | OffsetRanges;
  /** Grants made since. */
  #added: Range[] = [];
  readonly #free: FreeList;

  private constructor(model: PoolModel) {
    this.family = model.family;
    this.allocatable = model.allocatable;
    this.#reserved = model.reserved;
    this.#given = model.allocations;
    this.#free = createFreeList(model.allocatable, model.reserved);
    this.#free.rebuild(this.#given);
  }

  /** Builds an allocator; the free list is computed once here, in one sweep. */
  static create(model: PoolModel): Allocator {
    return new Allocator(model);
  }

  /** Free blocks in address order. */
  freeBlocks(): Range[] {
    return this.#free.blocks();
  }

  /** Existing grants, in the order they were added. */
  allocations(): Range[] {
    const given = this.#given;
    return [...(isOffsetRanges(given) ? toRanges(given) : given), ...this.#added];
  }

  /**
   * Best-fit: the smallest free block with at least `count` addresses, the lowest such block on ties, taken
   * from its start.
   */
  allocate(count: number | bigint): AllocationResult<Range> {
    const n = BigInt(count);
    if (n <= 0n) return refuse("invalid-count", MESSAGES.invalidCount);
    const start = this.#free.takeBestFit(n);
    if (start === undefined) return refuse("exhausted", MESSAGES.exhausted);
    return this.#grant({ start, end: start + n - 1n });
  }

  #grant(r: Range): AllocationResult<Range> {
    this.#added.push(r);
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
    const conflict = this.#free.take(r);
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
    const all = this.allocations();
    const i = all.findIndex((x) => x.start === r.start && x.end === r.end);
    if (i < 0) return false;
    all.splice(i, 1);
    this.#given = all;
    this.#added = [];
    this.#free.rebuild(all);
    return true;
  }

  /** Capacity figures, computed from the free list. */
  capacity(): Capacity {
    const list = this.#free;
    const free = list.available();
    const total = list.total;
    const largest = list.largest();
    const blocks = list.count;
    return {
      total,
      allocated: total - free,
      available: free,
      allocationCount: this.#added.length +
        (isOffsetRanges(this.#given) ? this.#given.starts.length : this.#given.length),
      largestFreeBlock: largest,
      freeBlockCount: blocks,
      fragmentationPercent: blocks <= 1 || free === 0n ? 0 : 100 - Number((largest * 100n) / free),
    };
  }

  /** Addresses of grants in usable space, computed independently of the free list (a cross-check for tests). */
  allocatedInUsable(): bigint {
    const usable = subtractRanges(this.allocatable, normalizeRanges(this.#reserved));
    return totalSize(intersectRanges(normalizeRanges(this.allocations()), usable));
  }
}
