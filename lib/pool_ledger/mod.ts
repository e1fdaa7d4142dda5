/**
 * The NetworkPool ledger: how a pool's grants are stored in its status (`status.ledger`), read at the speed a
 * pool sync needs, and migrated from the first format (`status.grants`). Read by the NetworkPool hook (the
 * only writer), the IPAllocation hook (its own grant), NetworkPool admission (who holds addresses) and
 * `deno task ledger`.
 *
 * @module
 */
export * from "./ledger.ts";
export * from "./record.ts";
export * from "./status.ts";
export * from "./uid.ts";
export * from "./first_format.ts";
export * from "./describe.ts";
