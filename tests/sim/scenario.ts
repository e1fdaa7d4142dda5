/**
 * One scenario run both ways: in the simulator (`replayScenario`) and against the real API server and the real
 * Metacontroller (`tests/e2e/sim_replay.e2e.ts`), one write at a time, each followed by convergence, so that both
 * worlds reach the same state and can be compared line by line. It exercises what the simulator assumes about
 * Metacontroller: children made, status written, finalizers, deletes, garbage collection of a Team's namespace,
 * and admission's refusals in the same words.
 *
 * @module
 */
import { API_VERSION } from "../../lib/butler/mod.ts";
import type { Obj } from "../../lib/plan/mod.ts";

/** A user's write: an object applied (created, or merged over the stored one), or an object deleted. */
export type Action =
  | { readonly apply: Obj; readonly refused?: true }
  | { readonly delete: { readonly kind: string; readonly namespace?: string; readonly name: string } };

const SYSTEM = "butler-system";
const POOL_BASE = "10.78.8.";

const team = (name: string, maxClusters: number): Obj => ({
  apiVersion: API_VERSION,
  kind: "Team",
  metadata: { name },
  spec: {
    displayName: `Scenario ${name}`,
    access: {
      users: [{ name: "alice@example.com", role: "admin" }, { name: "bob@example.com", role: "operator" }],
    },
    resourceLimits: { maxClusters },
    environments: [
      { name: "dev", limits: { maxClustersPerMember: 1 } },
      { name: "prod", limits: { maxClusters: 1 } },
    ],
  },
});

const cluster = (
  team: string,
  name: string,
  env: string,
  owner: string,
  extra: Record<string, string> = {},
): Obj => ({
  apiVersion: API_VERSION,
  kind: "TenantCluster",
  metadata: {
    name,
    namespace: `team-${team}`,
    labels: { "butler.butlerlabs.dev/environment": env },
    annotations: { "butler.butlerlabs.dev/owner": owner, ...extra },
  },
  spec: {
    providerConfigRef: { name: "sim-static", namespace: SYSTEM },
    kubernetesVersion: "v1.31.0",
    workers: { replicas: 1 },
  },
});

const pool = (end: number): Obj => ({
  apiVersion: API_VERSION,
  kind: "NetworkPool",
  metadata: { name: "sim-pool", namespace: SYSTEM },
  spec: {
    cidr: `${POOL_BASE}0/26`,
    reserved: [{ cidr: `${POOL_BASE}0/30`, description: "gateways" }],
    tenantAllocation: { start: `${POOL_BASE}4`, end: `${POOL_BASE}${end}` },
  },
});

/** The scenario: a pool, a static provider, two teams, clusters up to and past their limits, deletes. */
export const SCENARIO: readonly Action[] = [
  {
    apply: {
      apiVersion: "v1",
      kind: "Secret",
      metadata: { name: "sim-credentials", namespace: SYSTEM },
      stringData: { kubeconfig: "apiVersion: v1\nkind: Config\n" },
    },
  },
  { apply: pool(40) },
  {
    apply: {
      apiVersion: API_VERSION,
      kind: "ProviderConfig",
      metadata: { name: "sim-static", namespace: SYSTEM },
      spec: {
        provider: "harvester",
        credentialsRef: { name: "sim-credentials" },
        harvester: { networkName: "default/vlan78" },
        network: {
          mode: "ipam",
          poolRefs: [{ name: "sim-pool", priority: 0 }],
          loadBalancer: { allocationMode: "static", defaultPoolSize: 2 },
        },
        limits: { maxClustersPerTeam: 3 },
      },
    },
  },
  { apply: team("sim-a", 2) },
  { apply: cluster("sim-a", "c0", "dev", "alice@example.com") },
  { apply: cluster("sim-a", "c1", "prod", "bob@example.com") },
  { apply: cluster("sim-a", "c2", "dev", "bob@example.com"), refused: true },
  {
    apply: {
      apiVersion: API_VERSION,
      kind: "IPAllocation",
      metadata: {
        name: "hand-0",
        namespace: "team-sim-a",
        labels: {
          "butler.butlerlabs.dev/network-pool": "sim-pool",
          "butler.butlerlabs.dev/allocation-type": "loadbalancer",
        },
      },
      spec: {
        poolRef: { name: "sim-pool", namespace: SYSTEM },
        type: "loadbalancer",
        pinnedRange: { startAddress: `${POOL_BASE}30`, endAddress: `${POOL_BASE}31` },
      },
    },
  },
  { delete: { kind: "TenantCluster", namespace: "team-sim-a", name: "c0" } },
  { apply: cluster("sim-a", "c2", "dev", "bob@example.com") },
  {
    apply: cluster("sim-a", "c2", "prod", "bob@example.com", {
      "butler.butlerlabs.dev/migration-operation": "true",
    }),
    refused: true,
  },
  { apply: pool(62) },
  { apply: team("sim-b", 1) },
  { apply: cluster("sim-b", "c0", "prod", "alice@example.com") },
  { apply: cluster("sim-b", "c1", "dev", "alice@example.com"), refused: true },
  { delete: { kind: "Team", name: "sim-b" } },
  { delete: { kind: "IPAllocation", namespace: "team-sim-a", name: "hand-0" } },
];

