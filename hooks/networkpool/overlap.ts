/**
 * Pools never overlap: the addresses a NetworkPool can grant (its allocatable ranges minus its reserved ones)
 * must be disjoint from every other pool's, or two pools would grant the same address to two tenants. Admission
 * refuses a pool that would take addresses another pool can grant; the pool's sync reports `Overlapping` for a
 * pool stored before the webhook existed, and grants nothing new until it is resolved.
 *
 * @module
 */
import {
  type Family,
  formatSpan,
  grantableRanges,
  intersectRanges,
  type Range,
  readPoolSpec,
} from "../../lib/ipam/mod.ts";
import { NetworkPoolSpec } from "../../lib/api/mod.ts";

/** What a pool can grant: its family and its grantable ranges, sorted and disjoint. */
export interface PoolSpace {
  readonly family: Family;
  readonly ranges: readonly Range[];
}

/** Another pool's space, named `namespace/name`. */
export interface NamedSpace extends PoolSpace {
  readonly pool: string;
}

/** Where a pool's space meets another's first: the other pool, and the lowest overlapping range. */
export interface Overlap {
  readonly pool: string;
  readonly family: Family;
  readonly range: Range;
}

/**
 * The space of a pool spec, or `undefined` when the spec is invalid (an invalid pool grants nothing).
 *
 * @example
 * ```ts
 * poolSpace({ cidr: "10.40.0.0/24", reserved: [{ cidr: "10.40.0.0/28" }] });
 * // { family: 4, ranges: [{ start: 10.40.0.16, end: 10.40.0.255 }] }
 * ```
 */
export function poolSpace(spec: unknown): PoolSpace | undefined {
  const parsed = NetworkPoolSpec.safeParse(spec);
  if (!parsed.success) return undefined;
  const read = readPoolSpec(parsed.data);
  return read.ok ? { family: read.pool.family, ranges: grantableRanges(read.pool) } : undefined;
}

/**
 * The spaces of the pools among `pools` (`namespace/name` and the object) other than `self`; a pool whose spec
 * does not read grants nothing, and is left out.
 */
export function otherPoolSpaces(pools: Iterable<readonly [string, unknown]>, self: string): NamedSpace[] {
  const out: NamedSpace[] = [];
  for (const [key, obj] of pools) {
    const space = key === self ? undefined : poolSpace((obj as { spec?: unknown } | null)?.spec);
    if (space) out.push({ pool: key, ...space });
  }
  return out;
}

/**
 * The first place `space` meets one of `others`: the lowest overlapping address, then the pool name, so the
 * answer does not depend on the order the pools were listed in.
 */
export function firstOverlap(space: PoolSpace, others: Iterable<NamedSpace>): Overlap | undefined {
  let best: Overlap | undefined;
  for (const other of others) {
    if (other.family !== space.family) continue;
    const range = intersectRanges(space.ranges, other.ranges)[0];
    if (!range) continue;
    if (
      !best || range.start < best.range.start || (range.start === best.range.start && other.pool < best.pool)
    ) {
      best = { pool: other.pool, family: space.family, range };
    }
  }
  return best;
}

/**
 * Why a pool may not take addresses another pool can grant: the admission refusal and the `Overlapping`
 * condition say the same.
 *
 * @example
 * ```ts
 * overlapMessage({ pool: "butler-system/lab-pool", family: 4, range });
 * // 'NetworkPool butler-system/lab-pool can already grant 10.40.1.0-10.40.1.255: pools must not overlap, ...'
 * ```
 */
export function overlapMessage(o: Overlap): string {
  return `NetworkPool ${o.pool} can already grant ${
    formatSpan(o.family, o.range)
  }: pools must not overlap, or two tenants could be given the same addresses`;
}
