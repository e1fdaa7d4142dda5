/**
 * The NetworkPool ledger (`status.ledger`): every grant of the pool, one short record each, in address order.
 *
 * ```yaml
 * ledger:
 *   version: 2
 *   base: 10.16.0.0                      # offsets count from here
 *   grants:
 *     - 0+8@touh00:C25aTD8dTCqei3pvXk08Kw   # 10.16.0.0-10.16.0.7, granted at 2026-11-21T09:00:00Z
 * ```
 *
 * Each record is one grant (record.ts: `<offset>+<count>@<time><uid token>`); kept records are written back as
 * they were read. This module is the ledger as a whole: its bounds, the {@linkcode PoolLedger} a pool sync reads
 * and writes, and reading a list of records into one (scanned into number columns; offsets of 2^52 or more
 * through BigInt). Reading a pool's status in either format is status.ts; `deno task ledger` prints a ledger.
 *
 * @module
 */
import {
  type Address,
  type Family,
  formatAddress,
  isOffsetRanges,
  maxAddress,
  type OffsetRanges,
  type Range,
} from "../ipam/mod.ts";
import {
  type DecodedGrant,
  decodeRecord,
  encodeRecord,
  OK,
  parseRecord,
  recordBytes,
  scanAll,
  timeToken,
  TOO_LARGE,
  UUID_CODE,
} from "./record.ts";
import { TokenIndex } from "./token_index.ts";

/** The version of `status.ledger` this module writes. */
export const LEDGER_VERSION = 2;

/**
 * The most grants one NetworkPool records. With records of 35–50 bytes this keeps an IPv4 ledger under 1 MiB in
 * the worst case (see {@linkcode MAX_LEDGER_BYTES}), inside the 1.5 MiB object limit with room for the rest of the
 * object.
 */
export const MAX_GRANTS = 20_000;

/**
 * The most bytes `status.ledger.grants` may take as JSON. IPv4 ledgers never reach it before
 * {@linkcode MAX_GRANTS}; an IPv6 pool can, when its grants are scattered over a range larger than a /80 with
 * very large counts (every offset and count then takes 13 or more hex digits).
 */
export const MAX_LEDGER_BYTES = 1_048_576;

/** `status.ledger` as stored. */
export interface StoredLedger {
  readonly version: number;
  /** The address offsets count from; absent only while the ledger is empty and the pool's address unknown. */
  readonly base?: string;
  readonly grants: readonly string[];
}

/** A ledger that cannot be read, and why: the hook then keeps the pool's status as it is. */
export interface LedgerProblem {
  /** The status field at fault. */
  readonly field: "status.ledger" | "status.grants";
  /** The entries that cannot be read (keys, indices), or a single reason. */
  readonly unreadable: readonly string[];
}

/** The outcome of {@linkcode readLedger}. */
export type LedgerRead =
  | { readonly ok: true; readonly ledger: PoolLedger }
  | ({ readonly ok: false } & LedgerProblem);

/**
 * A decoded ledger: grants in address order, in columns. Immutable; {@linkcode PoolLedger.retain} and
 * {@linkcode PoolLedger.withGrants} build what the next status holds.
 */
export class PoolLedger {
  /** The family of `base`; `undefined` while the ledger is empty and the pool's address unknown. */
  readonly family: Family | undefined;
  readonly base: bigint | undefined;
  /** The records as read (or encoded), in address order. */
  readonly records: readonly string[];
  /** Where each record's UID token starts (tokens are the records' ends, sliced only when asked for). */
  readonly #tokenAt: ArrayLike<number>;
  #tokens: readonly string[] | undefined;
  /** Offsets of each grant's first and last address (number columns), or absolute ranges for large offsets. */
  readonly #ranges: OffsetRanges | readonly Range[];
  /** Position of each token; built when first asked for, or while reading (where it finds duplicates). */
  #index: TokenIndex | undefined;

  private constructor(
    base: Address | undefined,
    records: readonly string[],
    tokenAt: ArrayLike<number>,
    ranges: OffsetRanges | readonly Range[],
    index?: TokenIndex,
  ) {
    this.family = base?.family;
    this.base = base?.value;
    this.records = records;
    this.#tokenAt = tokenAt;
    this.#ranges = ranges;
    this.#index = index;
  }

  /** An empty ledger whose offsets will count from `base`. */
  static empty(base?: Address): PoolLedger {
    return new PoolLedger(base, [], [], { base: base?.value ?? 0n, starts: [], ends: [] });
  }

