/**
 * The objects of one scale run, as a platform team sets them up: NetworkPools in butler-system, a ProviderConfig
 * on each (static IPAM on even pools, elastic on odd ones), Teams whose default provider spreads them over the
 * pools, and TenantClusters that mostly rely on their Team's default (every third names its provider). Some
 * creates are refused on purpose: every fifth Team's `maxClusters` is two short of its clusters, and other Teams
 * put two clusters into an environment limited to one. Pool 0 is sized to fill up about halfway through its
 * clusters, and is grown to {@linkcode GROWN_PREFIX} when it does.
 *
 * Pure: the same size gives the same objects.
 *
 * @module
 */
import { API_VERSION as API } from "../../lib/butler/mod.ts";

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;

/** How big a run is. */
export interface ScaleSize {
  readonly clusters: number;
  readonly teams: number;
  readonly pools: number;
}

/** Addresses one static-IPAM cluster takes: 8 for its load balancers, 5 for its nodes (the pool's defaults). */
export const STATIC_IPS_PER_CLUSTER = 13;
/** The prefix pool 0 grows to once it is full. */
export const GROWN_PREFIX = 16;

/** One TenantCluster to create, and whether admission must refuse it (and why). */
export interface PlannedCluster {
  readonly object: Obj;
  readonly team: number;
  readonly pool: number;
  /** Why admission must refuse it: the team's limit or the environment's; undefined when it must be admitted. */
  readonly refused?: "team" | "environment";
}

/** Everything one run creates, in the order it is created. */
export interface Workload {
  readonly secrets: Obj[];
  readonly pools: Obj[];
  readonly providers: Obj[];
  readonly teams: Obj[];
  /** In creation order: the teams interleaved, as many platform users would create them. */
  readonly clusters: PlannedCluster[];
}

/** The pool of index `p`: 10.(100+p).0.0/16, except pool 0, which starts small. */
export function poolCidr(p: number, size: ScaleSize): string {
  if (p !== 0) return `10.${100 + p}.0.0/16`;
  const onPool0 = clustersOfPool(0, size);
  // About half of pool 0's clusters fit before it fills: a power of two no larger than half their addresses.
  const half = Math.max(16, (onPool0 * STATIC_IPS_PER_CLUSTER) / 2);
  return `10.100.0.0/${32 - Math.floor(Math.log2(half))}`;
}

/** How many clusters use pool `p` (Team t's default is pool t mod P). */
function clustersOfPool(p: number, size: ScaleSize): number {
  let n = 0;
  for (let i = 0; i < size.clusters; i++) if ((i % size.teams) % size.pools === p) n++;
  return n;
}

/** The team namespace of Team `t`. */
export function teamNamespace(t: number): string {
  return `team-${teamName(t)}`;
}

/** The name of Team `t`. */
export function teamName(t: number): string {
  return `scale-${t}`;
}

/** The objects of a run of `size`. */
export function workload(size: ScaleSize): Workload {
  const { clusters: n, teams: t, pools: p } = size;
  if (n < 1 || t < 1 || p < 1 || t > n) {
    throw new Error(`a run needs 1 <= teams <= clusters and a pool: ${size}`);
  }
  const perTeam = (team: number) => Math.floor(n / t) + (team < n % t ? 1 : 0);
  const secrets = [
    { name: "scale-harvester", key: "kubeconfig", value: "apiVersion: v1" },
    { name: "scale-nutanix", key: "username", value: "admin" },
  ].map(({ name, key, value }) => ({
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name, namespace: "butler-system" },
    stringData: { [key]: value, ...(key === "username" ? { password: "secret" } : {}) },
  }));
  const pools = Array.from({ length: p }, (_, i) => ({
    apiVersion: API,
    kind: "NetworkPool",
    metadata: { name: `scale-pool-${i}`, namespace: "butler-system" },
    spec: {
      cidr: poolCidr(i, size),
      tenantAllocation: { defaults: { nodesPerTenant: 5, lbPoolPerTenant: 8 } },
    },
  }));
  const providers = Array.from({ length: p }, (_, i) => provider(i));
  const teams = Array.from({ length: t }, (_, i) => team(i, perTeam(i), p));
  const clusters: PlannedCluster[] = [];
  const made = new Array<number>(t).fill(0);
  for (let i = 0; i < n; i++) {
    const team = i % t;
    const k = made[team]!++;
    const cap = teamCap(team, perTeam(team));
    const prod = team % 5 !== 0 && k < 2;
    const refused = cap !== undefined && k >= cap ? "team" : prod && k === 1 ? "environment" : undefined;
    const object: Obj = {
      apiVersion: API,
      kind: "TenantCluster",
      metadata: {
        name: `c-${i}`,
        namespace: teamNamespace(team),
        // The Teams define environments, so every cluster must name one (the seed's rule).
        labels: { "butler.butlerlabs.dev/environment": prod ? "prod" : "dev" },
      },
      spec: {
        kubernetesVersion: "v1.31.0",
        workers: { replicas: 2 },
        // Every third names its provider; the others rely on their Team's default, the common path.
        ...(i % 3 === 0 ? { providerConfigRef: { name: `scale-${team % p}` } } : {}),
      },
    };
    clusters.push({ object, team, pool: team % p, ...(refused ? { refused } : {}) });
  }
  return { secrets, pools, providers, teams, clusters };
}

/** Every fifth Team may hold two clusters fewer than it is given. */
function teamCap(team: number, clusters: number): number | undefined {
  return team % 5 === 0 ? Math.max(0, clusters - 2) : undefined;
}

function provider(i: number): Obj {
  const network = {
    mode: "ipam",
    poolRefs: [{ name: `scale-pool-${i}`, priority: 0 }],
  };
  return {
    apiVersion: API,
    kind: "ProviderConfig",
    metadata: { name: `scale-${i}`, namespace: "butler-system" },
    spec: i % 2 === 0
      ? {
        provider: "harvester",
        credentialsRef: { name: "scale-harvester" },
        harvester: { networkName: "default/vlan40-workloads" },
        network: { ...network, loadBalancer: { defaultPoolSize: 8, allocationMode: "static" } },
      }
      : {
        provider: "nutanix",
        credentialsRef: { name: "scale-nutanix" },
        nutanix: {
          endpoint: "https://prism.example.com",
          clusterUUID: "a1b2c3d4-e5f6-7890-abcd-ef1234567890",
          subnetUUID: "f0e1d2c3-b4a5-6789-0fed-cba987654321",
        },
        network: {
          ...network,
          loadBalancer: { allocationMode: "elastic", initialPoolSize: 2, growthIncrement: 1 },
          quotaPerTenant: { maxLoadBalancerIPs: 8 },
        },
      },
  };
}

function team(i: number, clusters: number, pools: number): Obj {
  const cap = teamCap(i, clusters);
  return {
    apiVersion: API,
    kind: "Team",
    metadata: { name: teamName(i) },
    spec: {
      access: { users: [{ name: "alice@example.com", role: "admin" }] },
      providerConfigRef: { name: `scale-${i % pools}` },
      ...(cap === undefined ? {} : { resourceLimits: { maxClusters: cap } }),
      environments: [{ name: "dev" }, { name: "prod", limits: { maxClusters: 1 } }],
    },
  };
}
