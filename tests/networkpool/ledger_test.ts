/**
 * The pool ledger's limits as the NetworkPool hook applies them: 20,000 grants, a byte cap that only a scattered
 * IPv6 pool can reach, the worst-case sizes of a full ledger, and pools written by version 0.1 (`status.grants`).
 */
import assert from "node:assert/strict";
import {
  familyChangedMessage,
  LEDGER_BYTES_FULL_MESSAGE,
  LEDGER_FULL_MESSAGE,
  MAX_FAILURE_MESSAGE,
  MAX_FAILURES,
} from "../../hooks/networkpool/mod.ts";
import { formatAddress, maxAddress } from "../../lib/ipam/mod.ts";
import {
  encodeGrantV1,
  encodeRecord,
  MAX_GRANTS,
  MAX_LEDGER_BYTES,
  readLedger,
  type StoredLedger,
  timeToken,
  uidToken,
} from "../../lib/pool_ledger/mod.ts";
import { syncPool } from "./sync_pool.ts";
import {
  SCATTERED_BASE,
  scatteredIPv6Range,
  scatteredIPv6Record,
  worstIPv4Records,
} from "./worst_ledgers.ts";

const NOW = new Date("2026-11-21T09:00:00Z");
/** A UUID as the API server writes them, distinct for each `i`. */
const uuid = (i: number) => `6f1c2d3e-4a5b-4c6d-8e7f-${i.toString(16).padStart(12, "0")}`;

function allocation(uid: string, i: number, spec: Record<string, unknown>) {
  return {
    apiVersion: "butler.butlerlabs.dev/v1alpha1",
    kind: "IPAllocation",
    metadata: {
      name: `a${i}`,
      namespace: "team-a",
      uid,
      creationTimestamp: "2026-11-21T08:00:00Z",
      labels: { "butler.butlerlabs.dev/network-pool": "big" },
    },
    spec: { poolRef: { name: "big" }, type: "loadbalancer", ...spec },
  };
}

function related(n: number, spec: (i: number) => Record<string, unknown> = () => ({ count: 1 })) {
  return Object.fromEntries(
    Array.from(
      { length: n },
      (_, i) => [`team-a/a${String(i).padStart(6, "0")}`, allocation(uuid(i), i, spec(i))],
    ),
  );
}

type PoolStatus = { ledger: StoredLedger; failures: Record<string, string>; allocationCount: number };

Deno.test("past MAX_GRANTS new allocations fail with a clear message", () => {
  const records = Array.from(
    { length: MAX_GRANTS },
    (_, i) =>
      encodeRecord(
        0x0a000000n,
        { start: 0x0a000000n + BigInt(i), end: 0x0a000000n + BigInt(i) },
        timeToken(NOW),
        uidToken(uuid(i)),
      ),
  );
  const res = syncPool({
    metadata: { name: "big", namespace: "butler-system", generation: 1 },
    spec: { cidr: "10.0.0.0/16" },
    status: { ledger: { version: 2, base: "10.0.0.0", grants: records } },
  }, related(MAX_GRANTS + 1));
  const status = res.status as PoolStatus;
  assert.equal(status.ledger.grants.length, MAX_GRANTS);
  assert.deepEqual(status.ledger.grants, records, "kept records are written back as they were read");
  assert.equal(status.allocationCount, MAX_GRANTS);
  assert.deepEqual(status.failures, { [uuid(MAX_GRANTS)]: LEDGER_FULL_MESSAGE });
});

Deno.test("a full IPv4 ledger in its worst case stays under the byte cap and the object well under 1.5 MiB", () => {
  const records = worstIPv4Records(uuid);
  const ledger = { version: 2, base: "0.0.0.0", grants: records };
  const ledgerBytes = JSON.stringify(records).length;
  assert.ok(ledgerBytes < MAX_LEDGER_BYTES, `${ledgerBytes} bytes`);
  const failures = Object.fromEntries(
    Array.from({ length: MAX_FAILURES }, (_, i) => [uuid(i), "x".repeat(MAX_FAILURE_MESSAGE)]),
  );
  const object = JSON.stringify({ status: { ledger, failures } });
  assert.ok(object.length < 1.1 * 2 ** 20, `${object.length} bytes`);
  const read = readLedger({ ledger });
  assert.ok(read.ok && read.ledger.size === MAX_GRANTS);
});

