/**
 * The fast codec against the first one and against its own reference parser: on every ledger both can read they
 * agree, the fast one never reads what the old one refuses, and what it writes it reads back unchanged.
 */
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  type Address,
  type Family,
  formatAddress,
  isOffsetRanges,
  maxAddress,
  toRanges,
} from "../ipam/mod.ts";
import { formatTime } from "../time/mod.ts";
import { decodeRecord, decodeRecords, encodeRecord, PoolLedger, readLedger } from "./mod.ts";
import { uidToken } from "./uid.ts";
import { type Grant, readLedgerV1, sortGrants, writeLedgerV1 } from "./first_format.ts";

const MIN_SECONDS = -62167219200;
const MAX_SECONDS = 253402300799;

interface Pool {
  family: Family;
  base: bigint;
  span: bigint;
}

const pool: fc.Arbitrary<Pool> = fc.record({
  family: fc.constantFrom<Family>(4, 6),
  top: fc.boolean(),
  seed: fc.bigInt({ min: 0n, max: maxAddress(6) }),
  bits: fc.constantFrom(8, 16, 24, 40, 52, 53, 60, 64),
}).map(({ family, top, seed, bits }) => {
  const width = family === 4 ? 32 : 128;
  const hostBits = Math.min(bits, width);
  const span = 1n << BigInt(hostBits);
  const aligned = ((seed & maxAddress(family)) >> BigInt(hostBits)) << BigInt(hostBits);
  return { family, base: top ? maxAddress(family) - span + 1n : aligned, span };
});

const uid = fc.oneof(
  fc.uuid(),
  fc.string({ minLength: 1, maxLength: 12 }),
  fc.constant("0B6E5A4C-3F1D-4C2A-9E8B-7A6F5E4D3C2B"),
);
const seconds = fc.oneof(
  fc.integer({ min: MIN_SECONDS, max: MAX_SECONDS }),
  fc.integer({ min: 1_700_000_000, max: 1_900_000_000 }),
  fc.constantFrom(0, MIN_SECONDS, MAX_SECONDS),
);

/** Grants of a pool: ranges anywhere in it (overlaps included: the codec does not judge them). */
function grantsOf(p: Pool): fc.Arbitrary<Grant[]> {
  const offset = fc.bigInt({ min: 0n, max: p.span - 1n });
  return fc.uniqueArray(
    fc.record({ uid, a: offset, b: offset, s: seconds }),
    { selector: (g) => g.uid, maxLength: 25 },
  ).map((gs) =>
    gs.map(({ uid, a, b, s }) => ({
      uid,
      family: p.family,
      range: { start: p.base + (a < b ? a : b), end: p.base + (a < b ? b : a) },
      grantedAt: formatTime(new Date(s * 1000)),
    }))
  );
}

Deno.test("the fast codec and the first one agree on every ledger both can read", async (t) => {
  await t.step(
    "ledgers the first version wrote: migrated, the same grants; written again, the same again",
    () => {
      fc.assert(
        fc.property(pool.chain((p) => fc.tuple(fc.constant(p), grantsOf(p))), ([p, grants]) => {
          const v1 = writeLedgerV1(grants);
          const old = readLedgerV1(v1);
          const migrated = readLedger({ grants: v1 }, { family: p.family, value: p.base });
          assert.ok(old.ok && migrated.ok);
          const want = sortGrants(old.grants);
          assert.deepEqual(sortGrants(migrated.ledger.decode()), want);
          const stored = migrated.ledger.toStatus();
          const again = readLedger({ ledger: JSON.parse(JSON.stringify(stored)) });
          assert.ok(again.ok);
          assert.deepEqual(sortGrants(again.ledger.decode()), want);
          assert.deepEqual(again.ledger.toStatus(), stored, "read and written back: the same records");
        }),
        { numRuns: 300 },
      );
    },
  );

  await t.step(
    "any first-format map: the fast codec reads only what the old one reads, and reads it alike",
    () => {
      const value = fc.oneof(
        fc.string(),
        fc.tuple(
          fc.constantFrom("10.40.1.0", "010.40.1.0", "fd00::1", "FD00::1", "255.255.255.255", "::", "1.2.3"),
          fc.constantFrom("1", "8", "0", "08", "340282366920938463463374607431768211456"),
          fc.constantFrom(
            "2026-11-21T09:00:00Z",
            "2026-11-21T09:00:00.750Z",
            "2026-11-21T10:00:00+01:00",
            "0000-01-01T00:00:00Z",
            "9999-12-31T23:59:59-01:00",
            "yesterday",
          ),
        ).map(([a, n, t]) => `${a}+${n}@${t}`),
      );
      fc.assert(
        fc.property(fc.dictionary(fc.string({ minLength: 1, maxLength: 8 }), value, { maxKeys: 6 }), (v1) => {
          const old = readLedgerV1(v1);
          const migrated = readLedger({ grants: v1 });
          if (!migrated.ok) return;
          assert.ok(old.ok, "never reads what the first codec refuses");
          const got = sortGrants(migrated.ledger.decode());
          const want = sortGrants(old.grants);
          assert.deepEqual(got.map(({ grantedAt: _, ...g }) => g), want.map(({ grantedAt: _, ...g }) => g));
          // The first codec kept times as written; the ledger keeps whole seconds in UTC.
          got.forEach((g, i) => {
            assert.equal(Date.parse(g.grantedAt), Math.floor(Date.parse(want[i]!.grantedAt) / 1000) * 1000);
          });
        }),
        { numRuns: 500 },
      );
    },
  );
});

