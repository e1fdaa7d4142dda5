import assert from "node:assert/strict";
import { describeLedger, downgradePatch, ledgerJson, ledgerTable, MAX_GRANTS_V1 } from "./describe.ts";
import { encodeRecord } from "./mod.ts";
import { readLedgerV1 } from "./first_format.ts";

const UID = "0b6e5a4c-3f1d-4c2a-9e8b-7a6f5e4d3c2b";
const status = {
  ledger: {
    version: 2,
    base: "10.40.0.0",
    grants: ["100+8@touh00:C25aTD8dTCqei3pvXk08Kw", "108+5@touh00=uid-b"],
  },
};

Deno.test("the ledger for people", async (t) => {
  const d = describeLedger(status);
  assert.ok(d.ok);
  await t.step("a table in address order", () => {
    assert.equal(
      ledgerTable(d.ledger),
      [
        "FIRST      LAST        COUNT  GRANTED AT            IPALLOCATION UID",
        `10.40.1.0  10.40.1.7   8      2026-11-21T09:00:00Z  ${UID}`,
        "10.40.1.8  10.40.1.12  5      2026-11-21T09:00:00Z  uid-b",
      ].join("\n"),
    );
  });
  await t.step("JSON", () => {
    assert.deepEqual(ledgerJson(d.ledger)[1], {
      uid: "uid-b",
      first: "10.40.1.8",
      last: "10.40.1.12",
      count: "5",
      grantedAt: "2026-11-21T09:00:00Z",
    });
  });
  await t.step("a downgrade patch the first format reads back to the same grants", () => {
    const p = downgradePatch(d.ledger);
    assert.ok(p.ok);
    const patch = p.patch as { status: { grants: Record<string, string>; ledger: null } };
    assert.equal(patch.status.ledger, null, "status.ledger is removed");
    const back = readLedgerV1(patch.status.grants);
    assert.ok(back.ok);
    assert.deepEqual(back.grants, d.ledger.decode());
  });
  await t.step("no downgrade past what the first format records", () => {
    const many = Array.from(
      { length: MAX_GRANTS_V1 + 1 },
      (_, i) => encodeRecord(0n, { start: BigInt(i), end: BigInt(i) }, "touh00", `=u${i}`),
    );
    const big = describeLedger({ ledger: { version: 2, base: "10.0.0.0", grants: many } });
    assert.ok(big.ok);
    assert.deepEqual(downgradePatch(big.ledger), {
      ok: false,
      message: "5001 grants: version 0.1 records at most 5000; split the pool before a downgrade",
    });
  });
  await t.step("an unreadable ledger says where", () => {
    assert.deepEqual(describeLedger({ ledger: { version: 2, base: "10.40.0.0", grants: ["x"] } }), {
      ok: false,
      message: "status.ledger cannot be read: grants[0]",
    });
    assert.deepEqual(describeLedger("nonsense"), describeLedger({}));
  });
});
