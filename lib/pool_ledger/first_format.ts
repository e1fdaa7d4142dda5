/**
 * The first ledger format (`status.grants`, versions up to 0.1): a map from IPAllocation UID to
 * `<first address>+<count>@<RFC 3339 time>`. It is read once, when a pool written by an older version is synced,
 * and rewritten as `status.ledger` ({@link ./ledger.ts}). `deno task ledger --v1` writes it again for a
 * downgrade. It costs about 1 µs per grant to read (generic address parsing, BigInt, time checks) and 70–130
 * bytes per grant to store, plus as much again in `managedFields`, which lists every key of a map.
 *
 * @module
 */
import { type Family, formatAddress, maxAddress, parseAddress, type Range, rangeSize } from "../ipam/mod.ts";
import { formatTime, parseTime } from "../time/mod.ts";

/** One grant: an IPAllocation UID holds `range` since `grantedAt` (RFC 3339). */
export interface Grant {
  readonly uid: string;
  readonly family: Family;
  readonly range: Range;
  readonly grantedAt: string;
}

/**
 * Encodes a grant's value in the first format: `<first address>+<count>@<RFC 3339 time>`.
 *
 * @example
 * ```ts
 * encodeGrantV1(4, { start: 170393856n, end: 170393863n }, new Date("2026-11-21T09:00:00Z"));
 * // "10.40.1.0+8@2026-11-21T09:00:00Z"
 * ```
 */
export function encodeGrantV1(family: Family, range: Range, at: Date | string): string {
  const time = typeof at === "string" ? at : formatTime(at);
  return `${formatAddress(family, range.start)}+${rangeSize(range)}@${time}`;
}

const MAX_ADDRESS = { 4: maxAddress(4), 6: maxAddress(6) } as const;
const GRANT = /^([0-9A-Fa-f.:]+)\+([1-9][0-9]*)@(.+)$/;

/**
 * Decodes a grant value of the first format, or returns `undefined` when it is not one. `validTimes` memoises
 * time checks across one ledger, where most grants share a handful of timestamps.
 */
export function decodeGrantV1(
  value: unknown,
  validTimes: Map<string, boolean> = new Map(),
): { family: Family; range: Range; grantedAt: string } | undefined {
  if (typeof value !== "string") return undefined;
  const m = GRANT.exec(value);
  if (!m) return undefined;
  const start = parseAddress(m[1]!);
  let timeOk = validTimes.get(m[3]!);
  if (timeOk === undefined) validTimes.set(m[3]!, timeOk = parseTime(m[3]!) !== undefined);
  if (!start || !timeOk) return undefined;
  const end = start.value + BigInt(m[2]!) - 1n;
  if (end > MAX_ADDRESS[start.family]) return undefined;
  return { family: start.family, range: { start: start.value, end }, grantedAt: m[3]! };
}

/** A first-format ledger read back: grants in address order, or the keys that could not be read. */
export type LedgerReadV1 = { ok: true; grants: Grant[] } | { ok: false; unreadable: string[] };

/** Reads a first-format `status.grants`. Anything unreadable is reported, never dropped. */
export function readLedgerV1(value: unknown): LedgerReadV1 {
  if (value === undefined || value === null) return { ok: true, grants: [] };
  if (typeof value !== "object" || Array.isArray(value)) return { ok: false, unreadable: ["(not a map)"] };
  const grants: Grant[] = [];
  const unreadable: string[] = [];
  const validTimes = new Map<string, boolean>();
  for (const [uid, raw] of Object.entries(value)) {
    const g = decodeGrantV1(raw, validTimes);
    if (g) grants.push({ uid, ...g });
    else unreadable.push(uid);
  }
  if (unreadable.length) return { ok: false, unreadable };
  return { ok: true, grants: sortGrants(grants) };
}

/** Grants in address order (then UID), the order both formats are written in. */
export function sortGrants(grants: readonly Grant[]): Grant[] {
  return [...grants].sort((a, b) =>
    a.range.start < b.range.start
      ? -1
      : a.range.start > b.range.start
      ? 1
      : a.uid < b.uid
      ? -1
      : a.uid > b.uid
      ? 1
      : 0
  );
}

/** Writes a first-format ledger map, keys in address order. */
export function writeLedgerV1(grants: readonly Grant[]): Record<string, string> {
  return Object.fromEntries(
    sortGrants(grants).map((g) => [g.uid, encodeGrantV1(g.family, g.range, g.grantedAt)]),
  );
}
