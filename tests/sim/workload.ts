/**
 * What the simulated users write: a small world (three teams, three pools, two ProviderConfigs, four cluster names
 * per team) so that names collide, pools run out and limits are reached often. Every builder is a pure function of
 * the choices it is given.
 *
 * @module
 */
import { API_VERSION } from "../../lib/butler/mod.ts";
import type { Obj } from "../../lib/plan/mod.ts";

export const SYSTEM = "butler-system";
export const TEAMS = ["t0", "t1", "t2"] as const;
export const MEMBERS = ["alice@example.com", "bob@example.com", "carol@example.com"] as const;
export const CLUSTERS = ["c0", "c1", "c2", "c3"] as const;
export const ENVIRONMENTS = ["dev", "prod"] as const;

/**
 * Four /26 pools, apart; each allocates from .4 to .40 at first and may grow to .62. The first three are in
 * butler-system; the fourth, `nodes`, serves Cluster API claims in their namespace.
 */
export const POOLS = ["p0", "p1", "p2", "nodes"] as const;
const poolBase = (i: number) => `10.77.${i}.`;

/** The namespace of a pool of {@linkcode POOLS}. */
export function poolNamespace(name: string): string {
  return name === "nodes" ? CAPI_NAMESPACE : SYSTEM;
}

/** Two ProviderConfigs: one static (2 LB addresses), one elastic (1, growing by 1 up to 3), both in IPAM mode. */
export const PROVIDERS = [
  { name: "pc-static", pool: "p0", elastic: false },
  { name: "pc-elastic", pool: "p1", elastic: true },
] as const;

/** The credentials Secret both ProviderConfigs name. */
export function credentials(): Obj {
  return {
    apiVersion: "v1",
    kind: "Secret",
    metadata: { name: "sim-credentials", namespace: SYSTEM },
    stringData: { kubeconfig: "apiVersion: v1\nkind: Config\n" },
  };
}

/** A team with limits chosen by `b`. */
export function team(name: string, b: number): Obj {
  return {
    apiVersion: API_VERSION,
    kind: "Team",
    metadata: { name },
    spec: {
      displayName: `Team ${name}`,
      access: { users: MEMBERS.map((m, i) => ({ name: m, role: i === 0 ? "admin" : "operator" })) },
      resourceLimits: { maxClusters: 1 + (b % 4), maxTotalNodes: 3 + ((b >>> 1) % 4) },
      environments: [
        { name: "dev", limits: { maxClustersPerMember: 1 + ((b >>> 2) % 2) } },
        { name: "prod", limits: { maxClusters: 1 + ((b >>> 3) % 2), maxClustersPerMember: 1 } },
      ],
    },
  };
}

/** A pool: its allocation range ends at .40, or at .62 once grown; its cooldown chosen by `b`. */
export function pool(name: string, b: number, grown = false): Obj {
  const i = POOLS.indexOf(name as typeof POOLS[number]);
  const base = poolBase(i);
  return {
    apiVersion: API_VERSION,
    kind: "NetworkPool",
    metadata: { name, namespace: poolNamespace(name) },
    spec: {
      cidr: `${base}0/26`,
      reserved: [{ cidr: `${base}0/30`, description: "gateways" }],
      tenantAllocation: { start: `${base}4`, end: `${base}${grown ? 62 : 40}` },
      releaseCooldownSeconds: [0, 60, 300][b % 3],
    },
  };
}

/** A ProviderConfig of {@linkcode PROVIDERS}. */
export function provider(p: typeof PROVIDERS[number]): Obj {
  return {
    apiVersion: API_VERSION,
    kind: "ProviderConfig",
    metadata: { name: p.name, namespace: SYSTEM },
    spec: {
      provider: "harvester",
      credentialsRef: { name: "sim-credentials" },
      harvester: { networkName: "default/vlan77" },
      network: {
        mode: "ipam",
        poolRefs: [{ name: p.pool, priority: 0 }],
        loadBalancer: p.elastic
          ? { allocationMode: "elastic", initialPoolSize: 1, growthIncrement: 1, defaultPoolSize: 3 }
          : { allocationMode: "static", defaultPoolSize: 2 },
        quotaPerTenant: { maxLoadBalancerIPs: 3 },
      },
      limits: { maxClustersPerTeam: 3 },
    },
  };
}

