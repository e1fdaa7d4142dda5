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
 * A record is `<offset>+<count>@<time><uid token>`: the first address minus `base` and the number of addresses
 * in lowercase hex, the grant time in base-36 seconds since 1970 (a leading `-` before), and the IPAllocation UID
 * as a token (`uid.ts`). Every field has one spelling, so a record read and written back is the same string, and
 * kept records are written back as they were read. `deno task ledger` prints a ledger as a table.
 *
 * Reading is the hot part of a pool sync, so records are scanned by character code into number columns (offsets
 * stay exact numbers up to 2^52); only ledgers whose offsets are larger (IPv6 pools larger than a /76) are read
 * through BigInt, by the reference parser that also checks the fast one.
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
  parseAddress,
  type Range,
  rangeSize,
} from "../ipam/mod.ts";
import { formatTime, parseTime } from "../time/mod.ts";
import { isToken, tokenHash, tokenUid, uidToken, UUID_MARK } from "./uid.ts";
import { decodeGrantV1, readLedgerV1 } from "./v1.ts";

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

/** One grant, decoded for people and for the IPAllocation it belongs to. */
export interface DecodedGrant {
  readonly uid: string;
  readonly family: Family;
  readonly range: Range;
  /** RFC 3339, whole seconds. */
  readonly grantedAt: string;
}

/** Grant times from 0000-01-01T00:00:00Z to 9999-12-31T23:59:59Z, the four-digit years of RFC 3339. */
const MIN_SECONDS = -62167219200;
const MAX_SECONDS = 253402300799;
/** Offsets and counts of up to 13 hex digits (< 2^52) are read as numbers; their sum stays exact. */
const NARROW_DIGITS = 13;

const UUID_CODE = UUID_MARK.charCodeAt(0);
const PLUS = 43;
const AT = 64;
const MINUS = 45;
const ZERO = 48;
const HEX = table("0123456789abcdef");
const B36 = table("0123456789abcdefghijklmnopqrstuvwxyz");

function table(digits: string): Int8Array {
  const t = new Int8Array(128).fill(-1);
  for (let i = 0; i < digits.length; i++) t[digits.charCodeAt(i)] = i;
  return t;
}

/**
 * The time field of a record: whole seconds since 1970 in base 36.
 *
 * @example
 * ```ts
 * timeToken(new Date("2026-11-21T09:00:00Z")); // "touh00"
 * ```
 */
export function timeToken(at: Date): string {
  const s = Math.floor(at.getTime() / 1000);
  return s < 0 ? `-${(-s).toString(36)}` : s.toString(36);
}

/**
 * One record, for a grant of `range` at `time` (a {@linkcode timeToken}) to the UID whose token is `token`.
 *
 * @example
 * ```ts
 * encodeRecord(0x0a100000n, { start: 0x0a100010n, end: 0x0a100017n }, "touh00", ":C25aTD8dTCqei3pvXk08Kw");
 * // "10+8@touh00:C25aTD8dTCqei3pvXk08Kw"
 * ```
 */
export function encodeRecord(base: bigint, range: Range, time: string, token: string): string {
  return `${(range.start - base).toString(16)}+${rangeSize(range).toString(16)}@${time}${token}`;
}

/** The parts of a record, as the reference parser reads them. */
export interface RecordParts {
  readonly offset: bigint;
  readonly count: bigint;
  readonly seconds: number;
  /** Where the UID token starts. */
  readonly tokenAt: number;
}

const RECORD = /^(0|[1-9a-f][0-9a-f]*)\+([1-9a-f][0-9a-f]*)@(0|-?[1-9a-z][0-9a-z]{0,7})(?=[:=])/;

/**
 * The reference parser of one record: a regular expression and BigInt. It reads every record the fast scanner
 * reads, with the same result (a property test checks it), and the large ones the scanner leaves to it.
 */
export function parseRecord(record: string): RecordParts | undefined {
  const m = RECORD.exec(record);
  if (!m) return undefined;
  const seconds = parseInt(m[3]!, 36);
  const tokenAt = m[0].length;
  if (seconds < MIN_SECONDS || seconds > MAX_SECONDS || !isToken(record, tokenAt)) return undefined;
  return { offset: BigInt(`0x${m[1]}`), count: BigInt(`0x${m[2]}`), seconds, tokenAt };
}

