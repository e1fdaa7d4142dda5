import assert from "node:assert/strict";
import { parseAddress } from "../../lib/ipam/mod.ts";
import { PoolLedger, uidToken } from "../../lib/pool_ledger/mod.ts";
import { ledgerMismatches, notReady, overlaps, poolGrants, quotaOvershoot } from "./checks.ts";

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;

const AT = new Date("2026-11-26T00:00:00Z");
const ip = (text: string) => parseAddress(text)!.value;

/** A pool whose ledger holds `grants` ([uid, first, last]). */
function pool(name: string, grants: [string, string, string][]): Obj {
  const ledger = PoolLedger.empty().withGrants(
    grants.map(([uid, a, b]) => ({ range: { start: ip(a), end: ip(b) }, token: uidToken(uid) })),
    AT,
    4,
  );
  return { metadata: { name, namespace: "butler-system" }, status: { ledger } };
}

function allocation(uid: string, poolName: string, range?: [string, string]): Obj {
  return {
    metadata: { name: `a-${uid}`, namespace: "team-x", uid },
    spec: { poolRef: { name: poolName } },
    status: range
      ? { phase: "Allocated", startAddress: range[0], endAddress: range[1] }
      : { phase: "Pending" },
  };
}

const UID = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, "0")}`;

Deno.test("scale checks", async (t) => {
  const a = pool("a", [[UID(1), "10.0.0.0", "10.0.0.7"], [UID(2), "10.0.0.8", "10.0.0.9"]]);
  const b = pool("b", [[UID(3), "10.1.0.0", "10.1.0.3"]]);
  const { grants } = poolGrants([a, b]);

  await t.step(
    "grants of pools that meet nowhere do not overlap; a shared address does, across pools",
    () => {
      assert.deepEqual(overlaps(grants), []);
      const c = pool("c", [[UID(4), "10.0.0.9", "10.0.0.9"]]);
      const found = overlaps(poolGrants([a, b, c]).grants);
      assert.equal(found.length, 1);
      assert.match(
        found[0]!,
        /butler-system\/a 10\.0\.0\.8-10\.0\.0\.9 .* and butler-system\/c 10\.0\.0\.9-10\.0\.0\.9/,
      );
    },
  );

  await t.step("the ledgers equal the live allocations; each disagreement is named", () => {
    const live = [
      allocation(UID(1), "a", ["10.0.0.0", "10.0.0.7"]),
      allocation(UID(2), "a", ["10.0.0.8", "10.0.0.9"]),
      allocation(UID(3), "b", ["10.1.0.0", "10.1.0.3"]),
      allocation(UID(5), "b"),
    ];
    assert.deepEqual(ledgerMismatches(grants, live), []);
    const wrong = [
      allocation(UID(1), "a", ["10.0.0.0", "10.0.0.6"]),
      allocation(UID(3), "a", ["10.1.0.0", "10.1.0.3"]),
      allocation(UID(6), "b", ["10.1.0.8", "10.1.0.8"]),
    ];
    const found = ledgerMismatches(grants, wrong);
    assert.equal(found.length, 4, found.join("\n"));
    assert.match(found[0]!, /says 10\.0\.0\.0-10\.0\.0\.6/);
    assert.match(found[1]!, /names butler-system\/a but its grant is in butler-system\/b/);
    assert.match(found[2]!, /holds no grant/);
    assert.match(found[3]!, /10\.0\.0\.8-10\.0\.0\.9 .* is held by no IPAllocation/);
  });

  await t.step("quota: stored clusters, reservations and environments against their limits", () => {
    const team = {
      metadata: { name: "x" },
      spec: {
        resourceLimits: { maxClusters: 2 },
        environments: [{ name: "prod", limits: { maxClusters: 1 } }],
      },
    };
    const tc = (name: string, env?: string) => ({
      metadata: {
        name,
        namespace: "team-x",
        ...(env ? { labels: { "butler.butlerlabs.dev/environment": env } } : {}),
      },
    });
    const ledger = (names: string[]) => ({
      metadata: { namespace: "team-x" },
      data: Object.fromEntries(names.map((n) => [n, "{}"])),
    });
    assert.deepEqual(quotaOvershoot([team], [tc("a", "prod"), tc("b")], [ledger(["a", "b"])]), []);
    assert.deepEqual(
      quotaOvershoot([team], [tc("a", "prod"), tc("b", "prod"), tc("c")], [ledger(["a", "b", "c"])]),
      [
        "team-x: 3 clusters stored, limit 2",
        "team-x: 3 reservations, limit 2",
        "team-x environment prod: 2 clusters stored, limit 1",
      ],
    );
  });

  await t.step("not Ready: any phase but Ready, or none yet", () => {
    const tc = (name: string, phase?: string) => ({
      metadata: { name, namespace: "n" },
      ...(phase ? { status: { phase } } : {}),
    });
    assert.deepEqual(notReady([tc("a", "Ready"), tc("b", "Provisioning"), tc("c")]), ["n/b", "n/c"]);
  });
});