  /**
   * A ledger of records already known to be well-formed, sorted and of distinct tokens (see
   * {@linkcode decodeRecords}), with the index of their tokens if it was built.
   */
  static of(
    base: Address | undefined,
    records: readonly string[],
    tokenAt: ArrayLike<number>,
    ranges: OffsetRanges | readonly Range[],
    index?: TokenIndex,
  ): PoolLedger {
    return new PoolLedger(base, records, tokenAt, ranges, index);
  }

  /** Each record's UID token. */
  get tokens(): readonly string[] {
    this.#tokens ??= this.records.map((r, i) => r.slice(this.#tokenAt[i]!));
    return this.#tokens;
  }

  /** The position of the grant held by `token`, or -1. */
  indexOf(token: string): number {
    this.#index ??= TokenIndex.build(this.records, this.#tokenAt) as TokenIndex;
    return this.#index.find(token);
  }

  /** Number of grants. */
  get size(): number {
    return this.records.length;
  }

  /** The grants' ranges, in the form the allocator reads fastest. */
  ranges(): OffsetRanges | readonly Range[] {
    return this.#ranges;
  }

  /** JSON bytes of the records as `status.ledger.grants` (brackets, quotes and commas included). */
  bytes(): number {
    let n = 2;
    for (let i = 0; i < this.records.length; i++) {
      // Everything before a UUID token is hex, base 36 and punctuation: nothing to escape.
      n += this.records[i]!.charCodeAt(this.#tokenAt[i]!) === UUID_CODE
        ? this.records[i]!.length + 3
        : recordBytes(this.records[i]!);
    }
    return this.records.length ? n - 1 : n;
  }

  /** The grants `keep` accepts (given each one's position), in the same order. */
  retain(keep: (i: number) => boolean): PoolLedger {
    const kept: number[] = [];
    for (let i = 0; i < this.records.length; i++) if (keep(i)) kept.push(i);
    if (kept.length === this.records.length) return this;
    const pick = <T>(xs: ArrayLike<T>) => kept.map((i) => xs[i]!);
    const r = this.#ranges;
    const ranges = isOffsetRanges(r) ? { base: r.base, starts: pick(r.starts), ends: pick(r.ends) } : pick(r);
    return new PoolLedger(this.#address(), pick(this.records), pick(this.#tokenAt), ranges);
  }

  #address(): Address | undefined {
    return this.family === undefined ? undefined : { family: this.family, value: this.base! };
  }

  /**
   * The ledger with `added` grants of `family` made at `at`, as stored: records in address order, kept ones
   * unchanged. An empty ledger takes `family` and, unless its base is of that family and below the grants,
   * the lowest grant as its base; a grant below the base (the pool's CIDR moved down) rebases every record.
   */
  withGrants(
    added: readonly { range: Range; token: string; at?: Date }[],
    at: Date,
    family: Family,
  ): StoredLedger {
    if (!added.length) return this.toStatus();
    const lowest = added.reduce((m, a) => (a.range.start < m ? a.range.start : m), added[0]!.range.start);
    const sameFamily = this.family === family;
    if (!sameFamily && this.size) {
      throw new Error(`an IPv${this.family} ledger cannot hold IPv${family} grants`);
    }
    const base = sameFamily && this.base! <= lowest ? this.base! : lowest;
    const records = base === this.base ? this.records : this.#rebased(base);
    const time = timeToken(at);
    const fresh = added
      .map((a) => ({
        offset: a.range.start - base,
        record: encodeRecord(base, a.range, a.at ? timeToken(a.at) : time, a.token),
      }))
      .sort((a, b) => (a.offset < b.offset ? -1 : a.offset > b.offset ? 1 : 0));
    // Kept records are in order; each new one goes before the first kept record that starts after it.
    const starts = this.#offsetsFrom(base);
    const out = new Array<string>(records.length + fresh.length);
    let k = 0;
    let o = 0;
    for (const f of fresh) {
      const at = Number(f.offset);
      let lo = k;
      let hi = starts.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (starts[mid]! < at) lo = mid + 1;
        else hi = mid;
      }
      while (k < lo) out[o++] = records[k++]!;
      out[o++] = f.record;
    }
    while (k < records.length) out[o++] = records[k++]!;
    return this.#stored({ family, value: base }, out);
  }

  /** The ledger as stored, unchanged. */
  toStatus(): StoredLedger {
    return this.#stored(this.#address(), this.records);
  }

