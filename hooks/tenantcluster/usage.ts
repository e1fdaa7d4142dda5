/**
 * What a team uses, as TenantCluster admission counts it against its limits: the TenantClusters that exist (not
 * being deleted) and the quota ledger's reservations, apart from the cluster under review.
 *
 * The checks read counts and sums (clusters, nodes, CPU, memory, storage; on a provider, in an environment, of a
 * member), never single loads: so usage is kept as a {@linkcode Usage} of totals. The stored clusters' totals are
 * counted once per view of the namespace ({@linkcode indexClusters}), and each review adds what the ledger
 * changes on top of them, which costs the reservations in flight, not the team's clusters: the way Kubernetes'
 * ResourceQuota admission adds a request to the quota's recorded usage instead of counting the namespace again.
 * Sums are exact (nano-unit integers), so the order in which loads are added never shows in a message.
 *
 * @module
 */
import { compare, parseQuantity, type Quantity, ZERO } from "../../lib/quantity/mod.ts";
import { type Footprint, type QuotaLedger, reservationFresh } from "./reservations.ts";

/** A footprint with exact quantities, as the checks add them up (a {@linkcode Footprint} is its ledger text). */
export interface Load {
  readonly env?: string;
  readonly owner?: string;
  readonly provider?: string;
  readonly nodes: number;
  readonly cpu: Quantity;
  readonly memory: Quantity;
  readonly storage: Quantity;
}

const q = (text: string): Quantity => {
  const p = parseQuantity(text);
  return p.ok ? p.value : ZERO;
};

/** A ledger footprint as a {@linkcode Load}. */
export function loadOf(f: Footprint): Load {
  // A ledger's reservations are read once and counted by every review of a group: parsed once each.
  let load = LOADS.get(f);
  if (!load) LOADS.set(f, load = { ...f, cpu: q(f.cpu), memory: q(f.memory), storage: q(f.storage) });
  return load;
}

const LOADS = new WeakMap<Footprint, Load>();

/** Whether a stored cluster's load already covers its reservation in every dimension (the reservation is spent). */
export function covers(stored: Load, reserved: Load): boolean {
  return stored.nodes >= reserved.nodes && compare(stored.cpu, reserved.cpu) >= 0 &&
    compare(stored.memory, reserved.memory) >= 0 && compare(stored.storage, reserved.storage) >= 0 &&
    stored.env === reserved.env && stored.owner === reserved.owner && stored.provider === reserved.provider;
}

/** Where a stored cluster still counts while its fresh reservation moves it. */
export interface StillPlaced {
  /** Its environment, when the reservation moves it to another. */
  readonly env?: string;
  /** Its member's count in its environment (`[env, owner]`), when the reservation moves it or hands it over. */
  readonly member?: readonly [string, string];
}

/**
 * Where a stored cluster still counts while its fresh reservation moves it to another environment or hands it to
 * another owner (the reservation may be of an update the API server never stored); `undefined` when it does not
 * move. The provider is not compared: admission resolves a stored cluster's provider from its recorded status and a
 * new one's from the Team's defaults, so the two keys may differ for the same cluster.
 *
 * @example
 * ```ts
 * stillPlaced({ ...load, env: "prod", owner: "c" }, { ...load, env: "dev", owner: "c" }); // { env: "prod", member: ["prod", "c"] }
 * ```
 */
export function stillPlaced(stored: Load, reserved: Load): StillPlaced | undefined {
  if (stored.env === undefined) return undefined;
  const member = stored.owner === undefined ? undefined : [stored.env, stored.owner] as const;
  if (reserved.env !== stored.env) return { env: stored.env, ...(member ? { member } : {}) };
  return member && reserved.owner !== stored.owner ? { member } : undefined;
}

/** A stored cluster with a fresh reservation of its own: the reservation's labels, the larger of each dimension. */
function larger(stored: Load, reserved: Load): Load {
  const max = (a: Quantity, b: Quantity) => compare(a, b) >= 0 ? a : b;
  return {
    ...reserved,
    nodes: Math.max(stored.nodes, reserved.nodes),
    cpu: max(stored.cpu, reserved.cpu),
    memory: max(stored.memory, reserved.memory),
    storage: max(stored.storage, reserved.storage),
  };
}

