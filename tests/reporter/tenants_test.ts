/** Which tenants the reporter watches, and how replicas share them. */
import assert from "node:assert/strict";
import fc from "fast-check";
import {
  createLimiter,
  hash53,
  leaseName,
  liveMembers,
  memberLease,
  ownerOf,
  reportedTenants,
} from "../../lib/reporter/mod.ts";

const LOCATION = { secretName: "{name}-kubeconfig", secretKey: "value" };

const pc = (name: string, network: unknown, namespace = "butler-system") => ({
  metadata: { namespace, name },
  spec: { provider: "harvester", network },
});
const tc = (name: string, extra: Record<string, unknown> = {}, meta: Record<string, unknown> = {}) => ({
  metadata: { namespace: "team-a", name, uid: `uid-${name}`, ...meta },
  ...extra,
});
const elastic = { mode: "ipam", loadBalancer: { allocationMode: "elastic" } };

Deno.test("reportedTenants: IPAM clusters (elastic ones flagged), resolved or own ProviderConfig, not while deleting", () => {
  const pcs = [
    pc("elastic", elastic),
    pc("elastic-default-mode", { loadBalancer: { allocationMode: "elastic" } }),
    pc("static", { mode: "ipam", loadBalancer: { allocationMode: "static" } }),
    pc("cloud", { mode: "cloud", loadBalancer: { allocationMode: "elastic" } }),
    pc("elastic", elastic, "team-a"),
  ];
  const tcs = [
    tc("own", { spec: { providerConfigRef: { name: "elastic" } } }),
    tc("team-default", {
      spec: {},
      status: {
        effective: {
          providerConfigRef: { value: { name: "elastic-default-mode", namespace: "butler-system" } },
        },
      },
    }),
    tc("resolved-wins", {
      spec: { providerConfigRef: { name: "static" } },
      status: {
        effective: { providerConfigRef: { value: { name: "elastic", namespace: "team-a" } } },
        ipam: { unusedSince: { "resolved-wins-lb-2": "2026-01-01T00:00:00Z" } },
      },
    }),
    tc("static", {
      spec: { providerConfigRef: { name: "static" } },
      status: { loadBalancer: { addresses: ["10.40.2.0-10.40.2.7"] }, ipam: { unusedSince: "garbage" } },
    }),
    tc("cloud", { spec: { providerConfigRef: { name: "cloud" } } }),
    tc("none", { spec: {} }),
    tc("deleting", { spec: { providerConfigRef: { name: "elastic" } } }, {
      deletionTimestamp: "2026-01-01T00:00:00Z",
    }),
    { metadata: { name: "broken" } },
  ];
  const tenants = reportedTenants(tcs, pcs, LOCATION);
  // A network mode left unset is cloud, as the TenantCluster reads it: team-default is not an IPAM tenant.
  assert.deepEqual(tenants.map((t) => [t.key, t.elastic]), [
    ["team-a/own", true],
    ["team-a/resolved-wins", true],
    ["team-a/static", false],
  ]);
  assert.deepEqual(tenants[0], {
    key: "team-a/own",
    namespace: "team-a",
    name: "own",
    uid: "uid-own",
    secretName: "own-kubeconfig",
    secretKey: "value",
    elastic: true,
    addresses: [],
    unusedSince: {},
  });
  assert.deepEqual(tenants[2]!.addresses, ["10.40.2.0-10.40.2.7"]);
  // Release countdowns set how soon the reporter must observe again; an unreadable one is none.
  assert.deepEqual(tenants[1]!.unusedSince, { "resolved-wins-lb-2": "2026-01-01T00:00:00Z" });
  assert.deepEqual(tenants[2]!.unusedSince, {});
  const custom = reportedTenants(tcs, pcs, { secretName: "kc-{name}", secretKey: "kubeconfig" });
  assert.equal(custom[0]!.secretName, "kc-own");
  assert.equal(custom[0]!.secretKey, "kubeconfig");
});

Deno.test("liveMembers: Leases not yet expired, by holder", () => {
  const now = new Date("2026-03-01T12:00:00Z");
  const leases = [
    memberLease("b", "butler-system", new Date("2026-03-01T11:59:45Z"), 30),
    memberLease("a", "butler-system", new Date("2026-03-01T11:59:59Z"), 30),
    memberLease("dead", "butler-system", new Date("2026-03-01T11:59:00Z"), 30),
    { spec: { holderIdentity: "x" } },
  ];
  assert.deepEqual(liveMembers(leases, now), ["a", "b"]);
  assert.equal(
    (memberLease("a", "ns", new Date("2026-03-01T11:59:59.123Z"), 30).spec as { renewTime: string })
      .renewTime,
    "2026-03-01T11:59:59.123000Z",
  );
  assert.equal(leaseName("Reporter_0"), "butler-reporter-reporter-0");
});

Deno.test("ownerOf: every tenant has one owner among the members, spread evenly", () => {
  const members = ["r-0", "r-1", "r-2"];
  const counts = new Map<string, number>();
  for (let i = 0; i < 3000; i++) {
    const owner = ownerOf(`team-${i % 20}/cluster-${i}`, members)!;
    counts.set(owner, (counts.get(owner) ?? 0) + 1);
  }
  for (const m of members) assert.ok(counts.get(m)! > 850 && counts.get(m)! < 1150, `${m}: ${counts.get(m)}`);
  assert.equal(ownerOf("t", []), undefined);
  assert.notEqual(hash53("a\nb"), hash53("b\na"));
});

Deno.test("ownerOf property: a member leaving moves only its own tenants; order of members is irrelevant", () => {
  fc.assert(
    fc.property(
      fc.uniqueArray(fc.stringMatching(/^[a-z0-9-]{1,12}$/), { minLength: 2, maxLength: 6 }),
      fc.array(fc.stringMatching(/^[a-z]{1,8}\/[a-z0-9]{1,8}$/), { maxLength: 50 }),
      fc.nat(),
      (members, tenants, pick) => {
        const leaving = members[pick % members.length]!;
        const rest = members.filter((m) => m !== leaving);
        for (const t of tenants) {
          const before = ownerOf(t, members)!;
          assert.equal(ownerOf(t, [...members].reverse()), before);
          if (before !== leaving) assert.equal(ownerOf(t, rest), before);
          else assert.ok(rest.includes(ownerOf(t, rest)!));
        }
      },
    ),
    { numRuns: 200 },
  );
});

Deno.test("createLimiter: never more than max calls at once, all of them run", async () => {
  const limit = createLimiter(3);
  let running = 0, peak = 0;
  const results = await Promise.all(Array.from({ length: 20 }, (_, i) =>
    limit(async () => {
      running++;
      peak = Math.max(peak, running);
      await new Promise((r) => setTimeout(r, i % 3));
      running--;
      return i;
    })));
  assert.equal(peak, 3);
  assert.deepEqual(results, Array.from({ length: 20 }, (_, i) => i));
});