/** Whether an object is one of the scenario's (or made for it). */
function ours(o: Obj): boolean {
  const ns = o.metadata.namespace ?? "";
  return ns.startsWith("team-sim-") || o.metadata.name.startsWith("sim-") ||
    o.metadata.name.startsWith("team-sim-");
}

/** `a.b.c.d` as a number, for sorting and merging IPv4 ranges. */
const v4 = (a: string) => a.split(".").reduce((n, p) => n * 256 + Number(p), 0);

/**
 * The addresses a TenantCluster's allocations hold, merged into ranges. Which of one sync's allocations the pool
 * grants first depends on which it sees first (Metacontroller creates a sync's children in no set order), so the
 * comparison is of what each cluster holds, not of which of its allocations holds what.
 */
function held(objects: readonly Obj[]): Map<string, string> {
  const by = new Map<string, [number, number][]>();
  for (const a of objects) {
    const tenant = a.metadata.labels?.["butler.butlerlabs.dev/tenant"];
    if (a.kind !== "IPAllocation" || !tenant || a.status?.phase !== "Allocated") continue;
    const key = `${a.metadata.namespace}/${tenant}`;
    by.set(key, [...(by.get(key) ?? []), [v4(a.status.startAddress), v4(a.status.endAddress)]]);
  }
  const text = (n: number) => [n >>> 24, (n >>> 16) & 255, (n >>> 8) & 255, n & 255].join(".");
  return new Map([...by].map(([key, ranges]) => {
    const merged: [number, number][] = [];
    for (const [s, e] of ranges.sort((x, y) => x[0] - y[0])) {
      const last = merged.at(-1);
      if (last && s <= last[1] + 1) last[1] = Math.max(last[1], e);
      else merged.push([s, e]);
    }
    return [key, merged.map(([s, e]) => `${text(s)}-${text(e)}`).join(",")];
  }));
}

/**
 * The state both worlds are compared by, one line per object that matters: Teams with their phase, TenantClusters
 * with their phase and the addresses they hold, IPAllocations with their phase and size (a hand-made one with its
 * range), the pool's counts, the team namespaces.
 */
export function snapshot(objects: readonly Obj[]): string[] {
  const out: string[] = [];
  const holds = held(objects);
  for (const o of objects.filter(ours)) {
    const at = `${o.metadata.namespace ? `${o.metadata.namespace}/` : ""}${o.metadata.name}`;
    const s = o.status ?? {};
    const gone = o.metadata.deletionTimestamp ? " deleting" : "";
    const lines: Record<string, () => string | undefined> = {
      Team: () => `Team ${at} ${s.phase}${gone}`,
      TenantCluster: () =>
        `TenantCluster ${at} ${s.phase} ${o.metadata.labels?.["butler.butlerlabs.dev/environment"]} holds ${
          holds.get(at) ?? "nothing"
        }${gone}`,
      IPAllocation: () =>
        `IPAllocation ${at} ${s.phase} ${
          o.spec.pinnedRange ? `${s.startAddress}-${s.endAddress}` : `${s.allocatedCount ?? 0} addresses`
        }${gone}`,
      NetworkPool: () => `NetworkPool ${at} ${s.allocatedIPs}/${s.totalIPs} in ${s.allocationCount}${gone}`,
      Namespace: () => (o.metadata.name.startsWith("team-sim-") ? `Namespace ${at}${gone}` : undefined),
    };
    const line = lines[o.kind]?.();
    if (line) out.push(line);
  }
  return out.sort();
}
