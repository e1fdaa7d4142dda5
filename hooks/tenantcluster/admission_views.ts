/**
 * What TenantCluster admission reads, counted once: the watch cache hands out the same objects and lists until
 * they change, and the reviews of a group read the same ones, so each cluster's load, each view's index, each
 * Team and ProviderConfig spec and each resolved shape is computed once and looked up by the next review. Every
 * memo is keyed by the object read (never by a name), so a changed object is a new key; those keyed by what a
 * review sends are bounded.
 *
 * @module
 */
import type { Reads } from "../../lib/http/mod.ts";
import { ProviderConfigSpec, TeamSpec } from "../../lib/api/mod.ts";
import type { ClusterObject, ShapeMemo } from "./footprint.ts";
import { type ClusterIndex, type CountedCluster, indexClusters } from "./usage.ts";
import { readQuotaLedger, reservationFresh } from "./reservations.ts";

/** The reads' key prefix of the Team's default ProviderConfig, by the namespace it is looked up in. */
export const TEAM_PROVIDER = "teamProvider:";

/** The name of the Team's default ProviderConfig, once the Team has been read. */
export function teamDefaultName(team: unknown): string | undefined {
  const name = (team as { spec?: { providerConfigRef?: { name?: unknown } } } | undefined)?.spec
    ?.providerConfigRef?.name;
  return typeof name === "string" && name ? name : undefined;
}

/**
 * Each cluster's load as last computed, and what it was computed from. The watch cache keeps an object as the same
 * value until it changes, and the reviews of a team read the same objects: a review then counts a namespace of
 * clusters with one lookup each instead of resolving each one's shape again.
 */
const COUNTED = new WeakMap<object, { basis: readonly unknown[]; counted: CountedCluster }>();

/** What a cluster's load depends on besides the cluster: the Team and which Team defaults exist. */
export function basisOf(reads: Reads): unknown[] {
  // A Team is the same whether it came from the cache or from the API, as long as its version is.
  const version = (o: unknown) =>
    (o as { metadata?: { resourceVersion?: string } } | undefined)?.metadata
      ?.resourceVersion ?? o;
  return [
    version(reads.team),
    ...Object.keys(reads).filter((k) => k.startsWith(TEAM_PROVIDER)).sort().map((k) =>
      reads[k] !== undefined
    ),
  ];
}

const sameBasis = (a: readonly unknown[], b: readonly unknown[]) =>
  a.length === b.length && a.every((v, i) => v === b[i]);

function counted(
  c: ClusterObject,
  basis: readonly unknown[],
  compute: () => CountedCluster,
): CountedCluster {
  const known = COUNTED.get(c);
  if (known && sameBasis(known.basis, basis)) return known.counted;
  const fresh = compute();
  COUNTED.set(c, { basis, counted: fresh });
  return fresh;
}

/**
 * Each view of the clusters as last indexed, and on what basis. A view is the same list while the namespace does
 * not change (the watch cache hands it out until then, and a group's reviews share one read), so the reviews of a
 * group count the namespace once between them.
 */
const INDEXED = new WeakMap<object, { basis: readonly unknown[]; index: ClusterIndex }>();

/** A view of the clusters indexed, each counted by `count` unless known on this basis. */
export function indexed(
  items: ClusterObject[],
  basis: readonly unknown[],
  count: (c: ClusterObject) => CountedCluster,
): ClusterIndex {
  const known = INDEXED.get(items);
  if (known && sameBasis(known.basis, basis)) return known.index;
  const index = indexClusters(items.map((c) => counted(c, basis, () => count(c))));
  INDEXED.set(items, { basis, index });
  return index;
}

/**
 * A spec as parsed, by the object read: a Team or ProviderConfig is the same object for every review that reads
 * it until it changes, and parsing is not free. Parsed values are never changed.
 */
function parsedOnce<T>(schema: { safeParse(v: unknown): T }, memo: WeakMap<object, T>, spec: unknown): T {
  if (typeof spec !== "object" || spec === null) return schema.safeParse(spec);
  let parsed = memo.get(spec);
  if (parsed === undefined) memo.set(spec, parsed = schema.safeParse(spec));
  return parsed;
}

const TEAM_SPECS = new WeakMap<object, ReturnType<typeof TeamSpec.safeParse>>();
const PROVIDER_SPECS = new WeakMap<object, ReturnType<typeof ProviderConfigSpec.safeParse>>();

/** A Team's spec as parsed, once per object read. */
export function parseTeamSpec(spec: unknown): ReturnType<typeof TeamSpec.safeParse> {
  return parsedOnce(TeamSpec, TEAM_SPECS, spec);
}

/** A ProviderConfig's spec as parsed, once per object read. */
export function parseProviderSpec(spec: unknown): ReturnType<typeof ProviderConfigSpec.safeParse> {
  return parsedOnce(ProviderConfigSpec, PROVIDER_SPECS, spec);
}

/** Shapes resolved under one Team spec as parsed; cleared when large (each distinct cluster shape adds one). */
const SHAPES = new WeakMap<object, ShapeMemo>();
const SHAPES_MAX = 4096;

/** The shapes resolved under one Team spec as parsed. */
export function shapeMemo(team: object): ShapeMemo {
  let memo = SHAPES.get(team);
  if (!memo || memo.size > SHAPES_MAX) SHAPES.set(team, memo = new Map());
  return memo;
}

/** The view of the namespace's TenantClusters a decision uses, and whether it is live. */
export function clusterView(reads: Reads): { items: ClusterObject[]; live: boolean } {
  const items = reads.clustersLive ?? reads.clusters;
  return { items: Array.isArray(items) ? items as ClusterObject[] : [], live: "clustersLive" in reads };
}

/**
 * Whether the ledger holds a reservation past its grace whose cluster the (cached) view does not show: only a
 * live read can tell a create that failed from a cluster the cache has not seen yet.
 */
export function unseenExpired(reads: Reads, self: string, now: Date): boolean {
  let names: ReadonlySet<string | undefined> | undefined;
  for (const [name, r] of readQuotaLedger(reads.ledger).reservations) {
    if (name === self || reservationFresh(r, now)) continue;
    names ??= namesIn(clusterView(reads).items);
    if (!names.has(name)) return true;
  }
  return false;
}

/** The names in a view of the clusters, once per view (every review of a group plans on the same one). */
function namesIn(items: ClusterObject[]): ReadonlySet<string | undefined> {
  let names = NAMES.get(items);
  if (!names) NAMES.set(items, names = new Set(items.map((c) => c.metadata?.name)));
  return names;
}

const NAMES = new WeakMap<object, ReadonlySet<string | undefined>>();