/** The quantities a {@linkcode Usage} sums. */
export type Dimension = "cpu" | "memory" | "storage";

/** What the limits compare with: the team's loads as counts and sums, whole and by provider, environment, member. */
export interface Usage {
  /** Clusters counted (stored and reserved). */
  readonly clusters: number;
  /** Their worker nodes. */
  readonly nodes: number;
  /** The sum of one quantity; binary when any load's was (as `add` formats it). */
  total(dimension: Dimension): Quantity;
  /** Clusters and nodes on one ProviderConfig (`namespace/name`). */
  onProvider(key: string): { readonly clusters: number; readonly nodes: number };
  /** Clusters in one environment. */
  inEnvironment(env: string): number;
  /** Clusters one member owns in one environment. */
  ownedIn(env: string, owner: string): number;
}

const DIMENSIONS: readonly Dimension[] = ["cpu", "memory", "storage"];
const memberKey = (env: string, owner: string) => `${env}\u0000${owner}`;

/** Counts and sums of loads added (or taken away: `sign` -1), kept exact. */
class Tally {
  clusters = 0;
  nodes = 0;
  readonly nanos = { cpu: 0n, memory: 0n, storage: 0n };
  /** How many loads counted have a binary quantity, by dimension: a sum is binary while one is. */
  readonly binaries = { cpu: 0, memory: 0, storage: 0 };
  readonly providers = new Map<string, { clusters: number; nodes: number }>();
  readonly envs = new Map<string, number>();
  readonly members = new Map<string, number>();

  add(l: Load, sign: 1 | -1 = 1): void {
    this.clusters += sign;
    this.nodes += sign * l.nodes;
    for (const d of DIMENSIONS) {
      const v = l[d];
      this.nanos[d] += sign > 0 ? v.nanos : -v.nanos;
      if (v.binary) this.binaries[d] += sign;
    }
    if (l.provider !== undefined) {
      const p = this.providers.get(l.provider);
      if (p) {
        p.clusters += sign;
        p.nodes += sign * l.nodes;
      } else this.providers.set(l.provider, { clusters: sign, nodes: sign * l.nodes });
    }
    if (l.env !== undefined) {
      bump(this.envs, l.env, sign);
      if (l.owner !== undefined) bump(this.members, memberKey(l.env, l.owner), sign);
    }
  }

  /** Counts where a moving cluster still is: its environment and its member's count there, not the totals. */
  still(p: StillPlaced): void {
    if (p.env !== undefined) bump(this.envs, p.env, 1);
    if (p.member) bump(this.members, memberKey(...p.member), 1);
  }

  /** Counts a cluster (and its nodes) on a ProviderConfig it is moving from, not in the totals. */
  onProvider(key: string, nodes: number): void {
    const p = this.providers.get(key);
    if (p) {
      p.clusters++;
      p.nodes += nodes;
    } else this.providers.set(key, { clusters: 1, nodes });
  }
}

function bump(counts: Map<string, number>, key: string, by: number): void {
  counts.set(key, (counts.get(key) ?? 0) + by);
}

/** The usage of `base` and `delta` together. */
function layered(base: Tally, delta: Tally): Usage {
  return {
    clusters: base.clusters + delta.clusters,
    nodes: base.nodes + delta.nodes,
    total: (d) => ({
      nanos: base.nanos[d] + delta.nanos[d],
      binary: base.binaries[d] + delta.binaries[d] > 0,
    }),
    onProvider: (key) => {
      const a = base.providers.get(key), b = delta.providers.get(key);
      return { clusters: (a?.clusters ?? 0) + (b?.clusters ?? 0), nodes: (a?.nodes ?? 0) + (b?.nodes ?? 0) };
    },
    inEnvironment: (env) => (base.envs.get(env) ?? 0) + (delta.envs.get(env) ?? 0),
    ownedIn: (env, owner) => {
      const k = memberKey(env, owner);
      return (base.members.get(k) ?? 0) + (delta.members.get(k) ?? 0);
    },
  };
}

/**
 * The usage of a list of loads, as counted one by one, and where clusters moving elsewhere still are
 * ({@linkcode stillPlaced}).
 */
