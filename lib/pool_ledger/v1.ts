import {
  type Family,
  formatAddress,
  maxAddress,
  parseAddress,
  type Range,
  rangeSize,
} from "../../lib/ipam/mod.ts";
import { formatTime, parseTime } from "../../lib/time/mod.ts";

/**
 * The most grants one NetworkPool records. With `<start>+<count>@<time>` entries keyed by UID this keeps the
 * ledger under ~620 KiB even for IPv6 (~400 KiB for IPv4), well inside the 1.5 MiB object limit. Past it,
 * new allocations fail with {@linkcode LEDGER_FULL_MESSAGE}.
 */
export const MAX_GRANTS = 5000;

/** The most failures recorded in status (each message at most {@linkcode MAX_FAILURE_MESSAGE} characters). */
export const MAX_FAILURES = 256;
/** Longest failure message recorded. */
export const MAX_FAILURE_MESSAGE = 256;

/** Why an allocation is refused once the ledger is full. */
export const LEDGER_FULL_MESSAGE =
  `pool ledger is full: a NetworkPool records at most ${MAX_GRANTS} grants; add another pool to the ProviderConfig`;

/** One grant: an IPAllocation UID holds `start..end` since `grantedAt`. */
export interface Grant {
  readonly uid: string;
  readonly family: Family;
  readonly range: Range;
  readonly grantedAt: string;
  /** The entry as read from status, written back unchanged. */
  readonly encoded?: string;
}

/**
 * Encodes a grant's value: `<first address>+<count>@<RFC 3339 time>`.
 *
 * @example
 * ```ts
 * encodeGrant(4, { start: 170393856n, end: 170393863n }, new Date("2026-11-21T09:00:00Z"));
 * // "10.40.1.0+8@2026-11-21T09:00:00Z"
 * ```
 */
export function encodeGrant(family: Family, range: Range, at: Date | string): string {
  const time = typeof at === "string" ? at : formatTime(at);
  return `${formatAddress(family, range.start)}+${rangeSize(range)}@${time}`;
}

const MAX_ADDRESS = { 4: maxAddress(4), 6: maxAddress(6) } as const;
const GRANT = /^([0-9A-Fa-f.:]+)\+([1-9][0-9]*)@(.+)$/;

/**
 * Decodes a grant value, or returns `undefined` when it is not one. `validTimes` memoises time checks across
 * one ledger, where most grants share a handful of timestamps.
 */
export function decodeGrant(
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

/** The ledger read back from status: grants in address order, or the keys that could not be read. */
export type LedgerRead = { ok: true; grants: Grant[] } | { ok: false; unreadable: string[] };

/** Reads `status.grants`. Anything unreadable is reported, never dropped. */
export function readLedger(value: unknown): LedgerRead {
  if (value === undefined || value === null) return { ok: true, grants: [] };
  if (typeof value !== "object" || Array.isArray(value)) return { ok: false, unreadable: ["(not a map)"] };
  const grants: Grant[] = [];
  const unreadable: string[] = [];
  const validTimes = new Map<string, boolean>();
  for (const [uid, raw] of Object.entries(value)) {
    const g = decodeGrant(raw, validTimes);
    if (g) {
      grants.push({ uid, family: g.family, range: g.range, grantedAt: g.grantedAt, encoded: raw as string });
    } else unreadable.push(uid);
  }
  if (unreadable.length) return { ok: false, unreadable };
  return { ok: true, grants: sortGrants(grants) };
}

/** Grants in address order (then UID), the order the ledger is written in. */
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

/** Writes the ledger map, keys in address order. */
export function writeLedger(grants: readonly Grant[]): Record<string, string> {
  return Object.fromEntries(
    sortGrants(grants).map((g) => [g.uid, encodeGrant(g.family, g.range, g.grantedAt)]),
  );
}
