/**
 * A pool's ledger for people: the table `deno task ledger` prints, and the first format again for a downgrade.
 *
 * @module
 */
import { formatAddress, rangeSize } from "../ipam/mod.ts";
import { PoolLedger } from "./ledger.ts";
import { readLedger } from "./status.ts";
import { encodeGrantV1 } from "./first_format.ts";

/** The most grants the first format (version 0.1) records. */
export const MAX_GRANTS_V1 = 5000;

/** A pool's ledger read for display, or why it cannot be. */
export type Described = { ok: true; ledger: PoolLedger } | { ok: false; message: string };

/** Reads the ledger of a NetworkPool's status, in either format, with every UID token checked. */
export function describeLedger(status: unknown): Described {
  const s = typeof status === "object" && status !== null && !Array.isArray(status)
    ? status as Record<string, unknown>
    : {};
  const read = readLedger(s);
  if (!read.ok) return { ok: false, message: `${read.field} cannot be read: ${read.unreadable.join(", ")}` };
  return { ok: true, ledger: read.ledger };
}

/**
 * The grants as a table: one line per grant in address order, columns aligned.
 *
 * @example
 * ```ts
 * const d = describeLedger(pool.status);
 * if (d.ok) console.log(ledgerTable(d.ledger));
 * // FIRST      LAST       COUNT  GRANTED AT            IPALLOCATION UID
 * // 10.40.1.0  10.40.1.7  8      2026-11-21T09:00:00Z  0b6e5a4c-3f1d-4c2a-9e8b-7a6f5e4d3c2b
 * ```
 */
export function ledgerTable(ledger: PoolLedger): string {
  const rows = [["FIRST", "LAST", "COUNT", "GRANTED AT", "IPALLOCATION UID"]];
  for (const g of ledger.decode()) {
    rows.push([
      formatAddress(g.family, g.range.start),
      formatAddress(g.family, g.range.end),
      String(rangeSize(g.range)),
      g.grantedAt,
      g.uid,
    ]);
  }
  const widths = rows[0]!.map((_, c) => Math.max(...rows.map((r) => r[c]!.length)));
  return rows.map((r) => r.map((v, c) => (c === r.length - 1 ? v : v.padEnd(widths[c]!))).join("  ")).join(
    "\n",
  );
}

/** The grants as JSON-ready objects: addresses as text, counts as decimal strings. */
export function ledgerJson(
  ledger: PoolLedger,
): { uid: string; first: string; last: string; count: string; grantedAt: string }[] {
  return ledger.decode().map((g) => ({
    uid: g.uid,
    first: formatAddress(g.family, g.range.start),
    last: formatAddress(g.family, g.range.end),
    count: String(rangeSize(g.range)),
    grantedAt: g.grantedAt,
  }));
}

/**
 * The status patch that writes the ledger in the first format (`status.grants`) and removes `status.ledger`, for
 * going back to version 0.1, which reads only that. Refused above the 5,000 grants the first format records.
 */
export function downgradePatch(
  ledger: PoolLedger,
): { ok: true; patch: unknown } | { ok: false; message: string } {
  if (ledger.size > MAX_GRANTS_V1) {
    return {
      ok: false,
      message:
        `${ledger.size} grants: version 0.1 records at most ${MAX_GRANTS_V1}; split the pool before a downgrade`,
    };
  }
  const grants = Object.fromEntries(
    ledger.decode().map((g) => [g.uid, encodeGrantV1(g.family, g.range, g.grantedAt)]),
  );
  return { ok: true, patch: { status: { grants, ledger: null } } };
}
