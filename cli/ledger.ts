/**
 * `kubectl butler ledger`: a NetworkPool's ledger for people (what `tools/ledger.ts` did): a table of its grants
 * in address order, or JSON, or (`--v1`) the status patch that writes it in the first format for a downgrade.
 * Pure: pool objects in, text and errors out.
 *
 * @module
 */
import { describeLedger, downgradePatch, ledgerJson, ledgerTable } from "../lib/pool_ledger/mod.ts";

/** A NetworkPool, or a List of them, as read from the API or a file. */
export interface LedgerSource {
  kind?: string;
  metadata?: { name?: string; namespace?: string };
  status?: unknown;
  items?: LedgerSource[];
}

/** What to print of each ledger. */
export type LedgerFormat = "table" | "json" | "v1";

/**
 * Each pool's ledger in `format`, and a message per pool whose ledger cannot be read (or, for `v1`, written in
 * the first format).
 *
 * @example
 * ```ts
 * const { out, errors } = ledgerReport([pool], "table");
 * // out: "NetworkPool butler-system/lab-pool: 3 grant(s)\nFIRST ...\n\n"
 * ```
 */
export function ledgerReport(
  sources: readonly LedgerSource[],
  format: LedgerFormat,
): { out: string; errors: string[] } {
  const pools = sources.flatMap((d) => (Array.isArray(d.items) ? d.items : [d]));
  let out = "";
  const errors: string[] = [];
  for (const pool of pools) {
    const name = `${pool.metadata?.namespace ?? ""}/${pool.metadata?.name ?? "?"}`;
    const d = describeLedger(pool.status);
    if (!d.ok) {
      errors.push(`NetworkPool ${name}: ${d.message}`);
      continue;
    }
    if (format === "v1") {
      const p = downgradePatch(d.ledger);
      if (p.ok) out += `${JSON.stringify(p.patch)}\n`;
      else errors.push(`NetworkPool ${name}: ${p.message}`);
    } else if (format === "json") {
      out += `${JSON.stringify({ pool: name, grants: ledgerJson(d.ledger) }, null, 2)}\n`;
    } else {
      out += `NetworkPool ${name}: ${d.ledger.size} grant(s)\n${ledgerTable(d.ledger)}\n\n`;
    }
  }
  return { out, errors };
}