  /** The records with offsets counted from `base` (below the current base). */
  #rebased(base: bigint): string[] {
    return this.records.map((record) => {
      const offset = parseRecord(record)!.offset + this.base! - base;
      return offset.toString(16) + record.slice(record.indexOf("+"));
    });
  }

  /** First offsets of the grants from `base`, as numbers (exact below 2^53; only their order matters here). */
  #offsetsFrom(base: bigint): readonly number[] {
    const r = this.#ranges;
    if (isOffsetRanges(r) && r.base === base) return r.starts;
    const starts = isOffsetRanges(r) ? r.starts.map((s) => r.base + BigInt(s)) : r.map((x) => x.start);
    return starts.map((s) => Number(s - base));
  }

  #stored(base: Address | undefined, grants: readonly string[]): StoredLedger {
    return base === undefined
      ? { version: LEDGER_VERSION, grants }
      : { version: LEDGER_VERSION, base: formatAddress(base.family, base.value), grants };
  }

  /** Every grant decoded (UIDs, addresses, times), in address order. */
  decode(): DecodedGrant[] {
    return this.records.map((record) => decodeRecord(this.family!, this.base!, record)!);
  }
}

/**
 * Reads records (all of one ledger, offsets from `base`) into a {@linkcode PoolLedger}, or returns the indices of
 * those that cannot be read: malformed, past the family's last address, or a UID that holds two grants.
 */
export function decodeRecords(
  base: Address,
  records: readonly string[],
): PoolLedger | { unreadable: number[] } {
  const n = records.length;
  const limitBig = maxAddress(base.family) - base.value;
  const limit = limitBig < 2n ** 53n ? Number(limitBig) : Infinity;
  const starts = new Array<number>(n);
  const ends = new Array<number>(n);
  const tokenAt = new Int32Array(n);
  const hashes = new Int32Array(n);
  const unreadable: number[] = [];
  const found = scanAll(records, limit, starts, ends, tokenAt, hashes, unreadable);
  const wide = found === TOO_LARGE;
  const sorted = found === OK;
  if (wide) return decodeWide(base, records);
  if (unreadable.length) return { unreadable };
  const index = TokenIndex.build(records, tokenAt, hashes);
  if (Array.isArray(index)) return { unreadable: index };
  if (!sorted) {
    const token = (i: number) => records[i]!.slice(tokenAt[i]!);
    const order = starts.map((_, i) => i).sort((a, b) =>
      starts[a]! - starts[b]! || (token(a) < token(b) ? -1 : 1)
    );
    const pick = <T>(xs: ArrayLike<T>) => order.map((i) => xs[i]!);
    return PoolLedger.of(base, pick(records), pick(tokenAt), {
      base: base.value,
      starts: pick(starts),
      ends: pick(ends),
    });
  }
  return PoolLedger.of(base, records, tokenAt, { base: base.value, starts, ends }, index);
}

/** {@linkcode decodeRecords} through the reference parser, for ledgers with offsets or counts of 2^52 or more. */
function decodeWide(base: Address, records: readonly string[]): PoolLedger | { unreadable: number[] } {
  const max = maxAddress(base.family);
  const unreadable: number[] = [];
  const entries: { record: string; token: string; tokenAt: number; range: Range }[] = [];
  records.forEach((record, i) => {
    const p = typeof record === "string" ? parseRecord(record) : undefined;
    const start = base.value + (p?.offset ?? 0n);
    const end = start + (p?.count ?? 0n) - 1n;
    if (!p || end > max) return unreadable.push(i);
    entries.push({ record, token: record.slice(p.tokenAt), tokenAt: p.tokenAt, range: { start, end } });
  });
  if (unreadable.length) return { unreadable };
  const index = TokenIndex.build(entries.map((e) => e.record), entries.map((e) => e.tokenAt));
  if (Array.isArray(index)) return { unreadable: index };
  entries.sort((a, b) =>
    a.range.start < b.range.start ? -1 : a.range.start > b.range.start ? 1 : a.token < b.token ? -1 : 1
  );
  return PoolLedger.of(
    base,
    entries.map((e) => e.record),
    entries.map((e) => e.tokenAt),
    entries.map((e) => e.range),
  );
}

/**
 * The most JSON bytes the record of a grant of `count` addresses (unknown for a pinned range: as many as the
 * pool) can take in a ledger whose offsets count from `base`, in a pool whose last allocatable address is `last`.
 * Checked before a grant is made, so that a ledger never passes {@linkcode MAX_LEDGER_BYTES}.
 */
export function recordBound(
  base: bigint,
  last: bigint,
  count: bigint | undefined,
  at: Date,
  token: string,
): number {
  const offsetDigits = (last - base).toString(16).length;
  const countDigits = (count ?? last - base + 1n).toString(16).length;
  return offsetDigits + 1 + countDigits + 1 + timeToken(at).length + recordBytes(token);
}
