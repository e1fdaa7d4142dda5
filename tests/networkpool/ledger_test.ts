import assert from "node:assert/strict";
import {
  decodeGrant,
  encodeGrant,
  type Grant,
  LEDGER_FULL_MESSAGE,
  MAX_FAILURE_MESSAGE,
  MAX_FAILURES,
  MAX_GRANTS,
  readLedger,
  writeLedger,
} from "../../hooks/networkpool/mod.ts";
import { maxAddress } from "../../lib/ipam/mod.ts";
import { syncPool } from "./sync_pool.ts";

Deno.test("ledger entries", async (t) => {
  await t.step("round trip", () => {
    const v = encodeGrant(4, { start: 0x0a280100n, end: 0x0a280107n }, new Date("2026-11-21T09:00:00Z"));
    assert.equal(v, "10.40.1.0+8@2026-11-21T09:00:00Z");
    assert.deepEqual(decodeGrant(v), {
      family: 4,
      range: { start: 0x0a280100n, end: 0x0a280107n },
      grantedAt: "2026-11-21T09:00:00Z",
    });
  });
  for (
    const bad of [
      "",
      "10.40.1.0",
      "10.40.1.0+0@2026-11-21T09:00:00Z",
      "10.40.1.0+8@yesterday",
      "255.255.255.255+2@2026-11-21T09:00:00Z",
      7,
    ]
  ) {
    await t.step(`rejects ${JSON.stringify(bad)}`, () => assert.equal(decodeGrant(bad), undefined));
  }
  await t.step("an unreadable entry makes the whole ledger unreadable, never silently smaller", () => {
    assert.deepEqual(readLedger({ a: "10.40.1.0+8@2026-11-21T09:00:00Z", b: "garbage" }), {
      ok: false,
      unreadable: ["b"],
    });
    assert.deepEqual(readLedger([]), { ok: false, unreadable: ["(not a map)"] });
  });
  await t.step("written in address order", () => {
    const grants: Grant[] = [
      { uid: "z", family: 4, range: { start: 20n, end: 21n }, grantedAt: "2026-11-21T09:00:00Z" },
      { uid: "a", family: 4, range: { start: 10n, end: 10n }, grantedAt: "2026-11-21T09:00:00Z" },
    ];
    assert.deepEqual(Object.keys(writeLedger(grants)), ["a", "z"]);
  });
});

Deno.test("a full ledger stays well under 1 MiB, even for the longest IPv6 entries", () => {
  const grants: Grant[] = Array.from({ length: MAX_GRANTS }, (_, i) => ({
    uid: crypto.randomUUID(),
    family: 6 as const,
    range: {
      start: maxAddress(6) - (1n << 64n) * BigInt(i + 1) + 1n,
      end: maxAddress(6) - (1n << 64n) * BigInt(i),
    },
    grantedAt: "2026-11-21T09:00:00Z",
  }));
  const failures = Object.fromEntries(
    Array.from({ length: MAX_FAILURES }, () => [crypto.randomUUID(), "x".repeat(MAX_FAILURE_MESSAGE)]),
  );
  const bytes = new TextEncoder().encode(JSON.stringify({ grants: writeLedger(grants), failures })).length;
  assert.ok(bytes < 700 * 1024, `${bytes} bytes`);
});

Deno.test("past MAX_GRANTS new allocations fail with a clear message", () => {
  const uid = (i: number) => `uid-${i}`;
  const grants = Object.fromEntries(
    Array.from(
      { length: MAX_GRANTS },
      (_, i) => [uid(i), `10.0.${Math.floor(i / 256)}.${i % 256}+1@2026-11-21T09:00:00Z`],
    ),
  );
  const allocation = (i: number) => ({
    apiVersion: "butler.butlerlabs.dev/v1alpha1",
    kind: "IPAllocation",
    metadata: {
      name: `a${i}`,
      namespace: "team-a",
      uid: uid(i),
      creationTimestamp: "2026-11-21T08:00:00Z",
      labels: { "butler.butlerlabs.dev/network-pool": "big" },
    },
    spec: { poolRef: { name: "big" }, type: "loadbalancer", count: 1 },
  });
  const related = Object.fromEntries(
    Array.from({ length: MAX_GRANTS + 1 }, (_, i) => [`team-a/a${i}`, allocation(i)]),
  );
  const res = syncPool({
    metadata: { name: "big", namespace: "butler-system", generation: 1 },
    spec: { cidr: "10.0.0.0/16" },
    status: { grants },
  }, related);
  const status = res.status as { grants: Record<string, string>; failures: Record<string, string> };
  assert.equal(Object.keys(status.grants).length, MAX_GRANTS);
  assert.deepEqual(status.failures, { [uid(MAX_GRANTS)]: LEDGER_FULL_MESSAGE });
});
