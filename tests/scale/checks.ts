/**
 * What the scale tier checks once the system has converged, as pure functions of the objects read from the API:
 * no two grants overlap across all pools, every pool's ledger equals the live IPAllocations it serves, no quota is
 * exceeded (stored clusters and the quota ledger), and which admitted clusters are not Ready.
 *
 * @module
 */
import { formatAddress, parseAddress } from "../../lib/ipam/mod.ts";
import { type DecodedGrant, readLedger } from "../../lib/pool_ledger/mod.ts";

// deno-lint-ignore no-explicit-any
type Obj = Record<string, any>;

/** One grant of one pool. */
export interface PoolGrant extends DecodedGrant {
  readonly pool: string;
}

/** Every grant of every pool (`namespace/name`); a ledger that cannot be read is a problem, named. */
export function poolGrants(pools: readonly Obj[]): { grants: PoolGrant[]; unreadable: string[] } {
  const grants: PoolGrant[] = [];
  const unreadable: string[] = [];
  for (const pool of pools) {
    const name = `${pool.metadata.namespace}/${pool.metadata.name}`;
    const read = readLedger(pool.status ?? {});
    if (!read.ok) unreadable.push(name);
    else grants.push(...read.ledger.decode().map((g) => ({ ...g, pool: name })));
  }
  return { grants, unreadable };
}

/** Pairs of grants (in any pools) that share an address, described. */
export function overlaps(grants: readonly PoolGrant[]): string[] {
  const sorted = [...grants].sort((a, b) =>
    a.family !== b.family ? (a.family < b.family ? -1 : 1) : a.range.start < b.range.start ? -1 : 1
  );
  const found: string[] = [];
  let reach: PoolGrant | undefined;
  for (const g of sorted) {
    if (reach && reach.family === g.family && g.range.start <= reach.range.end) {
      found.push(`${describe(reach)} and ${describe(g)}`);
    }
    if (!reach || reach.family !== g.family || g.range.end > reach.range.end) reach = g;
  }
  return found;
}

function describe(g: PoolGrant): string {
  return `${g.pool} ${formatAddress(g.family, g.range.start)}-${
    formatAddress(g.family, g.range.end)
  } (${g.uid})`;
}

/**
 * Where the ledgers and the IPAllocations disagree: an Allocated IPAllocation without its grant in the pool it
 * names (or with another range), and a grant whose IPAllocation does not exist.
 */
export function ledgerMismatches(grants: readonly PoolGrant[], allocations: readonly Obj[]): string[] {
  const byUid = new Map(grants.map((g) => [g.uid, g]));
  const live = new Set(allocations.map((a) => a.metadata.uid as string));
  const found: string[] = [];
  for (const a of allocations) {
    if (a.status?.phase !== "Allocated") continue;
    const key = `${a.metadata.namespace}/${a.metadata.name}`;
    const pool = `${a.spec.poolRef.namespace ?? "butler-system"}/${a.spec.poolRef.name}`;
    const g = byUid.get(a.metadata.uid);
    const start = parseAddress(a.status.startAddress ?? "")?.value;
    const end = parseAddress(a.status.endAddress ?? "")?.value;
    if (!g) found.push(`${key} is Allocated but ${pool} holds no grant for it`);
    else if (g.pool !== pool) found.push(`${key} names ${pool} but its grant is in ${g.pool}`);
    else if (g.range.start !== start || g.range.end !== end) {
      found.push(`${key} says ${a.status.startAddress}-${a.status.endAddress}, its grant is ${describe(g)}`);
    }
  }
  for (const g of grants) if (!live.has(g.uid)) found.push(`${describe(g)} is held by no IPAllocation`);
  return found;
}

/**
 * Teams whose stored TenantClusters, or whose quota ledger's reservations, exceed `spec.resourceLimits.maxClusters`,
 * and environments whose stored clusters exceed their `limits.maxClusters`.
 */
export function quotaOvershoot(
  teams: readonly Obj[],
  clusters: readonly Obj[],
  quotaLedgers: readonly Obj[],
): string[] {
  const found: string[] = [];
  for (const team of teams) {
    const ns = team.status?.namespace ?? `team-${team.metadata.name}`;
    const mine = clusters.filter((c) => c.metadata.namespace === ns);
    const max = team.spec.resourceLimits?.maxClusters;
    if (max !== undefined && mine.length > max) {
      found.push(`${ns}: ${mine.length} clusters stored, limit ${max}`);
    }
    const ledger = quotaLedgers.find((l) => l.metadata.namespace === ns);
    const reserved = Object.keys(ledger?.data ?? {}).length;
    if (max !== undefined && reserved > max) found.push(`${ns}: ${reserved} reservations, limit ${max}`);
    for (const env of team.spec.environments ?? []) {
      const envMax = env.limits?.maxClusters;
      const inEnv = mine.filter((c) => c.metadata.labels?.["butler.butlerlabs.dev/environment"] === env.name);
      if (envMax !== undefined && inEnv.length > envMax) {
        found.push(`${ns} environment ${env.name}: ${inEnv.length} clusters stored, limit ${envMax}`);
      }
    }
  }
  return found;
}

/** `namespace/name` of the clusters whose phase is not Ready. */
export function notReady(clusters: readonly Obj[]): string[] {
  return clusters.filter((c) => c.status?.phase !== "Ready").map((c) =>
    `${c.metadata.namespace}/${c.metadata.name}`
  );
}
