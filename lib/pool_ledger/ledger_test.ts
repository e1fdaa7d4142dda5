import assert from "node:assert/strict";
import { type Address, maxAddress, type Range } from "../ipam/mod.ts";
import {
  decodeRecord,
  decodeRecords,
  encodeRecord,
  findGrant,
  ledgerHolders,
  PoolLedger,
  readLedger,
  recordBound,
  timeToken,
} from "./mod.ts";
import { uidToken } from "./uid.ts";

const UID = "0b6e5a4c-3f1d-4c2a-9e8b-7a6f5e4d3c2b";
const TOKEN = uidToken(UID);
const AT = new Date("2026-11-21T09:00:00Z");
const BASE: Address = { family: 4, value: 0x0a280000n }; // 10.40.0.0
const v4 = (a: number, b: number): Range => ({ start: BASE.value + BigInt(a), end: BASE.value + BigInt(b) });

function ledgerOf(records: string[], base: Address = BASE): PoolLedger {
  const read = decodeRecords(base, records);
  if (!(read instanceof PoolLedger)) throw new Error(`unreadable ${read.unreadable}`);
  return read;
}

Deno.test("records", async (t) => {
  await t.step("encode and decode", () => {
    const record = encodeRecord(BASE.value, v4(0x100, 0x107), timeToken(AT), TOKEN);
    assert.equal(record, "100+8@touh00:C25aTD8dTCqei3pvXk08Kw");
    assert.deepEqual(decodeRecord(4, BASE.value, record), {
      uid: UID,
      family: 4,
      range: v4(0x100, 0x107),
      grantedAt: "2026-11-21T09:00:00Z",
    });
  });
  await t.step("times before 1970 and up to the year 9999", () => {
    for (
      const time of [
        "1969-07-20T20:17:40Z",
        "0000-01-01T00:00:00Z",
        "9999-12-31T23:59:59Z",
        "1970-01-01T00:00:00Z",
      ]
    ) {
      const record = encodeRecord(BASE.value, v4(0, 0), timeToken(new Date(time)), TOKEN);
      assert.equal(decodeRecord(4, BASE.value, record)?.grantedAt, time, record);
    }
  });
  for (
    const [bad, why] of [
      ["", "empty"],
      ["100+8@touh00", "no UID"],
      ["0100+8@touh00:C25aTD8dTCqei3pvXk08Kw", "offset with a leading zero"],
      ["100+08@touh00:C25aTD8dTCqei3pvXk08Kw", "count with a leading zero"],
      ["100+0@touh00:C25aTD8dTCqei3pvXk08Kw", "zero addresses"],
      ["1A0+8@touh00:C25aTD8dTCqei3pvXk08Kw", "uppercase hex"],
      ["100+8@0touh00:C25aTD8dTCqei3pvXk08Kw", "time with a leading zero"],
      ["100+8@-0:C25aTD8dTCqei3pvXk08Kw", "minus zero"],
      ["100+8@zzzzzzzzz:C25aTD8dTCqei3pvXk08Kw", "a time of nine digits"],
      ["100+8@38et6qo0:C25aTD8dTCqei3pvXk08Kw", "after the year 9999"],
      ["100+8@touh00:C25aTD8dTCqei3pvXk08Kx", "a malformed UID token"],
      ["100+8@touh00=0b6e5a4c-3f1d-4c2a-9e8b-7a6f5e4d3c2b", "a UUID spelt literally"],
      ["+8@touh00:C25aTD8dTCqei3pvXk08Kw", "no offset"],
      ["100+@touh00:C25aTD8dTCqei3pvXk08Kw", "no count"],
      ["100+8touh00:C25aTD8dTCqei3pvXk08Kw", "no @"],
      ["f5d7ffff+2@touh00:C25aTD8dTCqei3pvXk08Kw", "past 255.255.255.255"],
    ] as const
  ) {
    await t.step(`refuses ${JSON.stringify(bad)} (${why})`, () => {
      assert.equal(decodeRecord(4, BASE.value, bad), undefined);
      const read = decodeRecords(BASE, [encodeRecord(BASE.value, v4(0, 1), "touh00", "=other"), bad]);
      assert.deepEqual(read, { unreadable: [1] });
    });
  }
  await t.step("the bound of a record is never below its size", () => {
    const last = BASE.value + 0x7ffn;
    const record = encodeRecord(BASE.value, v4(0x7f8, 0x7ff), timeToken(AT), TOKEN);
    assert.ok(recordBound(BASE.value, last, 8n, AT, TOKEN) >= record.length + 3);
    assert.ok(recordBound(BASE.value, last, undefined, AT, TOKEN) >= record.length + 3);
  });
});