Deno.test("the record scanner agrees with the reference parser on any record", () => {
  const hex = fc.oneof(
    fc.bigInt({ min: 0n, max: 2n ** 70n }).map((n) => n.toString(16)),
    fc.constantFrom("0", "00", "01", "A", "fffffffffffff", "10000000000000", "1fffffffffffff"),
    fc.string({ maxLength: 3 }),
  );
  const time = fc.oneof(
    seconds.map((s) => (s < 0 ? `-${(-s).toString(36)}` : s.toString(36))),
    fc.constantFrom("0", "-0", "00", "38et6qo0", "-sk4r9c0", "-sk4r9c1", "zzzzzzzzz", ""),
  );
  const token = fc.oneof(
    fc.uuid().map(uidToken),
    fc.string({ minLength: 0, maxLength: 5 }).map((s) => `=${s}`),
    fc.string({ minLength: 0, maxLength: 24 }).map((s) => `:${s}`),
  );
  const record = fc.oneof(
    { weight: 4, arbitrary: fc.tuple(hex, hex, time, token).map(([o, c, t, u]) => `${o}+${c}@${t}${u}`) },
    { weight: 1, arbitrary: fc.string({ maxLength: 40 }) },
  );
  fc.assert(
    fc.property(pool, record, (p, r) => {
      const base: Address = { family: p.family, value: p.base };
      const fast = decodeRecords(base, [r]);
      const reference = decodeRecord(p.family, p.base, r);
      if (!(fast instanceof PoolLedger)) {
        return assert.equal(reference, undefined, `${JSON.stringify(r)} refused by the scanner only`);
      }
      // The scanner's own columns, not decode() (which is the reference parser).
      assert.ok(reference, `${JSON.stringify(r)} read by the scanner only`);
      const ranges = fast.ranges();
      assert.deepEqual(isOffsetRanges(ranges) ? toRanges(ranges) : ranges, [reference.range]);
      assert.deepEqual(fast.tokens, [uidToken(reference.uid)]);
    }),
    { numRuns: 3000 },
  );
});

Deno.test("what the ledger writes it reads back: kept grants unchanged, new ones in place", () => {
  fc.assert(
    fc.property(
      pool.chain((p) => fc.tuple(fc.constant(p), grantsOf(p), grantsOf(p), seconds)),
      ([p, kept, added, s]) => {
        const tokens = new Set(kept.map((g) => uidToken(g.uid)));
        const fresh = added.filter((g) => !tokens.has(uidToken(g.uid)));
        const base = p.base;
        const records = kept.map((g) => encodeRecord(base, g.range, readTime(g.grantedAt), uidToken(g.uid)));
        const read = readLedger({
          ledger: { version: 2, base: formatAddress(p.family, base), grants: records },
        });
        assert.ok(read.ok);
        const at = new Date(s * 1000);
        const stored = read.ledger.withGrants(
          fresh.map((g) => ({ range: g.range, token: uidToken(g.uid) })),
          at,
          p.family,
        );
        const back = readLedger({ ledger: stored });
        assert.ok(back.ok);
        const want = sortGrants([...kept, ...fresh.map((g) => ({ ...g, grantedAt: formatTime(at) }))]);
        assert.deepEqual(sortGrants(back.ledger.decode()), want);
        for (const r of records) assert.ok(stored.grants.includes(r), "kept records are written as read");
      },
    ),
    { numRuns: 300 },
  );
});

function readTime(rfc3339: string): string {
  const s = Date.parse(rfc3339) / 1000;
  return s < 0 ? `-${(-s).toString(36)}` : s.toString(36);
}
