/**
 * Multi-step tests: the TenantCluster, NetworkPool and IPAllocation hooks driven in turn, each answer applied
 * and fed into the next request, from creation to Allocated and back to deletion; and the seed's ADR-016
 * scenario across many syncs.
 */
import assert from "node:assert/strict";
import { formatTime } from "../../lib/time/mod.ts";
import { API_VERSION, Cluster, type Obj } from "./simulator.ts";

const POOL: [string, string] = ["butler-system", "lab-pool"];

function setup(network: Obj): Cluster {
  const c = new Cluster();
  c.put({
    apiVersion: API_VERSION,
    kind: "Team",
    metadata: { name: "platform" },
    spec: {
      access: { users: [{ name: "alice@example.com", role: "admin" }] },
      clusterDefaults: { kubernetesVersion: "v1.31.0" },
    },
  });
  c.put({
    apiVersion: API_VERSION,
    kind: "ProviderConfig",
    metadata: { name: "harvester-prod", namespace: "butler-system" },
    spec: {
      provider: "harvester",
      credentialsRef: { name: "c" },
      harvester: { networkName: "default/vlan40" },
      network,
    },
  });
  c.put({
    apiVersion: API_VERSION,
    kind: "NetworkPool",
    metadata: {
      name: "lab-pool",
      namespace: "butler-system",
      finalizers: ["metacontroller.io/decoratorcontroller-butler-networkpool"],
    },
    spec: {
      cidr: "10.40.0.0/21",
      reserved: [{ cidr: "10.40.0.0/28" }, { cidr: "10.40.0.16/28" }],
      tenantAllocation: {
        start: "10.40.1.0",
        end: "10.40.7.254",
        defaults: { nodesPerTenant: 5, lbPoolPerTenant: 8 },
      },
    },
  });
  c.put({
    apiVersion: API_VERSION,
    kind: "TenantCluster",
    metadata: { name: "web", namespace: "team-platform" },
    spec: { providerConfigRef: { name: "harvester-prod" }, workers: { replicas: 3 } },
  });
  return c;
}

const tc = (c: Cluster) => c.get("TenantCluster", "team-platform", "web")!;
const pool = (c: Cluster) => c.get("NetworkPool", ...POOL)!;
const metallb = (c: Cluster) =>
  c.get("ConfigMap", "team-platform", "web-metallb")?.data["metallb.yaml"] as string | undefined;

Deno.test("static IPAM: creation to Allocated, MetalLB projection, and back to deletion", async () => {
  const c = setup({ mode: "ipam", poolRefs: [{ name: "lab-pool" }], loadBalancer: { defaultPoolSize: 8 } });
  for (let i = 0; i < 3; i++) await c.round("team-platform", "web", POOL);

  assert.equal(tc(c).status.phase, "Ready");
  assert.deepEqual(tc(c).status.loadBalancer.addresses, ["10.40.1.0-10.40.1.7"]);
  assert.deepEqual(tc(c).status.lbAllocationRef, { name: "web-lb" });
  const lb = c.get("IPAllocation", "team-platform", "web-lb")!;
  const nodes = c.get("IPAllocation", "team-platform", "web-nodes")!;
  assert.deepEqual([lb.status.phase, lb.status.cidr, nodes.status.phase, nodes.status.cidr], [
    "Allocated",
    "10.40.1.0/29",
    "Allocated",
    "10.40.1.8-10.40.1.12",
  ]);
  assert.equal(lb.metadata.labels["butler.butlerlabs.dev/allocation-role"], "initial");
  assert.equal(pool(c).status.allocationCount, 2);
  assert.equal(pool(c).status.availableIPs, 1791 - 13);
  assert.match(metallb(c)!, /addresses:\n {4}- 10\.40\.1\.0-10\.40\.1\.7\n/);

  // Deletion: the TenantCluster's finalizer returns no children; each IPAllocation releases through its own.
  c.delete(tc(c));
  assert.ok(tc(c).metadata.deletionTimestamp);
  for (let i = 0; i < 4 && c.get("TenantCluster", "team-platform", "web"); i++) {
    await c.round("team-platform", "web", POOL);
  }
  assert.equal(c.get("TenantCluster", "team-platform", "web"), undefined, "finalized and gone");
  assert.deepEqual(c.list("IPAllocation"), []);
  assert.deepEqual(c.list("ConfigMap"), []);
  await c.syncPool(...POOL);
  assert.equal(pool(c).status.allocationCount, 0);
  assert.deepEqual(pool(c).status.ledger.grants, []);

  // The pool can go now that it holds nothing.
  c.delete(pool(c));
  const res = await c.syncPool(...POOL);
  assert.equal(res?.finalized, true);
});

