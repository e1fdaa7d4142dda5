/**
 * The pool ledger at its limit on a real API server: 20,000 grants made by the hook in one sync are stored by the
 * status subresource (the CRD's `maxItems` included) and read back unchanged; the largest IPv4 ledger and a full
 * IPv6 ledger stay well under the 1.5 MiB request limit with `managedFields`; and a pool written in the first
 * format is migrated by the hook without a grant moving. Object sizes are printed for docs/performance.md.
 */
import assert from "node:assert/strict";
import { formatAddress } from "../../lib/ipam/mod.ts";
import { COOLING_MAX_BYTES, MAX_RELEASE_HISTORY, MAX_RELEASING } from "../../hooks/networkpool/mod.ts";
import {
  encodeGrantV1,
  encodeRecord,
  MAX_GRANTS,
  MAX_LEDGER_BYTES,
  readLedger,
  uidToken,
} from "../../lib/pool_ledger/mod.ts";
import { syncPool as sync } from "../networkpool/sync_pool.ts";
import { SCATTERED_BASE, scatteredIPv6Record, worstIPv4Records } from "../networkpool/worst_ledgers.ts";
import { api, ensureNamespaces, installManifests, kubectlOk } from "./cluster.ts";

const NS = "butler-system";
const POOLS = `/apis/butler.butlerlabs.dev/v1alpha1/namespaces/${NS}/networkpools`;
const NOW = new Date("2026-11-22T09:00:00Z");
const LIMIT = 1.5 * 2 ** 20;
const uuid = (i: number) => `7c9e6679-7425-40de-944b-${i.toString(16).padStart(12, "0")}`;

type Pool = {
  metadata: Record<string, unknown>;
  spec: Record<string, unknown>;
  status?: Record<string, unknown>;
};