/** A TenantCluster in a team namespace, its environment, owner, provider and size chosen by `b`. */
export function tenantCluster(namespace: string, name: string, b: number): Obj {
  const env = [undefined, "dev", "prod"][b % 3];
  return {
    apiVersion: API_VERSION,
    kind: "TenantCluster",
    metadata: {
      name,
      namespace,
      ...(env ? { labels: { "butler.butlerlabs.dev/environment": env } } : {}),
      annotations: { "butler.butlerlabs.dev/owner": MEMBERS[(b >>> 2) % 3] },
    },
    spec: {
      providerConfigRef: { name: PROVIDERS[(b >>> 4) % 2]!.name, namespace: SYSTEM },
      kubernetesVersion: "v1.31.0",
      workers: { replicas: 1 + ((b >>> 5) % 3) },
    },
  };
}

/** A LoadBalancerInventory: `services` Services, the first `pending` of them without an address. */
export function inventory(cluster: Obj, services: number, pending: number, observedAt: string): Obj {
  return {
    apiVersion: API_VERSION,
    kind: "LoadBalancerInventory",
    metadata: { name: cluster.metadata.name, namespace: cluster.metadata.namespace },
    spec: {
      observedAt,
      services: Array.from({ length: services }, (_, i) => ({
        namespace: "default",
        name: `svc-${i}`,
        createdAt: cluster.metadata.creationTimestamp,
        ...(i < pending ? {} : { ingressIPs: [] }),
      })),
    },
  };
}

/** An IPAllocation made by hand in a team namespace: dynamic (`count`) or pinned to a range, chosen by `b`. */
export function handAllocation(namespace: string, b: number): Obj {
  const poolName = POOLS[b % 3]!;
  const i = POOLS.indexOf(poolName);
  const pinned = (b >>> 2) % 2 === 1;
  const start = 4 + ((b >>> 3) % 30);
  return {
    apiVersion: API_VERSION,
    kind: "IPAllocation",
    metadata: {
      name: `hand-${(b >>> 8) % 3}`,
      namespace,
      labels: {
        "butler.butlerlabs.dev/network-pool": poolName,
        "butler.butlerlabs.dev/allocation-type": "loadbalancer",
      },
    },
    spec: {
      poolRef: { name: poolName, namespace: SYSTEM },
      type: "loadbalancer",
      ...(pinned
        ? {
          pinnedRange: { startAddress: `${poolBase(i)}${start}`, endAddress: `${poolBase(i)}${start + 1}` },
        }
        : { count: 1 + ((b >>> 3) % 3) }),
    },
  };
}

/** Cluster API's IPAM group version, and the namespace its claims are made in. */
export const CAPI_IPAM = "ipam.cluster.x-k8s.io/v1beta2";
export const CAPI_NAMESPACE = "capi-prod";

/** A Cluster API IPAddressClaim on one of the pools, by name and pool chosen by `b`. */
export function claim(b: number): Obj {
  return {
    apiVersion: CAPI_IPAM,
    kind: "IPAddressClaim",
    metadata: { name: `node-${b % 4}`, namespace: CAPI_NAMESPACE },
    spec: {
      clusterName: "prod",
      // Mostly the pool of the claim's namespace; now and then one it may not use.
      poolRef: {
        apiGroup: "butler.butlerlabs.dev",
        kind: "NetworkPool",
        name: (b >>> 2) % 4 ? "nodes" : "p0",
      },
    },
  };
}
