import { z } from "zod";
import { formatTime, parseTime, secondsUntil } from "../../lib/time/mod.ts";

/**
 * A change of the capacity figures is written at most once in this many seconds: upstream's ProviderConfig
 * controller recomputes them every 5 minutes. Every status write of a ProviderConfig re-syncs every Team and every
 * TenantCluster that relates it, none of which reads the figures, and the figures change with every grant: at 30 s,
 * the writes still falling due after a burst of 300 clusters re-synced all 300 once or twice in the minute after
 * they converged (where the steady state's requests come from:
 * docs/performance.md#measured-again-after-the-base-install-change-issue-59-2026-11-28).
 */
export const CAPACITY_REFRESH_SECONDS = 300;

/** What the referenced pools hold now, in addresses and in tenants of the ProviderConfig's footprint. */
export interface CapacityFigures {
  readonly availableIPs: number;
  readonly estimatedTenants: number;
}

/** `status.capacity`: the figures and when they were last written. */
export interface Capacity extends CapacityFigures {
  readonly lastUpdateTime: string;
}

const StoredCapacity = z.object({
  availableIPs: z.number().int(),
  estimatedTenants: z.number().int(),
  lastUpdateTime: z.string(),
});

/** The capacity to report, and when to look again if a newer figure is being held back. */
export interface ReportedCapacity {
  readonly capacity: Capacity;
  readonly resyncAfterSeconds?: number;
}

/**
 * The capacity a ProviderConfig reports: the stored figures while they still hold, or are younger than
 * {@link CAPACITY_REFRESH_SECONDS} and `mayHold` (the caller's word that nothing but the figures changed: same
 * pool condition, same spec); otherwise the fresh figures, stamped `now`. A held change is written when the
 * window ends (`resyncAfterSeconds`), so the figures are never more than 5 minutes behind.
 *
 * @example
 * ```ts
 * const stored = { availableIPs: 767, estimatedTenants: 59, lastUpdateTime: "2026-11-21T09:00:00Z" };
 * const fresh = { availableIPs: 754, estimatedTenants: 58 };
 * reportedCapacity(fresh, stored, new Date("2026-11-21T09:00:10Z"), true);
 * // { capacity: stored, resyncAfterSeconds: 290 }
 * reportedCapacity(fresh, stored, new Date("2026-11-21T09:05:00Z"), true);
 * // { capacity: { ...fresh, lastUpdateTime: "2026-11-21T09:05:00Z" } }
 * ```
 */
export function reportedCapacity(
  fresh: CapacityFigures,
  stored: unknown,
  now: Date,
  mayHold: boolean,
): ReportedCapacity {
  const previous = StoredCapacity.safeParse(stored);
  const written = previous.success ? parseTime(previous.data.lastUpdateTime) : undefined;
  if (previous.success && written) {
    const same = previous.data.availableIPs === fresh.availableIPs &&
      previous.data.estimatedTenants === fresh.estimatedTenants;
    if (same) return { capacity: previous.data };
    const due = new Date(written.getTime() + CAPACITY_REFRESH_SECONDS * 1000);
    const wait = secondsUntil(now, due);
    // A stamp from the future (an edited status, a clock set back) is not trusted to hold anything.
    if (mayHold && wait > 0 && wait <= CAPACITY_REFRESH_SECONDS) {
      return { capacity: previous.data, resyncAfterSeconds: wait };
    }
  }
  return {
    capacity: {
      availableIPs: fresh.availableIPs,
      estimatedTenants: fresh.estimatedTenants,
      lastUpdateTime: formatTime(now),
    },
  };
}