Deno.test("reading a ledger", async (t) => {
  const a = encodeRecord(BASE.value, v4(0x100, 0x107), "touh00", TOKEN);
  const b = encodeRecord(BASE.value, v4(0x108, 0x10f), "touh00", "=uid-b");
  await t.step("columns of offsets, tokens, records", () => {
    const read = readLedger({ ledger: { version: 2, base: "10.40.0.0", grants: [a, b] } });
    assert.ok(read.ok);
    assert.deepEqual(read.ledger.tokens, [TOKEN, "=uid-b"]);
    assert.deepEqual(read.ledger.ranges(), {
      base: BASE.value,
      starts: [0x100, 0x108],
      ends: [0x107, 0x10f],
    });
    assert.deepEqual(read.ledger.decode().map((g) => g.uid), [UID, "uid-b"]);
    assert.equal(read.ledger.bytes(), JSON.stringify([a, b]).length);
  });
  await t.step("records out of order are put in order", () => {
    const read = readLedger({ ledger: { version: 2, base: "10.40.0.0", grants: [b, a] } });
    assert.ok(read.ok);
    assert.deepEqual(read.ledger.records, [a, b]);
  });
  await t.step("a UID holding two grants makes the ledger unreadable", () => {
    const twice = encodeRecord(BASE.value, v4(0x200, 0x207), "touh00", TOKEN);
    assert.deepEqual(readLedger({ ledger: { version: 2, base: "10.40.0.0", grants: [a, b, twice] } }), {
      ok: false,
      field: "status.ledger",
      unreadable: ["grants[2]"],
    });
  });
  for (
    const [ledger, why] of [
      [[], "(not an object)"],
      [{ version: 3, base: "10.40.0.0", grants: [] }, "(version 3 is not understood)"],
      [{ version: 2, base: "10.40.0.0", grants: {} }, "(grants is not a list)"],
      [{ version: 2, base: "10.40.0", grants: [a] }, "(base is not an address)"],
      [{ version: 2, grants: [a] }, "(grants without a base)"],
    ] as const
  ) {
    await t.step(`a ledger that is not one: ${why}`, () => {
      assert.deepEqual(readLedger({ ledger }), { ok: false, field: "status.ledger", unreadable: [why] });
    });
  }
  await t.step("non-string records are unreadable, not skipped", () => {
    assert.deepEqual(readLedger({ ledger: { version: 2, base: "10.40.0.0", grants: [a, 7] } }), {
      ok: false,
      field: "status.ledger",
      unreadable: ["grants[1]"],
    });
  });
  await t.step("both formats at once is refused: neither is trusted over the other", () => {
    const read = readLedger({
      ledger: { version: 2, base: "10.40.0.0", grants: [a] },
      grants: { "uid-b": "10.40.1.8+8@2026-11-21T09:00:00Z" },
    });
    assert.equal(read.ok, false);
  });
  await t.step(
    "an empty ledger counts from the pool's first address, whatever it counted from before",
    () => {
      const read = readLedger({ ledger: { version: 2, base: "10.40.0.0", grants: [] } }, {
        family: 6,
        value: 1n,
      });
      assert.ok(read.ok);
      assert.equal(read.ledger.family, 6);
    },
  );
  await t.step("offsets of 2^52 and more (a large IPv6 pool) are read through BigInt", () => {
    const base = { family: 6 as const, value: 0xfd00n << 112n };
    const far = { start: base.value + (1n << 60n), end: base.value + (1n << 60n) + 15n };
    const near = { start: base.value + 16n, end: base.value + 31n };
    const records = [
      encodeRecord(base.value, far, "touh00", TOKEN),
      encodeRecord(base.value, near, "touh00", "=near"),
    ];
    const ledger = ledgerOf(records, base);
    assert.deepEqual(ledger.ranges(), [near, far]);
    assert.deepEqual(ledger.decode().map((g) => g.range), [near, far]);
    assert.deepEqual(decodeRecords(base, [records[0]!.replace("+", "+0")]), { unreadable: [0] });
  });
  await t.step("a record past the family's last address is unreadable, even with large offsets", () => {
    const base = { family: 6 as const, value: maxAddress(6) - (1n << 60n) };
    const over = encodeRecord(base.value, { start: maxAddress(6) - 1n, end: maxAddress(6) + 1n }, "0", TOKEN);
    assert.deepEqual(decodeRecords(base, [over]), { unreadable: [0] });
  });
});