Deno.test("the byte cap stops a scattered IPv6 ledger before it outgrows the object", () => {
  // A /64 whose grants are pinned 2^44 apart with 2^40 addresses each: 11-digit offsets and counts.
  const base = SCATTERED_BASE;
  const n = 17_500;
  const records = Array.from({ length: n }, (_, i) => scatteredIPv6Record(i, NOW, uuid));
  const bytes = JSON.stringify(records).length;
  assert.ok(bytes > MAX_LEDGER_BYTES - 4096, `the test needs a nearly full ledger (${bytes} bytes)`);
  const pinned = (i: number) => {
    const range = scatteredIPv6Range(n + i);
    return {
      count: 1,
      pinnedRange: { startAddress: formatAddress(6, range.start), endAddress: formatAddress(6, range.end) },
    };
  };
  const res = syncPool({
    metadata: { name: "big", namespace: "butler-system", generation: 1 },
    spec: { cidr: "fd00:0:0:1::/64" },
    status: { ledger: { version: 2, base: formatAddress(6, base), grants: records } },
  }, related(n + 200, (i) => pinned(i - n)));
  const status = res.status as PoolStatus;
  const grown = status.ledger.grants.length;
  assert.ok(grown > n && grown < n + 200, `${grown - n} of 200 granted before the cap`);
  assert.ok(JSON.stringify(status.ledger.grants).length <= MAX_LEDGER_BYTES);
  assert.equal(Object.values(status.failures)[0], LEDGER_BYTES_FULL_MESSAGE);
  assert.equal(Object.keys(status.failures).length, n + 200 - grown);
});

Deno.test("a pool written by version 0.1 (status.grants) is read, and rewritten as status.ledger", () => {
  const v1 = Object.fromEntries(
    Array.from({ length: 40 }, (_, i) => {
      const start = 0x0a280100n + BigInt(i) * 8n;
      return [uuid(i), encodeGrantV1(4, { start, end: start + 7n }, "2026-11-20T10:00:00Z")];
    }),
  );
  v1["uid-literal"] = "10.40.3.0+16@2026-11-19T10:00:00Z";
  const all = { ...related(41, () => ({ count: 8 })) };
  all["team-a/literal"] = allocation("uid-literal", 99, { count: 16 });
  const res = syncPool({
    metadata: { name: "big", namespace: "butler-system", generation: 1 },
    spec: { cidr: "10.40.0.0/21", tenantAllocation: { start: "10.40.1.0", end: "10.40.7.254" } },
    status: { grants: v1 },
  }, all);
  const status = res.status as PoolStatus & { grants?: unknown };
  assert.equal(status.grants, undefined, "the first format is gone once rewritten");
  assert.equal(status.ledger.base, "10.40.0.0", "offsets count from the pool's first address");
  const read = readLedger(status);
  assert.ok(read.ok);
  const grants = read.ledger.decode();
  assert.equal(grants.length, 42, "40 migrated + 1 literal UID + 1 new grant");
  for (const [uid, value] of Object.entries(v1)) {
    const g = grants.find((x) => x.uid === uid);
    assert.ok(g, uid);
    assert.equal(
      encodeGrantV1(4, g.range, g.grantedAt),
      value,
      `${uid} holds the same range since the same time`,
    );
  }
  const fresh = grants.find((g) => g.uid === uuid(40));
  assert.equal(fresh?.grantedAt, "2026-11-21T09:00:00Z");
  assert.equal(formatAddress(4, fresh!.range.start), "10.40.2.64", "best-fit after the migrated grants");
});

Deno.test("a pool whose spec changed family keeps the other family's grants and grants nothing new", () => {
  const records = [
    encodeRecord(0x0a000000n, { start: 0x0a000000n, end: 0x0a000007n }, timeToken(NOW), uidToken(uuid(0))),
  ];
  const res = syncPool({
    metadata: { name: "big", namespace: "butler-system", generation: 2 },
    spec: { cidr: "fd00::/120" },
    status: { ledger: { version: 2, base: "10.0.0.0", grants: records } },
  }, related(2, () => ({ count: 8 })));
  const status = res.status as PoolStatus;
  // Kept as it was (a ledger written before checkpoints is trusted once, and given its first one).
  assert.deepEqual(status.ledger, { version: 2, base: "10.0.0.0", grants: records, checkpoint: "1/" });
  assert.deepEqual(status.failures, { [uuid(1)]: familyChangedMessage("butler-system/big", 4, 6) });
  assert.equal(
    status.failures[uuid(1)],
    "NetworkPool butler-system/big holds IPv4 grants but its spec is now IPv6; no new grants until they are released",
  );
  // Once the IPv4 grant's IPAllocation is gone, the ledger starts again from the IPv6 pool.
  const after = syncPool({
    metadata: { name: "big", namespace: "butler-system", generation: 2 },
    spec: { cidr: "fd00::/120" },
    status: status,
  }, { "team-a/a000001": allocation(uuid(1), 1, { count: 8 }) });
  assert.deepEqual((after.status as PoolStatus).ledger.base, "fd00::");
  assert.equal((after.status as PoolStatus).ledger.grants.length, 1);
});

Deno.test("maxAddress records stay readable at the top of each family", () => {
  for (const family of [4, 6] as const) {
    const top = maxAddress(family);
    const record = encodeRecord(top - 7n, { start: top - 7n, end: top }, timeToken(NOW), uidToken(uuid(1)));
    const read = readLedger({
      ledger: { version: 2, base: formatAddress(family, top - 7n), grants: [record] },
    });
    assert.ok(read.ok);
    assert.deepEqual(read.ledger.decode()[0]!.range, { start: top - 7n, end: top });
  }
});