async function create(name: string, spec: Record<string, unknown>): Promise<Pool> {
  await api("DELETE", `${POOLS}/${name}`);
  const created = await api("POST", POOLS, {
    apiVersion: "butler.butlerlabs.dev/v1alpha1",
    kind: "NetworkPool",
    metadata: { name, namespace: NS },
    spec,
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  return created.body as Pool;
}

/** Writes `status` through the status subresource, as Metacontroller does, and returns the stored object. */
/** IPv6: a /64 with pinned grants 2^44 apart of 2^40 addresses, filled to the ledger's byte cap. */
function fullScatteredIPv6(): string[] {
  const v6: string[] = [];
  for (let i = 0, bytes = 2;; i++) {
    const r = scatteredIPv6Record(i, NOW, uuid);
    if (bytes + r.length + 3 > MAX_LEDGER_BYTES) return v6;
    bytes += r.length + 3;
    v6.push(r);
  }
}

/** As many failures as a pool records, each as long as it records them. */
function fullFailures(): Record<string, string> {
  return Object.fromEntries(Array.from({ length: 256 }, (_, i) => [uuid(i), "x".repeat(256)]));
}

async function writeStatus(pool: Pool, status: unknown): Promise<{ stored: Pool; bytes: number }> {
  const name = pool.metadata.name as string;
  const written = await api("PUT", `${POOLS}/${name}/status`, { ...pool, status });
  assert.equal(written.status, 200, JSON.stringify(written.body).slice(0, 500));
  const got = await api("GET", `${POOLS}/${name}`);
  return { stored: got.body as Pool, bytes: new TextEncoder().encode(JSON.stringify(got.body)).length };
}

/**
 * `n` IPAllocations of `count` addresses on pool `big`, created at `born` (the pool's own creation: a new pool grants
 * at once only to allocations no older than itself; older ones could hold a grant of a lost ledger of its name, and
 * it waits for them to see its first ledger), else a week before.
 */
function allocations(n: number, count = 8, born?: string) {
  return Object.fromEntries(Array.from({ length: n }, (_, i) => {
    const name = `tc-${i}-lb`;
    return [`team-${i % 40}/${name}`, {
      apiVersion: "butler.butlerlabs.dev/v1alpha1",
      kind: "IPAllocation",
      metadata: {
        name,
        namespace: `team-${i % 40}`,
        uid: uuid(i),
        creationTimestamp: born ?? `2026-11-22T08:${String(Math.floor(i / 1000) % 60).padStart(2, "0")}:00Z`,
        labels: { "butler.butlerlabs.dev/network-pool": "big" },
      },
      spec: { poolRef: { name: "big" }, type: "loadbalancer", count },
    }];
  }));
}

Deno.test("the pool ledger at 20,000 grants on a real API server", async (t) => {
  await installManifests();
  await ensureNamespaces([NS]);

  await t.step(
    "the hook grants 20,000 allocations in one sync; the API server stores them unchanged",
    async () => {
      for (
        const [cidr, line] of [
          ["10.16.0.0/12", /^big\s+10\.16\.0\.0\/12\s+1048576\s+160000\s+888576\s+20000\s+/],
          ["fd00:10::/64", /^big\s+fd00:10::\/64\s+\d+\s+160000\s+\d+\s+20000\s+/],
        ] as const
      ) {
        const pool = await create("big", { cidr });
        const born = pool.metadata.creationTimestamp as string;
        const res = sync(pool, allocations(MAX_GRANTS + 1, 8, born));
        const status = res.status as { ledger: { grants: string[] }; failures: Record<string, string> };
        assert.equal(status.ledger.grants.length, MAX_GRANTS);
        assert.equal(Object.keys(status.failures).length, 1, "the 20,001st is refused");
        const { stored, bytes } = await writeStatus(pool, status);
        assert.deepEqual((stored.status as typeof status).ledger, status.ledger);
        assert.ok(bytes < LIMIT * 0.7, `${bytes} bytes`);
        console.log(`  20,000 grants by the hook (${cidr}, 8 each): stored object ${bytes} bytes`);
        assert.match(
          (await kubectlOk(["get", "networkpool", "big", "-n", NS])).trimEnd().split("\n")[1]!,
          line,
        );
        // Synced again with the stored object, as Metacontroller would: nothing moves.
        const again = sync(stored, allocations(MAX_GRANTS + 1, 8, born));
        assert.deepEqual((again.status as typeof status).ledger, status.ledger);
      }
    },
  );

  await t.step("the largest IPv4 ledger and a full scattered IPv6 one stay well under 1.5 MiB", async () => {
    const failures = fullFailures();
    const v4 = worstIPv4Records(uuid);
    const base6 = SCATTERED_BASE;
    const v6 = fullScatteredIPv6();
    for (
      const [name, cidr, base, grants] of [
        ["worst-v4", "0.0.0.0/0", "0.0.0.0", v4],
        ["full-v6", "fd00:0:0:1::/64", formatAddress(6, base6), v6],
      ] as const
    ) {
      const pool = await create(name, { cidr });
      const ledger = { version: 2, base, grants };
      const { stored, bytes } = await writeStatus(pool, { ledger, failures });
      const read = readLedger(stored.status!);
      assert.ok(read.ok && read.ledger.size === grants.length);
      assert.ok(bytes < 1.1 * 2 ** 20, `${name}: ${bytes} bytes`);
      console.log(`  ${name}: ${grants.length} grants, 256 failures: stored object ${bytes} bytes`);
      await api("DELETE", `${POOLS}/${name}`);
    }
    assert.ok(v6.length > 16_000, `${v6.length} scattered IPv6 grants fit`);
  });

  await t.step("the largest ledgers with full release records stay under 1.5 MiB", async () => {
    const failures = fullFailures();
    // The longest names there can be: a 63-character namespace, a 253-character IPAllocation.
    const holder = (i: number) => ({ namespace: "n".repeat(63), name: `${i}`.padEnd(253, "a") });
    const releasing = Object.fromEntries(
      Array.from(
        { length: MAX_RELEASING },
        (_, i) => [uuid(100_000 + i), `${holder(i).namespace}/${holder(i).name}`],
      ),
    );
    const v6 = fullScatteredIPv6();
    for (
      const [name, cidr, base, grants, range] of [
        ["worst-v4", "0.0.0.0/0", "0.0.0.0", worstIPv4Records(uuid), "255.255.255.0-255.255.255.255"],
        [
          "full-v6",
          "fd00:0:0:1::/64",
          formatAddress(6, SCATTERED_BASE),
          v6,
          "fd00:0:0:1:ffff:ffff:ffff:0-fd00:0:0:1:ffff:ffff:ffff:ffff",
        ],
      ] as const
    ) {
      const history = Array.from({ length: MAX_RELEASE_HISTORY }, (_, i) => ({
        range,
        holder: { kind: "IPAllocation", uid: uuid(i), ...holder(i) },
        grantedAt: "2026-11-20T00:00:00Z",
        releasedAt: "2026-11-21T09:00:00Z",
      }));
      const cooling: { range: string; releasedAt: string }[] = [];
      for (let bytes = 0;;) {
        const c = { range, releasedAt: "2026-11-21T09:00:00Z" };
        bytes += JSON.stringify(c).length + 1;
        if (bytes > COOLING_MAX_BYTES) break;
        cooling.push(c);
      }
      const pool = await create(`${name}-released`, { cidr });
      const releases = { total: 1_000_000, cooling, history, releasing };
      const { stored, bytes } = await writeStatus(pool, {
        ledger: { version: 2, base, grants },
        failures,
        releases,
        coolingIPs: cooling.length,
      });
      assert.deepEqual((stored.status as { releases?: unknown }).releases, releases);
      assert.ok(bytes < 1.4 * 2 ** 20, `${name}: ${bytes} bytes`);
      console.log(
        `  ${name} with ${history.length} releases, ${cooling.length} cooling, ${MAX_RELEASING} releasing, the longest names: ${bytes} bytes`,
      );
      await api("DELETE", `${POOLS}/${name}-released`);
    }
  });

  await t.step("more than 20,000 records are refused by the CRD itself", async () => {
    const pool = await create("over", { cidr: "10.0.0.0/8" });
    const grants = Array.from(
      { length: MAX_GRANTS + 1 },
      (_, i) =>
        encodeRecord(
          0x0a000000n,
          { start: 0x0a000000n + BigInt(i), end: 0x0a000000n + BigInt(i) },
          "0",
          uidToken(uuid(i)),
        ),
    );
    const res = await api("PUT", `${POOLS}/over/status`, {
      ...pool,
      status: { ledger: { version: 2, base: "10.0.0.0", grants } },
    });
    assert.equal(res.status, 422);
    assert.match(
      JSON.stringify(res.body),
      /status\.ledger\.grants: Too many: 20001: must have at most 20000 items/,
    );
    await api("DELETE", `${POOLS}/over`);
  });

  await t.step(
    "a pool stored in the first format is migrated without a grant moving, and shrinks",
    async () => {
      const pool = await create("legacy", { cidr: "10.32.0.0/12" });
      const v1 = Object.fromEntries(Array.from({ length: 5000 }, (_, i) => {
        const start = 0x0a200000n + BigInt(i) * 8n;
        return [uuid(i), encodeGrantV1(4, { start, end: start + 7n }, "2026-11-20T10:00:00Z")];
      }));
      const before = await writeStatus(pool, { grants: v1 });
      const res = sync(before.stored, allocations(5000));
      const after = await writeStatus(before.stored, res.status);
      assert.equal(after.stored.status!.grants, undefined);
      const read = readLedger(after.stored.status!);
      assert.ok(read.ok);
      const grants = read.ledger.decode();
      assert.equal(grants.length, 5000);
      for (const g of grants) assert.equal(encodeGrantV1(4, g.range, g.grantedAt), v1[g.uid]);
      assert.ok(after.bytes < before.bytes / 2, `${before.bytes} -> ${after.bytes} bytes`);
      console.log(`  5,000 grants: first format ${before.bytes} bytes, ledger ${after.bytes} bytes`);
      await api("DELETE", `${POOLS}/legacy`);
      await api("DELETE", `${POOLS}/big`);
    },
  );
});
