/**
 * What a pool remembers of the grants it released (`status.releases`): a bounded history (range, holder, granted
 * and released at), the ranges still cooling down (kept out of allocation for `spec.releaseCooldownSeconds`, so
 * ARP caches, DNS records and firewall rules that still point at the old holder age out first), the holders seen
 * terminating (so the history can name them once their grant goes), and how many grants were released in all.
 *
 * @module
 */
import { z } from "zod";
import {
  type Family,
  formatSpan,
  intersectRanges,
  normalizeRanges,
  parseRange,
  type Range,
  rangeSize,
  subtractRanges,
} from "../../lib/ipam/mod.ts";
import type { DecodedGrant } from "../../lib/pool_ledger/mod.ts";
import { formatTime, parseTime } from "../../lib/time/mod.ts";

/** Releases a pool's history keeps when `spec.releaseHistoryLimit` is unset. */
export const DEFAULT_RELEASE_HISTORY = 100;
/** The most releases a history may keep (`spec.releaseHistoryLimit`'s maximum, as the CRD states it). */
export const MAX_RELEASE_HISTORY = 200;
/** The most holders recorded as terminating at once; beyond, a release is recorded by UID alone. */
export const MAX_RELEASING = 256;
/**
 * The most JSON bytes of cooling ranges. With the largest ledger there can be (1 MiB of records, 256 failures), a
 * full history and a full `releasing` map of the longest names, the pool stays under the API's 1.5 MiB object
 * limit (measured on the real API server tier); cooling ranges past this bound end their cooldown early, oldest
 * first.
 */
export const COOLING_MAX_BYTES = 64 * 1024;

/** Who held a released range. */
export interface Holder {
  readonly kind: "IPAllocation";
  readonly uid: string;
  /** Known when the pool saw the holder terminating before its grant went. */
  readonly namespace?: string;
  readonly name?: string;
}

/** One release in the history. */
export interface Release {
  readonly range: string;
  readonly holder: Holder;
  readonly grantedAt: string;
  readonly releasedAt: string;
}

/** One range cooling down since its release. */
export interface Cooling {
  readonly range: Range;
  readonly releasedAt: Date;
}

/** `status.releases` as the next status holds it. */
export interface StoredReleases {
  readonly total: number;
  readonly cooling?: readonly { range: string; releasedAt: string }[];
  readonly history: readonly Release[];
  readonly releasing?: Readonly<Record<string, string>>;
}

const CoolingEntry = z.looseObject({ range: z.string(), releasedAt: z.string() });
const ReleaseEntry = z.looseObject({
  range: z.string(),
  holder: z.looseObject({
    kind: z.literal("IPAllocation"),
    uid: z.string(),
    namespace: z.string().optional(),
    name: z.string().optional(),
  }),
  grantedAt: z.string(),
  releasedAt: z.string(),
});

/** `status.releases` as read back: each field and each entry on its own. */
export interface ReadReleases {
  readonly total: number;
  readonly cooling: readonly { readonly range: string; readonly releasedAt: string }[];
  readonly history: readonly Release[];
  readonly releasing: ReadonlyMap<string, string>;
}

/**
 * What a pool's `status.releases` holds. Each field and each entry is read on its own, and one that does not read
 * is left out: a damaged history entry never costs the cooling ranges (which keep addresses out of allocation).
 *
 * @example
 * ```ts
 * readReleases({ releases: { total: 2, history: [{ range: "x" }] } }); // { total: 2, cooling: [], history: [], releasing: Map {} }
 * ```
 */
export function readReleases(status: unknown): ReadReleases {
  const r = (status as { releases?: unknown } | null | undefined)?.releases;
  const o = (typeof r === "object" && r !== null ? r : {}) as Record<string, unknown>;
  const each = <T>(value: unknown, schema: z.ZodType<T>): T[] =>
    Array.isArray(value)
      ? value.flatMap((v) => {
        const p = schema.safeParse(v);
        return p.success ? [p.data] : [];
      })
      : [];
  const releasing = typeof o.releasing === "object" && o.releasing !== null ? o.releasing : {};
  return {
    total: typeof o.total === "number" && Number.isInteger(o.total) && o.total >= 0 ? o.total : 0,
    cooling: each(o.cooling, CoolingEntry),
    history: each(o.history, ReleaseEntry) as Release[],
    releasing: new Map(
      Object.entries(releasing).filter((e): e is [string, string] => typeof e[1] === "string"),
    ),
  };
}

/** What the previous status remembered, the cooling ranges read in the pool's family. */
interface Previous extends Omit<ReadReleases, "cooling"> {
  readonly cooling: Cooling[];
}

function readPrevious(status: Readonly<Record<string, unknown>>, family: Family): Previous {
  const read = readReleases(status);
  const cooling = read.cooling.flatMap((c) => {
    const r = parseRange(c.range);
    const at = parseTime(c.releasedAt);
    return r.ok && r.value.family === family && at
      ? [{ range: { start: r.value.start, end: r.value.end }, releasedAt: at }]
      : [];
  });
  return { ...read, cooling };
}

