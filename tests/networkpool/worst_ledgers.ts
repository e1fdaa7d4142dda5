/**
 * The largest ledgers the tests measure, shared by the unit tier (tests/networkpool/ledger_test.ts) and the real API
 * server tier (tests/api/ledger.api.ts), so that both measure the same records.
 */
import type { Range } from "../../lib/ipam/mod.ts";
import { encodeRecord, MAX_GRANTS, timeToken, uidToken } from "../../lib/pool_ledger/mod.ts";

/**
 * The largest records an IPv4 pool can have, base 0.0.0.0: a /0, 20,000 grants spread evenly (8-digit offsets), as
 * large as 20,000 grants can be (5-digit counts), each at a different time after 2038 (7-digit times).
 */
export function worstIPv4Records(uid: (i: number) => string): string[] {
  const step = 2 ** 32 / MAX_GRANTS;
  return Array.from({ length: MAX_GRANTS }, (_, i) => {
    const start = BigInt(Math.floor(i * step));
    const end = start + BigInt(Math.floor(step / 2));
    return encodeRecord(
      0n,
      { start, end },
      timeToken(new Date(Date.UTC(2040, 0, 1) + i * 1000)),
      uidToken(uid(i)),
    );
  });
}

/** The base of the scattered IPv6 ledger: the /64 fd00:0:0:1::/64. */
export const SCATTERED_BASE = 0xfd000000000000010000000000000000n;

/** Grant `i` of the scattered IPv6 ledger: pinned 2^44 apart, 2^40 addresses each (11-digit offsets and counts). */
export function scatteredIPv6Range(i: number): Range {
  const start = SCATTERED_BASE + BigInt(i) * 2n ** 44n;
  return { start, end: start + 2n ** 40n - 1n };
}

/** The record of grant `i` of the scattered IPv6 ledger, granted at `at`. */
export function scatteredIPv6Record(i: number, at: Date, uid: (i: number) => string): string {
  return encodeRecord(SCATTERED_BASE, scatteredIPv6Range(i), timeToken(at), uidToken(uid(i)));
}