Deno.test("elastic IPAM, the seed's ADR-016 scenario: no churn at rest, growth on real demand, release after 10 minutes unused", async () => {
  const c = setup({
    mode: "ipam",
    poolRefs: [{ name: "lab-pool" }],
    loadBalancer: { allocationMode: "elastic", initialPoolSize: 2, growthIncrement: 1 },
    quotaPerTenant: { maxLoadBalancerIPs: 8 },
  });
  for (let i = 0; i < 3; i++) await c.round("team-platform", "web", POOL);
  assert.deepEqual(tc(c).status.loadBalancer.addresses, ["10.40.1.0-10.40.1.1"]);

  // One platform LB (traefik) and one tenant LB use both initial IPs.
  const services: Obj[] = [
    { namespace: "traefik", name: "traefik", createdAt: formatTime(c.now), ingressIPs: ["10.40.1.0"] },
    { namespace: "shop", name: "web", createdAt: formatTime(c.now), ingressIPs: ["10.40.1.1"] },
  ];
  const report = () =>
    c.put({
      apiVersion: API_VERSION,
      kind: "LoadBalancerInventory",
      metadata: { name: "web", namespace: "team-platform" },
      spec: { observedAt: formatTime(c.now), services },
    });
  report();
  await c.round("team-platform", "web", POOL);

  // At rest: 30 syncs over 15 minutes change nothing (upstream churned here with growthIncrement 1).
  const before = c.writes.length;
  const snapshot = JSON.stringify([tc(c).status, c.list("IPAllocation").map((a) => a.spec)]);
  for (let i = 0; i < 30; i++) {
    c.advance(30);
    report();
    await c.round("team-platform", "web", POOL);
  }
  assert.equal(c.writes.length, before, "no create or delete at rest");
  assert.equal(
    JSON.stringify([tc(c).status, c.list("IPAllocation").map((a) => a.spec)]),
    snapshot,
    "status and children unchanged",
  );

  // A third Service goes pending: nothing at 29 s, growth once it has waited more than 30 s.
  services.push({ namespace: "shop", name: "api", createdAt: formatTime(c.now), ingressIPs: [] });
  c.advance(29);
  report();
  let res = await c.syncTenantCluster("team-platform", "web");
  assert.equal(c.list("IPAllocation").length, 2);
  assert.equal(res!.resyncAfterSeconds, 2, "resync when the threshold falls due");
  c.advance(2);
  report();
  // Granted, recorded on the allocation, then reported Allocated: a round each.
  await c.round("team-platform", "web", POOL);
  await c.round("team-platform", "web", POOL);
  const growth = c.get("IPAllocation", "team-platform", "web-lb-1")!;
  assert.equal(growth.metadata.labels["butler.butlerlabs.dev/allocation-role"], "growth");
  assert.equal(growth.status.phase, "Allocated");
  assert.deepEqual(tc(c).status.loadBalancer.addresses, [
    "10.40.1.0-10.40.1.1",
    `${growth.status.startAddress}-${growth.status.endAddress}`,
  ]);

  // MetalLB assigns it; again at rest, no churn.
  services[2]!.ingressIPs = [growth.status.startAddress];
  const settled = c.writes.length;
  for (let i = 0; i < 20; i++) {
    c.advance(60);
    report();
    await c.round("team-platform", "web", POOL);
  }
  assert.equal(c.writes.length, settled);

  // The Service goes away: the growth allocation is kept at 9m59s unused and released after 10 minutes.
  services.pop();
  report();
  await c.round("team-platform", "web", POOL);
  const unusedSince = tc(c).status.ipam.unusedSince["web-lb-1"];
  assert.equal(unusedSince, formatTime(c.now));
  c.advance(599);
  report();
  res = await c.syncTenantCluster("team-platform", "web");
  assert.ok(
    c.get("IPAllocation", "team-platform", "web-lb-1") &&
      !c.get("IPAllocation", "team-platform", "web-lb-1")!.metadata.deletionTimestamp,
  );
  assert.equal(res!.resyncAfterSeconds, 1);
  c.advance(2);
  report();
  for (let i = 0; i < 3; i++) await c.round("team-platform", "web", POOL);
  assert.equal(c.get("IPAllocation", "team-platform", "web-lb-1"), undefined, "released");
  assert.deepEqual(tc(c).status.loadBalancer.addresses, ["10.40.1.0-10.40.1.1"]);
  assert.match(metallb(c)!, /addresses:\n {4}- 10\.40\.1\.0-10\.40\.1\.1\n---/);
  assert.equal(pool(c).status.allocationCount, 2, "the pool dropped the grant");
  assert.equal(tc(c).status.ipam.nextGrowthIndex, 2, "N is never reused");
});

Deno.test("a lagging child cache never doubles growth", async () => {
  const c = setup({
    mode: "ipam",
    poolRefs: [{ name: "lab-pool" }],
    loadBalancer: { allocationMode: "elastic", initialPoolSize: 2, growthIncrement: 1 },
  });
  for (let i = 0; i < 3; i++) await c.round("team-platform", "web", POOL);
  c.put({
    apiVersion: API_VERSION,
    kind: "LoadBalancerInventory",
    metadata: { name: "web", namespace: "team-platform" },
    spec: {
      observedAt: formatTime(c.now),
      services: [
        { namespace: "a", name: "a", createdAt: "2026-11-21T08:00:00Z", ingressIPs: [] },
        { namespace: "a", name: "b", createdAt: "2026-11-21T08:00:00Z", ingressIPs: [] },
      ],
    },
  });
  await c.syncTenantCluster("team-platform", "web");
  assert.deepEqual(Object.keys(tc(c).status.ipam.requested), ["web-lb-1", "web-lb-2"]);
  // The next sync does not see the new children yet (stale cache): it must ask for the same two, not two more.
  const created = c.list("IPAllocation").filter((a) => /-lb-\d+$/.test(a.metadata.name));
  for (const a of created) c.forget(a);
  const res = await c.syncTenantCluster("team-platform", "web");
  const names = (res!.children as Obj[]).map((o) => o.metadata.name).filter((n) => /-lb-\d+$/.test(n));
  assert.deepEqual(names, ["web-lb-1", "web-lb-2"]);
});