export function usageOfLoads(loads: Iterable<Load>, still: Iterable<StillPlaced> = []): Usage {
  const t = new Tally();
  for (const l of loads) t.add(l);
  for (const p of still) t.still(p);
  return layered(t, new Tally());
}

/** A TenantCluster as usage counts it. */
export interface CountedCluster {
  readonly name: string;
  readonly deleting: boolean;
  readonly load: Load;
  readonly version?: string | undefined;
}

/** A view of a namespace's TenantClusters, indexed once: by name, and the totals of those not being deleted. */
export interface ClusterIndex {
  readonly clusters: readonly CountedCluster[];
  readonly byName: ReadonlyMap<string, CountedCluster>;
  /** Every cluster not being deleted, counted. */
  readonly stored: Tally;
}

/**
 * Indexes a view of the clusters. Names are unique in a namespace; should a view repeat one, the last counts.
 *
 * @example
 * ```ts
 * const index = indexClusters([{ name: "a", deleting: false, load }]);
 * usageOf(index, ledger, "b", now).clusters; // 1 (plus the ledger's reservations for clusters not stored)
 * ```
 */
export function indexClusters(clusters: readonly CountedCluster[]): ClusterIndex {
  const byName = new Map<string, CountedCluster>();
  for (const c of clusters) byName.set(c.name, c);
  const stored = new Tally();
  for (const c of byName.values()) if (!c.deleting) stored.add(c.load);
  return { clusters, byName, stored };
}

/**
 * The loads the team already uses, apart from `self`: every TenantCluster that exists and is not being deleted
 * (with a fresh reservation of its own, the larger of the two per dimension: a scale-up in flight; one that moves it
 * to another environment or owner counts it in both, once in the totals: a move in flight), and every
 * fresh reservation whose cluster has not appeared yet. With a view that may lag (`live` false), every reservation
 * whose cluster is not in it counts, however old.
 *
 * Costs the ledger's reservations, not the view's clusters (their totals are the index's).
 */
export function usageOf(
  index: ClusterIndex,
  ledger: QuotaLedger,
  self: string,
  now: Date,
  live = true,
): Usage {
  const delta = new Tally();
  const own = index.byName.get(self);
  if (own && !own.deleting) delta.add(own.load, -1);
  for (const [name, r] of ledger.reservations) {
    if (name === self) continue;
    const c = index.byName.get(name);
    if (!c) {
      // Past its grace, a reservation stops counting only where a live read shows its cluster was never stored.
      if (!live || reservationFresh(r, now)) delta.add(loadOf(r));
      continue;
    }
    if (c.deleting || !reservationFresh(r, now)) continue;
    const reserved = loadOf(r);
    if (covers(c.load, reserved)) continue;
    delta.add(c.load, -1);
    delta.add(larger(c.load, reserved));
    // A move in flight counts where the cluster is too: its reservation may be of an update never stored.
    const still = stillPlaced(c.load, reserved);
    if (still) delta.still(still);
  }
  return layered(index.stored, delta);
}

/** Usage that grows as claims are counted on top of an index ({@linkcode growingUsage}). */
export interface GrowingUsage {
  /** The usage so far. */
  usage(): Usage;
  /** Counts a load (or takes one away: `sign` -1). */
  add(load: Load, sign?: 1 | -1): void;
  /**
   * Counts a cluster that has `from` as if it may have either: the larger of each dimension, and where it moves to
   * as well as where it is (environment, member, ProviderConfig).
   */
  grow(from: Load, to: Load): void;
}

/**
 * The usage of an index's clusters, and of loads added one by one after them: `usage()` is the usage so far, so a
 * walk over claims checks each against those before it without counting again.
 */
export function growingUsage(index: ClusterIndex): GrowingUsage {
  const delta = new Tally();
  return {
    usage: () => layered(index.stored, delta),
    add: (load, sign = 1) => delta.add(load, sign),
    grow: (from, to) => {
      delta.add(from, -1);
      delta.add(larger(from, to));
      const still = stillPlaced(from, to);
      if (still) delta.still(still);
      if (from.provider !== undefined && from.provider !== to.provider) {
        delta.onProvider(from.provider, from.nodes);
      }
    },
  };
}
