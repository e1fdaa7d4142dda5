import { type Family, FAMILY_BITS, familyName, formatAddress, parseAddress } from "./address.ts";

/** An inclusive range of addresses as integers: `start <= end`. */
export interface Range {
  readonly start: bigint;
  readonly end: bigint;
}

/** A range with its family, as parsed from text. */
export interface FamilyRange extends Range {
  readonly family: Family;
}

/** A parsed CIDR block. */
export interface Cidr extends FamilyRange {
  readonly prefix: number;
}

/** The outcome of parsing: a value or a message saying what is wrong. */
export type Parsed<T> = { ok: true; value: T } | { ok: false; message: string };

/** Number of addresses in a range. */
export function rangeSize(r: Range): bigint {
  return r.end - r.start + 1n;
}

/**
 * Parses CIDR notation; host bits are masked (`10.0.0.5/24` is `10.0.0.0/24`).
 *
 * @example
 * ```ts
 * parseCidr("10.40.0.0/21"); // { ok: true, value: { family: 4, prefix: 21, start: ..., end: ... } }
 * parseCidr("10.40.0.0/33"); // { ok: false, message: 'invalid CIDR notation: "10.40.0.0/33"' }
 * ```
 */
export function parseCidr(text: string): Parsed<Cidr> {
  const bad = { ok: false as const, message: `invalid CIDR notation: ${JSON.stringify(text)}` };
  const slash = text.indexOf("/");
  if (slash < 0) return bad;
  const addr = parseAddress(text.slice(0, slash));
  const prefixText = text.slice(slash + 1);
  if (!addr || !/^\d{1,3}$/.test(prefixText)) return bad;
  const prefix = Number(prefixText);
  const bits = FAMILY_BITS[addr.family];
  if (prefix > bits) return bad;
  const hostBits = BigInt(bits - prefix);
  const start = (addr.value >> hostBits) << hostBits;
  return { ok: true, value: { family: addr.family, prefix, start, end: start + (1n << hostBits) - 1n } };
}

/**
 * Parses `start-end` (split at the first `-`, spaces trimmed), a CIDR, or a single address, as upstream's
 * `ParseIPRange` does.
 *
 * @example
 * ```ts
 * parseRange("10.40.2.0-10.40.2.7"); // 8 addresses
 * parseRange("10.40.2.0/29");        // the same 8 addresses
 * parseRange("10.40.2.9");           // one address
 * ```
 */
export function parseRange(text: string): Parsed<FamilyRange> {
  if (text.includes("/")) return parseCidr(text.trim());
  const dash = text.indexOf("-");
  if (dash < 0) {
    const a = parseAddress(text.trim());
    return a
      ? { ok: true, value: { family: a.family, start: a.value, end: a.value } }
      : { ok: false, message: `invalid IP address: ${JSON.stringify(text)}` };
  }
  const [s, e] = [text.slice(0, dash).trim(), text.slice(dash + 1).trim()];
  const a = parseAddress(s);
  const b = parseAddress(e);
  if (!a || !b) return { ok: false, message: `invalid IP range: ${JSON.stringify(text)}` };
  if (a.family !== b.family) {
    return {
      ok: false,
      message: `invalid IP range: ${JSON.stringify(text)} mixes ${familyName(a.family)} and ${
        familyName(b.family)
      }`,
    };
  }
  if (a.value > b.value) return { ok: false, message: `invalid IP range: start is after end: ${s}-${e}` };
  return { ok: true, value: { family: a.family, start: a.value, end: b.value } };
}

/**
 * Formats a range: CIDR notation when its size is a power of two and its start is aligned to it, otherwise
 * `start-end`. A single address is a /32 (or /128).
 *
 * @example
 * ```ts
 * formatRange(4, parseRange("10.40.1.0-10.40.1.7").value);  // "10.40.1.0/29"
 * formatRange(4, parseRange("10.40.1.3-10.40.1.10").value); // "10.40.1.3-10.40.1.10"
 * ```
 */
export function formatRange(family: Family, r: Range): string {
  const size = rangeSize(r);
  const isPowerOfTwo = (size & (size - 1n)) === 0n;
  if (isPowerOfTwo && r.start % size === 0n) {
    const log2 = size.toString(2).length - 1;
    return `${formatAddress(family, r.start)}/${FAMILY_BITS[family] - log2}`;
  }
  return `${formatAddress(family, r.start)}-${formatAddress(family, r.end)}`;
}

/** `start-end` always, as MetalLB address lists and messages use. */
export function formatSpan(family: Family, r: Range): string {
  return `${formatAddress(family, r.start)}-${formatAddress(family, r.end)}`;
}

