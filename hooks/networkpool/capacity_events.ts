import { z } from "zod";
import { KINDS } from "../../lib/butler/mod.ts";
import type { ConditionInput } from "../../lib/conditions/mod.ts";
import type { EventSignal } from "../../lib/signals/mod.ts";
import { formatTime, parseTime } from "../../lib/time/mod.ts";

/** Seconds between two capacity Events of the same tier on one pool (the seed: one per 10 minutes). */
export const CAPACITY_EVENT_INTERVAL_SECONDS = 600;

/** The Event of each capacity tier when it turns True (the seed's reasons and descriptions). */
export const CAPACITY_EVENTS = {
  CapacityWarning: { percent: 70, reason: "PoolCapacityWarning", description: "Pool filling up" },
  CapacityCritical: { percent: 85, reason: "PoolCapacityCritical", description: "Pool near capacity" },
  CapacityExhausted: { percent: 95, reason: "PoolCapacityExhausted", description: "Pool effectively full" },
} as const;

/** The Event of a tier that turns False again. */
export const CAPACITY_RECOVERED = {
  reason: "PoolCapacityRecovered",
  description: "Utilization returned below a threshold",
} as const;

/** A capacity tier's condition type. */
export type CapacityTier = keyof typeof CAPACITY_EVENTS;

const TIERS = Object.keys(CAPACITY_EVENTS) as CapacityTier[];

/**
 * What the pool last announced about a tier (`status.capacityEvents[]`): the state and when. A tier with no entry
 * was never announced, which reads as False: a new pool below 70 % says nothing.
 */
export interface Announcement {
  readonly type: CapacityTier;
  readonly status: "True" | "False";
  readonly time: string;
}

const StoredAnnouncements = z.array(z.unknown()).catch([]).transform((items) =>
  items.flatMap((item) => {
    const a = z.object({
      type: z.enum(TIERS as [CapacityTier, ...CapacityTier[]]),
      status: z.enum(["True", "False"]),
      time: z.string(),
    }).safeParse(item);
    return a.success && parseTime(a.data.time) ? [a.data] : [];
  })
);

/** The announcements stored in a pool's status; entries that cannot be read are ignored (announced again). */
export function readAnnouncements(status: unknown): Announcement[] {
  const raw = typeof status === "object" && status !== null
    ? (status as Record<string, unknown>).capacityEvents
    : undefined;
  return StoredAnnouncements.parse(raw ?? []);
}

/** The outcome of {@linkcode announce}. */
export interface Announced {
  /** The next `status.capacityEvents`, one entry per tier ever announced, in tier order. */
  readonly announcements: Announcement[];
  /** Seconds until a held-back change may be announced, when one is. */
  readonly resyncAfterSeconds?: number;
}

/**
 * Decides which capacity tiers to announce now. A tier whose condition differs from what was last announced is
 * announced at `now`, unless its last announcement is less than {@linkcode CAPACITY_EVENT_INTERVAL_SECONDS} old:
 * then it is held back and the hook asks to be called again when the interval ends, when the state of that
 * moment is announced (so a pool that flaps says so at most once per interval, and its final state is never
 * lost). A tier whose condition is Unknown keeps its announcement.
 *
 * @example
 * ```ts
 * announce([], [{ type: "CapacityWarning", status: "True", reason: "r", message: "m" }], now);
 * // { announcements: [{ type: "CapacityWarning", status: "True", time: "<now>" }] }
 * ```
 */
export function announce(
  previous: readonly Announcement[],
  capacity: readonly ConditionInput[],
  now: Date,
): Announced {
  let wait: number | undefined;
  const announcements = TIERS.flatMap((type): Announcement[] => {
    const last = previous.find((a) => a.type === type);
    const state = capacity.find((c) => c.type === type)?.status;
    if (state !== "True" && state !== "False") return last ? [last] : [];
    if (state === (last?.status ?? "False")) return last ? [last] : [];
    const elapsed = last ? (now.getTime() - parseTime(last.time)!.getTime()) / 1000 : Infinity;
    if (elapsed >= 0 && elapsed < CAPACITY_EVENT_INTERVAL_SECONDS) {
      const remaining = Math.ceil(CAPACITY_EVENT_INTERVAL_SECONDS - elapsed);
      wait = Math.min(wait ?? remaining, remaining);
      return [last!];
    }
    return [{ type, status: state, time: formatTime(now) }];
  });
  return { announcements, ...(wait === undefined ? {} : { resyncAfterSeconds: wait }) };
}

function utilizationText(status: Record<string, unknown>, type: CapacityTier): string {
  const conditions = Array.isArray(status.conditions) ? status.conditions : [];
  const message = conditions.find((c) => c?.type === type)?.message;
  return typeof message === "string" && message ? message : "Pool utilization is unknown";
}

/** The Event that announces `a`, quoting the capacity condition of the status that announced it. */
export function capacityEvent(
  a: Announcement,
  pool: { namespace?: string | undefined; name: string; uid: string },
  status: Record<string, unknown>,
): EventSignal {
  const tier = CAPACITY_EVENTS[a.type];
  const now = utilizationText(status, a.type);
  const [type, reason, text] = a.status === "True"
    ? ["Warning", tier.reason, `${tier.description}: at or above`] as const
    : ["Normal", CAPACITY_RECOVERED.reason, `${CAPACITY_RECOVERED.description}: below`] as const;
  return {
    signal: "event",
    regarding: { ...KINDS.NetworkPool, ...pool },
    type,
    reason,
    message: `${text} the ${tier.percent}% threshold of ${a.type}. ${now}`,
  };
}
