/**
 * Reading a NetworkPool's status in either ledger format: `status.ledger` (the current one) or the first format
 * `status.grants` (migrated when read), one grant without decoding the rest, and every holder.
 *
 * @module
 */
import type { Address, Family, Range } from "../ipam/mod.ts";
import { parseAddress } from "../ipam/mod.ts";
import { parseTime } from "../time/mod.ts";
import { tokenUid, uidToken } from "./uid.ts";
import { decodeGrantV1, readLedgerV1 } from "./first_format.ts";
import { type DecodedGrant, decodeRecord, encodeRecord, parseRecord, timeToken } from "./record.ts";
import { decodeRecords, LEDGER_VERSION, type LedgerRead, PoolLedger, type StoredLedger } from "./ledger.ts";

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
 * A grant of a pool's status to another holder than `uid` that shares an address with `range`, if any: the first
 * in the ledger's order. First-format ledgers are read too. Records that do not read are passed over (the pool
 * says they are unreadable, and grants nothing until they are fixed).
 */
export function grantOverlapping(
  status: Readonly<Record<string, unknown>>,
  family: Family,
  range: Range,
  uid: string,
): { readonly holder: string; readonly range: Range } | undefined {
  const stored = status.ledger as Partial<StoredLedger> | null | undefined;
  const own = uidToken(uid);
  if (stored && typeof stored === "object" && Array.isArray(stored.grants)) {
    const base = typeof stored.base === "string" ? parseAddress(stored.base) : undefined;
    if (!base || base.family !== family) return undefined;
    for (const record of stored.grants) {
      const p = typeof record === "string" ? parseRecord(record) : undefined;
      if (!p || record.slice(p.tokenAt) === own) continue;
      const start = base.value + p.offset;
      const end = start + p.count - 1n;
      if (start <= range.end && range.start <= end) {
        return {
          holder: tokenUid(record.slice(p.tokenAt)) ?? record.slice(p.tokenAt),
          range: { start, end },
        };
      }
    }
    return undefined;
  }
  const grants = status.grants;
  if (!grants || typeof grants !== "object" || Array.isArray(grants)) return undefined;
  for (const [holder, value] of Object.entries(grants)) {
    const g = holder === uid ? undefined : decodeGrantV1(value);
    if (g && g.family === family && g.range.start <= range.end && range.start <= g.range.end) {
      return { holder, range: g.range };
    }
  }
  return undefined;
}