/** The most addresses {@linkcode enumerateRange} lists. */
export const MAX_ENUMERATION = 65_536;

/**
 * Lists every address of a range, at most {@linkcode MAX_ENUMERATION} (exactly 65,536 is allowed).
 *
 * @example
 * ```ts
 * enumerateRange(4, { start: 1n, end: 2n }); // { ok: true, value: ["0.0.0.1", "0.0.0.2"] }
 * ```
 */
export function enumerateRange(family: Family, r: Range): Parsed<string[]> {
  const size = rangeSize(r);
  if (size > BigInt(MAX_ENUMERATION)) {
    return { ok: false, message: `range too large to enumerate: ${size} IPs` };
  }
  const out: string[] = [];
  for (let v = r.start; v <= r.end; v++) out.push(formatAddress(family, v));
  return { ok: true, value: out };
}

/** Sorts ranges by start and merges overlapping and adjacent ones. */
export function normalizeRanges(ranges: readonly Range[]): Range[] {
  const sorted = [...ranges].sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
  const out: { start: bigint; end: bigint }[] = [];
  for (const r of sorted) {
    const last = out[out.length - 1];
    if (last && r.start <= last.end + 1n) {
      if (r.end > last.end) last.end = r.end;
    } else {
      out.push({ start: r.start, end: r.end });
    }
  }
  return out;
}

/** `base` minus `cut`; both sorted and disjoint (as from {@linkcode normalizeRanges}). */
export function subtractRanges(base: readonly Range[], cut: readonly Range[]): Range[] {
  const out: Range[] = [];
  let j = 0;
  for (const b of base) {
    let start = b.start;
    while (j < cut.length && cut[j]!.end < start) j++;
    let k = j;
    while (k < cut.length && cut[k]!.start <= b.end) {
      const c = cut[k]!;
      if (c.start > start) out.push({ start, end: c.start - 1n });
      if (c.end + 1n > start) start = c.end + 1n;
      if (start > b.end) break;
      k++;
    }
    if (start <= b.end) out.push({ start, end: b.end });
  }
  return out;
}

/** `a` intersected with `b`; both sorted and disjoint. */
export function intersectRanges(a: readonly Range[], b: readonly Range[]): Range[] {
  const out: Range[] = [];
  let i = 0;
  let j = 0;
  while (i < a.length && j < b.length) {
    const x = a[i]!;
    const y = b[j]!;
    const start = x.start > y.start ? x.start : y.start;
    const end = x.end < y.end ? x.end : y.end;
    if (start <= end) out.push({ start, end });
    if (x.end < y.end) i++;
    else j++;
  }
  return out;
}

/** Total number of addresses in a list of disjoint ranges. */
export function totalSize(ranges: readonly Range[]): bigint {
  let n = 0n;
  for (const r of ranges) n += rangeSize(r);
  return n;
}

/** Whether `inner` lies entirely within `outer`. */
export function contains(outer: Range, inner: Range): boolean {
  return inner.start >= outer.start && inner.end <= outer.end;
}

/** Whether two ranges share at least one address. */
export function overlaps(a: Range, b: Range): boolean {
  return a.start <= b.end && b.start <= a.end;
}

/**
 * Ranges as exact number offsets from `base`, in parallel columns: `base + starts[i] .. base + ends[i]`. The
 * NetworkPool ledger is decoded to this form so that IPv4 grants (and IPv6 grants near their ledger's base) stay
 * plain numbers from the ledger to the allocator: no BigInt per grant. Every offset must be an integer of at most
 * 2^53 in magnitude.
 */
export interface OffsetRanges {
  readonly base: bigint;
  readonly starts: readonly number[];
  readonly ends: readonly number[];
}

/** Whether allocations are given as {@linkcode OffsetRanges} rather than an array of ranges. */
export function isOffsetRanges(value: readonly Range[] | OffsetRanges): value is OffsetRanges {
  return !Array.isArray(value);
}

/**
 * The ranges of {@linkcode OffsetRanges} as BigInt ranges, in the same order.
 *
 * @example
 * ```ts
 * toRanges({ base: 10n, starts: [0, 8], ends: [7, 8] }); // [{ start: 10n, end: 17n }, { start: 18n, end: 18n }]
 * ```
 */
export function toRanges(o: OffsetRanges): Range[] {
  return o.starts.map((s, i) => ({ start: o.base + BigInt(s), end: o.base + BigInt(o.ends[i]!) }));
}
