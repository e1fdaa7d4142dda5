/**
 * One record of the NetworkPool ledger: `<offset>+<count>@<time><uid token>`, the first address minus the
 * ledger's base and the number of addresses in lowercase hex, the grant time in base-36 seconds since 1970 (a
 * leading `-` before), and the IPAllocation UID as a token (`uid.ts`). Every field has one spelling, so a record
 * read and written back is the same string.
 *
 * Two readers: the reference parser ({@linkcode parseRecord}, BigInt, for people and for offsets of 2^52 or more)
 * and the scanner ({@linkcode scanRecord}, by character code into numbers, the hot part of a pool sync), which the
 * property tests check against each other.
 *
 * @module
 */
import { type Family, maxAddress, type Range, rangeSize } from "../ipam/mod.ts";
import { formatTime } from "../time/mod.ts";
import { isToken, tokenHash, tokenUid, UUID_MARK } from "./uid.ts";

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

export const UUID_CODE = UUID_MARK.charCodeAt(0);
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
export class Scan {
  start = 0;
  end = 0;
  tokenAt = 0;
  hash = 0;
}
export const OK = 0;
export const UNREADABLE = 1;
export const TOO_LARGE = 2;
export const UNSORTED = 3;

/**
 * Scans one record by character code into `out`: {@linkcode OK}, {@linkcode UNREADABLE}, or
 * {@linkcode TOO_LARGE} when an offset or count has more than 13 hex digits (the reference parser reads those).
 */
export function scanRecord(record: string, out: Scan): number {
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

/** A record as JSON takes its length plus quotes and a comma; a literal UID may need escapes. */
export function recordBytes(record: string): number {
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
export function scanAll(
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
