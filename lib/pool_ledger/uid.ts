/**
 * IPAllocation UIDs as the pool ledger stores them. The API server gives every object a lowercase UUID; its 128
 * bits take 22 URL-safe base64 characters instead of 36, which is most of what lets a pool record 20,000 grants.
 * Any other UID (test fixtures, another API server) is stored as it is.
 *
 * @module
 */
import { FNV_OFFSET_32, FNV_PRIME_32 } from "../hash/mod.ts";

/** Starts a UUID token: 22 base64url characters follow. */
export const UUID_MARK = ":";
/** Starts a literal token: the UID follows as it is. */
export const LITERAL_MARK = "=";

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const ALPHABET = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
const HEX_DIGITS = "0123456789abcdef";
const UUID_CODE = UUID_MARK.charCodeAt(0);
const LITERAL_CODE = LITERAL_MARK.charCodeAt(0);
const DASH = 45;

/** Character code -> value for base64url (-1 elsewhere). */
const B64_VALUE = (() => {
  const t = new Int8Array(128).fill(-1);
  for (let i = 0; i < ALPHABET.length; i++) t[ALPHABET.charCodeAt(i)] = i;
  return t;
})();
/** Character code -> value for lowercase hex (-1 elsewhere, and -1 * 4096 so that an OR of values goes negative). */
const HEX_VALUE = (() => {
  const t = new Int32Array(128).fill(-1 << 12);
  for (let i = 0; i < 16; i++) t[HEX_DIGITS.charCodeAt(i)] = i;
  return t;
})();
/** 6 bits -> the character code of their base64url digit. */
const CODE = Uint16Array.from(ALPHABET, (c) => c.charCodeAt(0));
/** Scratch space of {@linkcode uidToken}: the 11 twelve-bit groups of a UUID. */
const GROUPS = new Int32Array(11);
/** 12 bits -> three hex digits. */
const HEX3 = Array.from({ length: 4096 }, (_, n) => n.toString(16).padStart(3, "0"));
/** Where the 32 hex digits of a canonical UUID are. */
const HEX_AT = [
  0,
  1,
  2,
  3,
  4,
  5,
  6,
  7,
  9,
  10,
  11,
  12,
  14,
  15,
  16,
  17,
  19,
  20,
  21,
  22,
  24,
  25,
  26,
  27,
  28,
  29,
  30,
  31,
  32,
  33,
  34,
  35,
];

/**
 * The token of a UID: `:` and 22 base64url characters for a canonical lowercase UUID, `=` and the UID otherwise.
 * Table lookups and one string: no bytes, no regex.
 *
 * @example
 * ```ts
 * uidToken("0b6e5a4c-3f1d-4c2a-9e8b-7a6f5e4d3c2b"); // ":C25aTD8dTCqei3pvXk08Kw"
 * uidToken("uid-a1");                               // "=uid-a1"
 * ```
 */
export function uidToken(uid: string): string {
  if (
    uid.length !== 36 || uid.charCodeAt(8) !== DASH || uid.charCodeAt(13) !== DASH ||
    uid.charCodeAt(18) !== DASH || uid.charCodeAt(23) !== DASH
  ) return LITERAL_MARK + uid;
  // Three hex digits are 12 bits, two base64url digits: 30 digits make 20, the last two (8 bits) 2 more.
  let bad = 0;
  for (let k = 0; k < 10; k++) bad |= GROUPS[k] = twelve(uid, 3 * k);
  bad |= GROUPS[10] = (nibble(uid, 30) << 8) | (nibble(uid, 31) << 4);
  if (bad < 0) return LITERAL_MARK + uid;
  // One string from 23 codes, each argument written out: no intermediate string or array for the collector.
  return String.fromCharCode(
    UUID_CODE,
    hi(0),
    lo(0),
    hi(1),
    lo(1),
    hi(2),
    lo(2),
    hi(3),
    lo(3),
    hi(4),
    lo(4),
    hi(5),
    lo(5),
    hi(6),
    lo(6),
    hi(7),
    lo(7),
    hi(8),
    lo(8),
    hi(9),
    lo(9),
    hi(10),
    lo(10),
  );
}

/** The base64url code of the high six bits of group `k`. */
function hi(k: number): number {
  return CODE[GROUPS[k]! >> 6]!;
}

/** The base64url code of the low six bits of group `k`. */
function lo(k: number): number {
  return CODE[GROUPS[k]! & 63]!;
}

/** Twelve bits: the `i`th to `i + 2`th hex digits of a UUID (negative when one is not a hex digit). */
function twelve(uid: string, i: number): number {
  return (nibble(uid, i) << 8) | (nibble(uid, i + 1) << 4) | nibble(uid, i + 2);
}

/** The value of the `i`th hex digit of a UUID, or a large negative number when it is not a lowercase hex digit. */
function nibble(uid: string, i: number): number {
  const c = uid.charCodeAt(HEX_AT[i]!);
  return c < 128 ? HEX_VALUE[c]! : -1 << 12;
}

/**
 * Whether `token.slice(at)` is a well-formed token: a UUID token of exactly 22 base64url characters whose unused
 * low bits are zero (so that each UUID has one token), or a literal token that is not a canonical UUID.
 */
export function isToken(token: string, at = 0): boolean {
  return tokenHash(token, at) >= 0;
}

/**
 * A 31-bit hash of the token `token.slice(at)` (FNV-1a over the characters after the mark), or -1 when it is not
 * a well-formed token ({@linkcode isToken}). One pass both checks and hashes, and a number hashes faster than a
 * fresh string: the ledger indexes its grants by it.
 */
export function tokenHash(token: string, at = 0): number {
  const n = token.length;
  const mark = token.charCodeAt(at);
  let h = FNV_OFFSET_32 | 0;
  if (mark === UUID_CODE) {
    if (n !== at + 23) return -1;
    let bad = 0;
    for (let i = at + 1; i < n; i++) {
      const c = token.charCodeAt(i);
      bad |= c < 128 ? B64_VALUE[c]! : -1;
      h = Math.imul(h ^ c, FNV_PRIME_32);
    }
    return bad < 0 || (B64_VALUE[token.charCodeAt(n - 1)]! & 15) !== 0 ? -1 : h >>> 1;
  }
  if (mark !== LITERAL_CODE || n <= at + 1) return -1;
  for (let i = at + 1; i < n; i++) h = Math.imul(h ^ token.charCodeAt(i), FNV_PRIME_32);
  return n - at === 37 && UUID.test(token.slice(at + 1)) ? -1 : h >>> 1;
}

/**
 * The UID of a token, or `undefined` when it is not a well-formed one ({@linkcode isToken}).
 *
 * @example
 * ```ts
 * tokenUid(":C25aTD8dTCqei3pvXk08Kw"); // "0b6e5a4c-3f1d-4c2a-9e8b-7a6f5e4d3c2b"
 * tokenUid("=uid-a1");                 // "uid-a1"
 * ```
 */
export function tokenUid(token: string): string | undefined {
  if (!isToken(token)) return undefined;
  if (token.charCodeAt(0) === LITERAL_CODE) return token.slice(1);
  let hex = "";
  for (let i = 1; i < 21; i += 2) {
    hex += HEX3[(B64_VALUE[token.charCodeAt(i)]! << 6) | B64_VALUE[token.charCodeAt(i + 1)]!];
  }
  hex += HEX3[(B64_VALUE[token.charCodeAt(21)]! << 6) | B64_VALUE[token.charCodeAt(22)]!]!.slice(0, 2);
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}
