/**
 * A NetworkPool's figures in its status (total, allocated, available, fragmentation, largest free block, cooling)
 * and its capacity conditions, one per utilisation threshold.
 *
 * @module
 */
import { statusNumber } from "../../lib/butler/mod.ts";
import { type Condition, type ConditionInput, PreviousConditions } from "../../lib/conditions/mod.ts";
import type { Capacity } from "../../lib/ipam/mod.ts";
import { CAPACITY_EVENTS, type CapacityTier } from "./capacity_events.ts";

/** Utilisation thresholds of the capacity conditions, in percent (at or above means True). */
export const CAPACITY_THRESHOLDS: readonly { type: CapacityTier; percent: number }[] = (
  Object.keys(CAPACITY_EVENTS) as CapacityTier[]
).map((type) => ({ type, percent: CAPACITY_EVENTS[type].percent }));

/** The pool's figures in its status. */
export interface Figures {
  totalIPs: number;
  allocatedIPs: number;
  availableIPs: number;
  allocationCount: number;
  fragmentationPercent: number;
  largestFreeBlock: number;
  /** Released addresses still cooling down (only with `spec.releaseCooldownSeconds`). */
  coolingIPs?: number;
}

/** The figures of a pool's capacity after this sync's grants. */
export function figuresOf(c: Capacity, grants: number, cooling: bigint, cooldown: boolean): Figures {
  return {
    totalIPs: statusNumber(c.total),
    allocatedIPs: statusNumber(c.allocated - cooling),
    availableIPs: statusNumber(c.available),
    allocationCount: grants,
    fragmentationPercent: c.fragmentationPercent,
    largestFreeBlock: statusNumber(c.largestFreeBlock),
    ...(cooldown ? { coolingIPs: statusNumber(cooling) } : {}),
  };
}

const FIGURE_KEYS = [
  "totalIPs",
  "allocatedIPs",
  "availableIPs",
  "allocationCount",
  "fragmentationPercent",
  "largestFreeBlock",
  "coolingIPs",
] as const;

/** The figures a pool status holds (those that are numbers). */
export function statusFigures(status: Record<string, unknown>): Partial<Figures> {
  return Object.fromEntries(
    FIGURE_KEYS.flatMap((k) => (typeof status[k] === "number" ? [[k, status[k]]] : [])),
  ) as Partial<Figures>;
}

/** The capacity conditions, one per threshold. */
export function capacityConditions(c: Capacity): ConditionInput[] {
  const percent = c.total === 0n ? 100 : Number((c.allocated * 100n) / c.total);
  const message = `Pool utilization is ${percent}% (${c.allocated}/${c.total} IPs)`;
  return CAPACITY_THRESHOLDS.map(({ type, percent: threshold }) => {
    const above = c.total === 0n || c.allocated * 100n >= BigInt(threshold) * c.total;
    return {
      type,
      status: above ? "True" : "False",
      reason: above ? "UtilizationAboveThreshold" : "UtilizationBelowThreshold",
      message,
    };
  });
}

/** Capacity conditions when figures cannot be computed: the previous ones, else Unknown. */
export function carriedCapacityConditions(
  previous: PreviousConditions,
  raw: unknown,
  why: string,
): ConditionInput[] {
  const prior = Array.isArray(raw) ? (raw as Partial<Condition>[]) : [];
  return CAPACITY_THRESHOLDS.map(({ type }) => {
    const p = prior.find((c) => c?.type === type);
    const known = previous.find((c) => c.type === type);
    return known && p && typeof p.reason === "string" && typeof p.message === "string"
      ? { type, status: known.status, reason: p.reason, message: p.message }
      : { type, status: "Unknown", reason: why, message: "capacity unknown until the spec is valid" };
  });
}
