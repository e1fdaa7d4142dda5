/**
 * `npx -y deno@2.9.6 bench lib/pool_ledger/ledger_bench.ts`
 *
 * What a pool sync does with its ledger, from the status as parsed JSON to the status to write: read the ledger,
 * look up the new allocation's UID, build the allocator from the grants, make one best-fit allocation, write the
 * ledger with the new grant. Beside it, in the same run, the same with the first format (`status.grants`, the
 * baseline). Pools of 10,000 and 20,000 grants of 8 addresses with gaps, in a /12, UIDs as the API server writes
 * them.
 */
import { Allocator, type Range } from "../lib/ipam/mod.ts";
import {
  encodeGrantV1,
  encodeRecord,
  type Grant,
  readLedger,
  readLedgerV1,
  timeToken,
  uidToken,
  writeLedgerV1,
} from "../lib/pool_ledger/mod.ts";
import { RUNS, sized } from "./smoke.ts";

const BASE = 0x0a100000n; // 10.16.0.0/12
const POOL = {
  family: 4 as const,
  allocatable: [{ start: BASE, end: BASE + (1n << 20n) - 1n }],
  reserved: [],
};
const AT = new Date("2026-11-22T09:00:00Z");
const NEW_UID = "9b2f0c4e-1d3a-4e5b-8c7d-6e5f4a3b2c1d";

function statuses(n: number) {
  const records: string[] = [];
  const v1: Record<string, string> = {};
  for (let i = 0; i < n; i++) {
    const uid = `2d4c6e8f-0a1b-4c3d-9e5f-${i.toString(16).padStart(12, "0")}`;
    const start = BASE + BigInt(i) * 12n;
    const range = { start, end: start + 7n };
    const at = new Date(AT.getTime() - (n - i) * 1000);
    records.push(encodeRecord(BASE, range, timeToken(at), uidToken(uid)));
    v1[uid] = encodeGrantV1(4, range, at);
  }
  // As the hook receives them: parsed from JSON.
  return {
    v2: JSON.parse(JSON.stringify({ ledger: { version: 2, base: "10.16.0.0", grants: records } })),
    v1: JSON.parse(JSON.stringify({ grants: v1 })),
  };
}

function syncLedger(status: Record<string, unknown>) {
  const read = readLedger(status, { family: 4, value: BASE });
  if (!read.ok) throw new Error("unreadable");
  const token = uidToken(NEW_UID);
  if (read.ledger.indexOf(token) >= 0) throw new Error("granted");
  const allocator = Allocator.create({ ...POOL, allocations: read.ledger.ranges() });
  const got = allocator.allocate(8);
  if (!got.ok) throw new Error(got.error.message);
  return read.ledger.withGrants([{ range: got.value, token }], AT, 4);
}

function syncLedgerV1(grants: unknown) {
  const read = readLedgerV1(grants);
  if (!read.ok) throw new Error("unreadable");
  if (read.grants.some((g) => g.uid === NEW_UID)) throw new Error("granted");
  const allocator = Allocator.create({ ...POOL, allocations: read.grants.map((g): Range => g.range) });
  const got = allocator.allocate(8);
  if (!got.ok) throw new Error(got.error.message);
  const grant: Grant = { uid: NEW_UID, family: 4, range: got.value, grantedAt: "2026-11-22T09:00:00Z" };
  return writeLedgerV1([...read.grants, grant]);
}

for (const n of sized([10_000, 20_000], [100])) {
  const { v1, v2 } = statuses(n);
  const group = `${n} grants`;
  Deno.bench(
    `first format (status.grants): read + allocate + write, ${n} grants`,
    { group, baseline: true, ...RUNS },
    () => {
      syncLedgerV1(v1.grants);
    },
  );
  Deno.bench(`ledger (status.ledger): read + allocate + write, ${n} grants`, { group, ...RUNS }, () => {
    syncLedger(v2);
  });
}