/** What the scanner found in one record: its offsets and where its token starts, or why it stopped. */
class Scan {
  start = 0;
  end = 0;
  tokenAt = 0;
  hash = 0;
}
const OK = 0;
const UNREADABLE = 1;
const TOO_LARGE = 2;
const UNSORTED = 3;

/**
 * Scans one record by character code into `out`: {@linkcode OK}, {@linkcode UNREADABLE}, or
 * {@linkcode TOO_LARGE} when an offset or count has more than 13 hex digits (the reference parser reads those).
 */
function scanRecord(record: string, out: Scan): number {
  const n = record.length;
  let i = 0;
  let offset = 0;
  if (record.charCodeAt(0) === ZERO) i = 1;
  else {
    for (; i < n; i++) {
      const c = record.charCodeAt(i);
      const v = c < 128 ? HEX[c]! : -1;
      if (v < 0) break;
      offset = offset * 16 + v;
    }
  }
  if (i === 0 || record.charCodeAt(i) !== PLUS) return UNREADABLE;
  if (i > NARROW_DIGITS) return TOO_LARGE;
  const countAt = ++i;
  if (record.charCodeAt(countAt) === ZERO) return UNREADABLE;
  let count = 0;
  for (; i < n; i++) {
    const c = record.charCodeAt(i);
    const v = c < 128 ? HEX[c]! : -1;
    if (v < 0) break;
    count = count * 16 + v;
  }
  if (i === countAt || record.charCodeAt(i) !== AT) return UNREADABLE;
  if (i - countAt > NARROW_DIGITS) return TOO_LARGE;
  const negative = record.charCodeAt(++i) === MINUS;
  if (negative) i++;
  const timeAt = i;
  let seconds = 0;
  for (; i < n && i - timeAt <= 8; i++) {
    const c = record.charCodeAt(i);
    const v = c < 128 ? B36[c]! : -1;
    if (v < 0) break;
    seconds = seconds * 36 + v;
  }
  const digits = i - timeAt;
  if (digits === 0 || digits > 8 || (record.charCodeAt(timeAt) === ZERO && (digits > 1 || negative))) {
    return UNREADABLE;
  }
  if (negative ? -seconds < MIN_SECONDS : seconds > MAX_SECONDS) return UNREADABLE;
  const hash = tokenHash(record, i);
  if (hash < 0) return UNREADABLE;
  out.hash = hash;
  out.start = offset;
  out.end = offset + count - 1;
  out.tokenAt = i;
  return OK;
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
  withGrants(added: readonly { range: Range; token: string }[], at: Date, family: Family): StoredLedger {
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
      .map((a) => ({ offset: a.range.start - base, record: encodeRecord(base, a.range, time, a.token) }))
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

/** A record as JSON takes its length plus quotes and a comma; a literal UID may need escapes. */
function recordBytes(record: string): number {
  return /^[\x20-\x7e]*$/.test(record) && !/["\\]/.test(record)
    ? record.length + 3
    : new TextEncoder().encode(JSON.stringify(record)).length + 1;
}

/**
 * Decodes one record of a ledger whose offsets count from `base`, or `undefined` when it is not a valid record
 * for that family.
 */
export function decodeRecord(family: Family, base: bigint, record: string): DecodedGrant | undefined {
  const p = parseRecord(record);
  if (!p) return undefined;
  const start = base + p.offset;
  const end = start + p.count - 1n;
  const uid = tokenUid(record.slice(p.tokenAt));
  if (uid === undefined || end > maxAddress(family)) return undefined;
  return { uid, family, range: { start, end }, grantedAt: formatTime(new Date(p.seconds * 1000)) };
}

/**
 * Scans every record into the columns and lists the unreadable ones in `unreadable`: {@linkcode OK} when the
 * records are in order, {@linkcode UNSORTED} when not, {@linkcode TOO_LARGE} as soon as one needs BigInt. A
 * function of its own so that V8 optimises the loop as a whole rather than on stack replacement.
 */
function scanAll(
  records: readonly unknown[],
  limit: number,
  starts: number[],
  ends: number[],
  tokenAt: Int32Array,
  hashes: Int32Array,
  unreadable: number[],
): number {
  const scan = new Scan();
  let sorted = true;
  for (let i = 0; i < records.length; i++) {
    const record = records[i];
    const code = typeof record === "string" ? scanRecord(record, scan) : UNREADABLE;
    if (code === TOO_LARGE) return TOO_LARGE;
    if (code === UNREADABLE || scan.end > limit) {
      unreadable.push(i);
      continue;
    }
    starts[i] = scan.start;
    ends[i] = scan.end;
    tokenAt[i] = scan.tokenAt;
    hashes[i] = scan.hash;
    if (i > 0 && scan.start < starts[i - 1]!) sorted = false;
  }
  return sorted ? OK : UNSORTED;
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
 * Grant positions by UID token: open addressing over typed arrays, keyed by {@linkcode tokenHash} and confirmed by
 * comparing the tokens. A `Map` of 10,000 freshly sliced strings cost more than reading the whole ledger.
 */
class TokenIndex {
  readonly #records: readonly string[];
  readonly #tokenAt: ArrayLike<number>;
  /** Position + 1 of the token in each slot; 0 when empty. */
  readonly #slots: Int32Array;
  readonly #slotHashes: Int32Array;
  readonly #mask: number;

  private constructor(records: readonly string[], tokenAt: ArrayLike<number>) {
    this.#records = records;
    this.#tokenAt = tokenAt;
    let size = 16;
    while (size < records.length * 2) size *= 2;
    this.#slots = new Int32Array(size);
    this.#slotHashes = new Int32Array(size);
    this.#mask = size - 1;
  }

  /**
   * The index of the tokens at `tokenAt` in `records` (hashed already or not), or the positions of tokens seen
   * before.
   */
  static build(
    records: readonly string[],
    tokenAt: ArrayLike<number>,
    hashes?: Int32Array,
  ): TokenIndex | number[] {
    const index = new TokenIndex(records, tokenAt);
    const repeats: number[] = [];
    for (let i = 0; i < records.length; i++) {
      const hash = hashes ? hashes[i]! : tokenHash(records[i]!, tokenAt[i]!);
      if (!index.#insert(i, hash)) repeats.push(i);
    }
    return repeats.length ? repeats : index;
  }

  /** Whether the token of record `i` is `token` (no slice: tokens end their records). */
  #is(i: number, token: string): boolean {
    const record = this.#records[i]!;
    return record.length - this.#tokenAt[i]! === token.length && record.endsWith(token);
  }

  /** Adds position `i`; false when its token is there already. */
  #insert(i: number, hash: number): boolean {
    for (let s = hash & this.#mask;; s = (s + 1) & this.#mask) {
      const at = this.#slots[s]!;
      if (at === 0) {
        this.#slots[s] = i + 1;
        this.#slotHashes[s] = hash;
        return true;
      }
      if (this.#slotHashes[s] === hash && this.#is(at - 1, this.#records[i]!.slice(this.#tokenAt[i]!))) {
        return false;
      }
    }
  }

  /** The position of `token`, or -1. */
  find(token: string): number {
    const hash = tokenHash(token);
    if (hash < 0) return -1;
    for (let s = hash & this.#mask;; s = (s + 1) & this.#mask) {
      const at = this.#slots[s]!;
      if (at === 0) return -1;
      if (this.#slotHashes[s] === hash && this.#is(at - 1, token)) return at - 1;
    }
  }
}

/**
 * Reads the ledger of a pool's status: `status.ledger`, or a first-format `status.grants` (migrated: the records
 * are built from it, and the next write replaces it). `preferredBase` (the pool's first address) is where offsets
 * of a new ledger count from. Anything unreadable is reported, never dropped.
 */
export function readLedger(status: Readonly<Record<string, unknown>>, preferredBase?: Address): LedgerRead {
  const stored = status.ledger;
  const v1 = status.grants;
  const v1Empty = v1 === undefined || v1 === null ||
    (typeof v1 === "object" && !Array.isArray(v1) && Object.keys(v1).length === 0);
  if (stored === undefined || stored === null) return migrate(v1, preferredBase);
  if (!v1Empty) {
    return {
      ok: false,
      field: "status.grants",
      unreadable: ["(set beside status.ledger, which replaced it)"],
    };
  }
  const problem = (why: string): LedgerRead => ({ ok: false, field: "status.ledger", unreadable: [why] });
  if (typeof stored !== "object" || Array.isArray(stored)) return problem("(not an object)");
  const { version, base, grants } = stored as Record<string, unknown>;
  if (version !== LEDGER_VERSION) return problem(`(version ${JSON.stringify(version)} is not understood)`);
  if (!Array.isArray(grants)) return problem("(grants is not a list)");
  const address = typeof base === "string" ? parseAddress(base) : undefined;
  if (base !== undefined && !address) return problem("(base is not an address)");
  if (!grants.length) {
    return { ok: true, ledger: PoolLedger.empty(preferredBase ?? address) };
  }
  if (!address) return problem("(grants without a base)");
  const read = decodeRecords(address, grants);
  if ("unreadable" in read) {
    return { ok: false, field: "status.ledger", unreadable: read.unreadable.map((i) => `grants[${i}]`) };
  }
  return { ok: true, ledger: read };
}

function migrate(v1: unknown, preferredBase: Address | undefined): LedgerRead {
  const old = readLedgerV1(v1);
  if (!old.ok) return { ok: false, field: "status.grants", unreadable: old.unreadable };
  if (!old.grants.length) return { ok: true, ledger: PoolLedger.empty(preferredBase) };
  const family = old.grants[0]!.family;
  const other = old.grants.filter((g) => g.family !== family);
  if (other.length) {
    return {
      ok: false,
      field: "status.grants",
      unreadable: other.map((g) => `${g.uid} (IPv${g.family} beside IPv${family} grants)`),
    };
  }
  const lowest = old.grants[0]!.range.start;
  const base = preferredBase?.family === family && preferredBase.value <= lowest
    ? preferredBase
    : { family, value: lowest };
  const records = old.grants.map((g) =>
    encodeRecord(base.value, g.range, timeToken(parseTime(g.grantedAt)!), uidToken(g.uid))
  );
  const read = decodeRecords(base, records);
  if ("unreadable" in read) {
    return { ok: false, field: "status.grants", unreadable: read.unreadable.map((i) => old.grants[i]!.uid) };
  }
  return { ok: true, ledger: read };
}

/**
 * The grant of one IPAllocation in a pool's status, read without decoding the rest of the ledger: the
 * IPAllocation hook's projection. First-format ledgers are read too, until the pool migrates.
 */
export function findGrant(status: Readonly<Record<string, unknown>>, uid: string): DecodedGrant | undefined {
  const stored = status.ledger as Partial<StoredLedger> | null | undefined;
  if (
    stored && typeof stored === "object" && stored.version === LEDGER_VERSION && Array.isArray(stored.grants)
  ) {
    const base = typeof stored.base === "string" ? parseAddress(stored.base) : undefined;
    if (!base) return undefined;
    const token = uidToken(uid);
    for (const record of stored.grants) {
      if (typeof record !== "string" || !record.endsWith(token)) continue;
      const g = decodeRecord(base.family, base.value, record);
      if (g?.uid === uid) return g;
    }
    return undefined;
  }
  const grants = status.grants as Record<string, unknown> | null | undefined;
  const value = grants && typeof grants === "object" && Object.hasOwn(grants, uid) ? grants[uid] : undefined;
  const g = decodeGrantV1(value);
  return g && { uid, ...g };
}

/**
 * Who holds addresses in a pool's status: the UID of every grant, in either format. A record whose UID cannot
 * be read is named by the record itself, so that nothing holding addresses goes unnamed.
 */
export function ledgerHolders(status: Readonly<Record<string, unknown>> | null | undefined): string[] {
  const stored = status?.ledger as Partial<StoredLedger> | null | undefined;
  const records = stored && typeof stored === "object" && Array.isArray(stored.grants) ? stored.grants : [];
  const fromLedger = records.map((record) => {
    const p = typeof record === "string" ? parseRecord(record) : undefined;
    return (p && tokenUid(record.slice(p.tokenAt))) ?? String(record);
  });
  const v1 = status?.grants;
  const fromV1 = v1 && typeof v1 === "object" && !Array.isArray(v1) ? Object.keys(v1) : [];
  return [...fromLedger, ...fromV1];
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