Deno.test("writing a ledger", async (t) => {
  const kept = [
    encodeRecord(BASE.value, v4(0x100, 0x107), "touh00", "=a"),
    encodeRecord(BASE.value, v4(0x110, 0x117), "touh00", "=c"),
  ];
  const ledger = ledgerOf(kept);
  await t.step("new grants go in address order; kept records are unchanged", () => {
    const stored = ledger.withGrants(
      [
        { range: v4(0x120, 0x12f), token: "=d" },
        { range: v4(0x108, 0x10f), token: "=b" },
        { range: v4(0, 7), token: "=z" },
      ],
      AT,
      4,
    );
    assert.deepEqual(stored, {
      version: 2,
      base: "10.40.0.0",
      grants: ["0+8@touh00=z", kept[0], "108+8@touh00=b", kept[1], "120+10@touh00=d"],
    });
  });
  await t.step("a grant below the base (the CIDR moved down) rebases every record", () => {
    const stored = ledger.withGrants([{ range: v4(-0x100, -0xf9), token: "=y" }], AT, 4);
    assert.deepEqual(stored, {
      version: 2,
      base: "10.39.255.0",
      grants: ["0+8@touh00=y", "200+8@touh00=a", "210+8@touh00=c"],
    });
  });
  await t.step("only the grants kept", () => {
    const onlyC = ledger.retain((i) => ledger.tokens[i] === "=c");
    assert.deepEqual(onlyC.toStatus().grants, [kept[1]]);
    assert.deepEqual(onlyC.tokens, ["=c"]);
    assert.equal(ledger.retain(() => true), ledger, "nothing dropped, nothing copied");
    assert.equal(ledger.indexOf("=c"), 1);
    assert.equal(onlyC.indexOf("=c"), 0);
    assert.equal(ledger.indexOf("=nobody"), -1);
  });
  await t.step("an empty ledger takes the family of its first grant", () => {
    const empty = PoolLedger.empty(BASE);
    const range = { start: 0xfd00n << 112n, end: (0xfd00n << 112n) + 7n };
    assert.deepEqual(empty.withGrants([{ range, token: "=v6" }], AT, 6), {
      version: 2,
      base: "fd00::",
      grants: ["0+8@touh00=v6"],
    });
  });
  await t.step("a ledger of one family never takes a grant of the other", () => {
    assert.throws(() => ledger.withGrants([{ range: { start: 1n, end: 2n }, token: "=x" }], AT, 6));
  });
});

Deno.test("the IPAllocation's view and the holders", async (t) => {
  const status = {
    ledger: {
      version: 2,
      base: "10.40.0.0",
      grants: [
        encodeRecord(BASE.value, v4(0x100, 0x107), "touh00", TOKEN),
        encodeRecord(BASE.value, v4(0x108, 0x10f), "touh00", "=x" + TOKEN), // a literal UID ending like a token
        "garbage",
      ],
    },
  };
  await t.step("findGrant reads one record, and only the one whose token is exactly the UID's", () => {
    assert.deepEqual(findGrant(status, UID)?.range, v4(0x100, 0x107));
    assert.deepEqual(findGrant(status, "x" + TOKEN)?.range, v4(0x108, 0x10f));
    assert.equal(findGrant(status, "nobody"), undefined);
  });
  await t.step("findGrant reads a pool not yet migrated", () => {
    const v1 = { grants: { [UID]: "10.40.1.0+8@2026-11-21T09:00:00Z", toString: "x" } };
    assert.deepEqual(findGrant(v1, UID), {
      uid: UID,
      family: 4,
      range: v4(0x100, 0x107),
      grantedAt: "2026-11-21T09:00:00Z",
    });
    assert.equal(findGrant(v1, "toString"), undefined);
    assert.equal(findGrant(v1, "constructor"), undefined);
  });
  await t.step("every holder is named, unreadable records by their text", () => {
    assert.deepEqual(ledgerHolders(status), [UID, "x" + TOKEN, "garbage"]);
    assert.deepEqual(ledgerHolders({ grants: { "uid-1": "x" } }), ["uid-1"]);
    assert.deepEqual(ledgerHolders(undefined), []);
  });
});