/** The inputs of one sync's release bookkeeping. */
export interface ReleaseInput {
  readonly status: Readonly<Record<string, unknown>>;
  readonly family: Family;
  /** The grants this sync drops (their IPAllocations are gone). */
  readonly dropped: readonly DecodedGrant[];
  /** Whether a UID still holds a grant; the `namespace/name` of holders seen terminating, by UID. */
  readonly holds: (uid: string) => boolean;
  readonly terminating: ReadonlyMap<string, string>;
  /** Where grants may be made: cooling ranges outside it are forgotten. */
  readonly allocatable: readonly Range[];
  readonly cooldownSeconds: number;
  readonly historyLimit: number;
  readonly now: Date;
}

/** The bookkeeping's result: the status field, the ranges kept out of allocation, and when the first frees. */
export interface ReleaseOutcome {
  readonly releases: StoredReleases;
  /** Cooling ranges, sorted and disjoint, inside the allocatable ranges. */
  readonly cooling: readonly Range[];
  readonly coolingIPs: bigint;
  /** Seconds until the first cooling range is free again. */
  readonly resyncAfterSeconds?: number;
}

/**
 * Records this sync's releases: each dropped grant enters the history (newest first, at most `historyLimit`,
 * named when its holder was seen terminating) and, with a cooldown, the cooling ranges; cooling ranges whose
 * cooldown has passed are freed.
 *
 * @example
 * ```ts
 * const out = recordReleases({ status: {}, family: 4, dropped, holds: () => false, terminating: new Map(),
 *   allocatable, cooldownSeconds: 300, historyLimit: 100, now });
 * out.cooling; // the dropped ranges, free again in 300 s (out.resyncAfterSeconds)
 * ```
 */
export function recordReleases(input: ReleaseInput): ReleaseOutcome {
  const prev = readPrevious(input.status, input.family);
  const now = input.now;
  const at = formatTime(now);
  const releasingNow = new Map(prev.releasing);
  for (const [uid, key] of input.terminating) {
    if (releasingNow.size >= MAX_RELEASING && !releasingNow.has(uid)) break;
    releasingNow.set(uid, key);
  }
  const released: Release[] = [...input.dropped]
    .sort((a, b) => (a.range.start < b.range.start ? -1 : 1))
    .map((g) => {
      const key = releasingNow.get(g.uid);
      const slash = key?.indexOf("/") ?? -1;
      return {
        range: formatSpan(g.family, g.range),
        holder: {
          kind: "IPAllocation" as const,
          uid: g.uid,
          ...(key && slash > 0 ? { namespace: key.slice(0, slash), name: key.slice(slash + 1) } : {}),
        },
        grantedAt: g.grantedAt,
        releasedAt: at,
      };
    });
  const history = [...released, ...prev.history].slice(0, Math.min(input.historyLimit, MAX_RELEASE_HISTORY));
  // Holders recorded while terminating are kept until their grant goes.
  const releasing = [...releasingNow].filter(([uid]) => input.holds(uid)).sort((
    [a],
    [b],
  ) => (a < b ? -1 : 1));

  const ms = input.cooldownSeconds * 1000;
  const cooling = ms <= 0 ? [] : [
    ...prev.cooling.filter((c) => now.getTime() - c.releasedAt.getTime() < ms),
    ...input.dropped.map((g) => ({ range: g.range, releasedAt: now })),
  ];
  const kept = boundCooling(cooling, input.family);
  const ranges = intersectRanges(
    normalizeRanges(kept.map((c) => c.range)),
    normalizeRanges(input.allocatable),
  );
  const soonest = kept.reduce((m, c) => Math.min(m, c.releasedAt.getTime() + ms), Infinity);
  return {
    releases: {
      total: prev.total + input.dropped.length,
      ...(kept.length
        ? {
          cooling: kept.map((c) => ({
            range: formatSpan(input.family, c.range),
            releasedAt: formatTime(c.releasedAt),
          })),
        }
        : {}),
      history,
      ...(releasing.length ? { releasing: Object.fromEntries(releasing) } : {}),
    },
    cooling: ranges,
    coolingIPs: ranges.reduce((n, r) => n + rangeSize(r), 0n),
    ...(kept.length ? { resyncAfterSeconds: Math.max(1, Math.ceil((soonest - now.getTime()) / 1000)) } : {}),
  };
}

/** Cooling ranges in address order, the oldest released dropped first while they take more than the bound. */
function boundCooling(cooling: readonly Cooling[], family: Family): Cooling[] {
  // As stored: `{"range":"…","releasedAt":"…"}` and a comma.
  const bytes = (c: Cooling) =>
    JSON.stringify({ range: formatSpan(family, c.range), releasedAt: formatTime(c.releasedAt) }).length + 1;
  let total = cooling.reduce((n, c) => n + bytes(c), 0);
  const byAge = [...cooling].sort((a, b) => a.releasedAt.getTime() - b.releasedAt.getTime());
  const dropped = new Set<Cooling>();
  for (const c of byAge) {
    if (total <= COOLING_MAX_BYTES) break;
    dropped.add(c);
    total -= bytes(c);
  }
  return cooling.filter((c) => !dropped.has(c))
    .sort((a, b) => (a.range.start < b.range.start ? -1 : a.range.start > b.range.start ? 1 : 0));
}

/** `grants` with the cooling ranges that do not overlap them (a range cools only where nothing holds it). */
export function withCooling(grants: readonly Range[], cooling: readonly Range[]): Range[] {
  if (!cooling.length) return [...grants];
  const free = subtractRanges(cooling, normalizeRanges(grants));
  return [...grants, ...free].sort((a, b) => (a.start < b.start ? -1 : a.start > b.start ? 1 : 0));
}
