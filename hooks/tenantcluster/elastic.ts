/**
 * Elastic IPAM for one TenantCluster: growth allocations follow the Services pending in the cluster's
 * LoadBalancerInventory (longer than {@linkcode PENDING_THRESHOLD_SECONDS}), within {@linkcode elasticCeiling}, and
 * are released after {@linkcode SHRINK_GRACE_SECONDS} unused; no decision is taken on an inventory older than
 * {@linkcode inventoryAgeLimit}.
 *
 * @module
 */
import type { ConditionInput } from "../../lib/conditions/mod.ts";
import { formatTime, parseTime } from "../../lib/time/mod.ts";
import { inventoryMaxAgeSeconds, type InventorySpec } from "../../lib/api/mod.ts";
import {
  allocationObject,
  choosePool,
  countOf,
  DEFAULTS,
  distinctAddresses,
  type Draft,
  growthIndex,
  growthName,
  type ObservedChild,
  type Range,
  rangeOf,
  type Roles,
} from "./plan_draft.ts";

/** A Service pending longer than this is demand (seconds; strictly longer). */
export const PENDING_THRESHOLD_SECONDS = 30;
/** A growth allocation unused this long is released (seconds; 10 continuous minutes). */
export const SHRINK_GRACE_SECONDS = 600;
/**
 * The age past which the cluster's inventory is unknown demand: 300 s while a Service is pending or a release
 * countdown has run out (a decision is due), else 1,800 s. A running countdown alone does not shorten it: the
 * reporter refreshes every 45 s while one runs, so the observation is fresh when it runs out, and an observation
 * of up to 30 minutes may start one without the cluster flipping to `DemandUnknown` on its next sync.
 */
export function inventoryAgeLimit(
  services: InventorySpec["services"],
  unusedSince: Readonly<Record<string, string>> | undefined,
  now: Date,
  graceSeconds: number = SHRINK_GRACE_SECONDS,
): number {
  const runOut = Object.entries(unusedSince ?? {}).filter(([, since]) => {
    const t = parseTime(since);
    return t !== undefined && (now.getTime() - t.getTime()) / 1000 >= graceSeconds;
  });
  return inventoryMaxAgeSeconds(services, Object.fromEntries(runOut));
}

/**
 * How far elastic growth may go: the ProviderConfig seed says elastic mode grows "up to defaultPoolSize", and
 * `quotaPerTenant.maxLoadBalancerIPs` caps every tenant; the smaller wins, and is named in the message.
 *
 * @example
 * ```ts
 * elasticCeiling(undefined, undefined); // { value: 8, limit: "defaultPoolSize" }
 * elasticCeiling(16, 10); // { value: 10, limit: "maxLoadBalancerIPs" }
 * ```
 */
export function elasticCeiling(
  defaultPoolSize: number | undefined,
  maxLoadBalancerIPs: number | undefined,
): { value: number; limit: "defaultPoolSize" | "maxLoadBalancerIPs" } {
  const size = defaultPoolSize ?? DEFAULTS.lbPoolSize;
  return maxLoadBalancerIPs !== undefined && maxLoadBalancerIPs <= size
    ? { value: maxLoadBalancerIPs, limit: "maxLoadBalancerIPs" }
    : { value: size, limit: "defaultPoolSize" };
}

/**
 * Growth allocations: in elastic mode, once the initial LoadBalancer allocation is Allocated, decided from a
 * fresh enough inventory (else kept as they are, `DemandUnknown`); otherwise kept as they are. The next growth
 * index is never reused.
 */
export function planGrowth(draft: Draft, roles: Roles, lbReady: boolean): void {
  const { input, tc, ns, memory } = draft;
  const grace = input.shrinkGraceSeconds ?? SHRINK_GRACE_SECONDS;
  const maxSeen = Math.max(
    0,
    ...roles.lbChildren.map((c) => growthIndex(c.name, tc) ?? 0),
    ...input.children.map((c) => growthIndex(c.name, tc) ?? 0),
  );
  const next = Math.max(memory.nextGrowthIndex ?? 1, maxSeen + 1);
  if (!(draft.elastic && lbReady && input.mayCreate)) {
    draft.desired.push(...roles.growth.map((c) => c.keep));
    if (memory.nextGrowthIndex !== undefined || maxSeen) memory.nextGrowthIndex = next;
    return;
  }
  const observedAt = input.inventory ? parseTime(input.inventory.observedAt) : undefined;
  const age = observedAt ? (input.now.getTime() - observedAt.getTime()) / 1000 : Infinity;
  const maxAge = inventoryAgeLimit(input.inventory?.services, memory.unusedSince, input.now, grace);
  if (!input.inventory || !observedAt || age > maxAge) {
    draft.desired.push(...roles.growth.map((c) => c.keep));
    draft.conditions.push({
      type: "ElasticIPAM",
      status: "False",
      reason: "DemandUnknown",
      message: !input.inventory
        ? `LoadBalancerInventory ${ns}/${tc} not found: demand is unknown, no elastic decisions`
        : `LoadBalancerInventory ${ns}/${tc} was last observed at ${input.inventory.observedAt}, more than ${maxAge}s ago: demand is unknown, no elastic decisions`,
    });
    return;
  }
  planElastic(draft, roles, input.inventory.services ?? [], grace, next);
}

/** Services pending longer than the threshold; those not yet, when they will be (a due time). */
function pendingDemand(services: NonNullable<InventorySpec["services"]>, now: Date, dueAt: Date[]): number {
  let demand = 0;
  for (const s of services) {
    if ((s.ingressIPs ?? []).length) continue;
    const created = parseTime(s.createdAt);
    if (!created) continue;
    const pendingFor = (now.getTime() - created.getTime()) / 1000;
    if (pendingFor > PENDING_THRESHOLD_SECONDS) demand++;
    else dueAt.push(new Date(created.getTime() + (PENDING_THRESHOLD_SECONDS + 1) * 1000));
  }
  return demand;
}

/**
 * Shrink: growth allocations no Service uses are released once unused for the grace (continuously: a use
 * restarts it); pinned ones and those not Allocated are kept. Returns the growth allocations kept.
 */
function shrink(
  { input, memory, dueAt }: Draft,
  growth: readonly ObservedChild[],
  usedIn: (r: Range) => number,
  grace: number,
): ObservedChild[] {
  const now = input.now;
  const kept: ObservedChild[] = [];
  for (const c of growth) {
    const r = rangeOf(c.value);
    if (!r || c.value.spec.pinnedRange) {
      kept.push(c);
      continue;
    }
    if (usedIn(r) > 0) {
      delete memory.unusedSince[c.name];
      kept.push(c);
      continue;
    }
    const since = parseTime(memory.unusedSince[c.name]) ?? now;
    if ((now.getTime() - since.getTime()) / 1000 >= grace) {
      delete memory.unusedSince[c.name];
      memory.released.push(c.name);
      continue;
    }
    memory.unusedSince[c.name] = formatTime(since);
    dueAt.push(new Date(since.getTime() + grace * 1000));
    kept.push(c);
  }
  return kept;
}

/**
 * Elastic IPAM on a fresh inventory: shrink first (what is released is not supply), then grow by the increment
 * while the pending Services exceed the supply (free addresses in kept growth, and allocations in flight), within
 * {@linkcode elasticCeiling} and the pools' room; `ElasticIPAM` says which.
 */
function planElastic(
  draft: Draft,
  roles: Roles,
  services: NonNullable<InventorySpec["services"]>,
  grace: number,
  next: number,
): void {
  const { tc, memory, increment } = draft;
  const used = distinctAddresses(services.flatMap((s) => s.ingressIPs ?? []));
  /** How many Service IPs fall in a range. */
  const usedIn = (r: Range) =>
    used.filter((a) => a.family === r.family && a.value >= r.start && a.value <= r.end).length;
  const demand = pendingDemand(services, draft.input.now, draft.dueAt);
  const inFlightCount = Object.values(memory.requested).reduce((n, r) => n + r.count, 0);
  const keptGrowth = shrink(draft, roles.growth, usedIn, grace);
  draft.desired.push(...keptGrowth.map((c) => c.keep));
  const supply = inFlightCount + keptGrowth.reduce((n, c) => {
    const r = rangeOf(c.value);
    return n + (r ? Number(r.end - r.start + 1n) - usedIn(r) : countOf(c.value));
  }, 0);
  let allocated = inFlightCount +
    [roles.initial, ...keptGrowth].reduce((n, c) => n + (c ? countOf(c.value) : 0), 0);
  let need = demand - supply;
  let blocked: ConditionInput | undefined;
  const ceiling = elasticCeiling(draft.lb.defaultPoolSize, draft.quota.maxLoadBalancerIPs);
  while (need > 0) {
    if (allocated + increment > ceiling.value) {
      blocked = {
        type: "ElasticIPAM",
        status: "False",
        reason: "QuotaExceeded",
        message:
          `quota would be exceeded: ${allocated} LB IPs allocated + ${increment} > ${ceiling.limit} ${ceiling.value}; ${need} pending Service(s) not covered`,
      };
      break;
    }
    const choice = choosePool(draft, () => increment, []);
    if (!choice) {
      blocked = {
        type: "ElasticIPAM",
        status: "False",
        reason: "PoolExhausted",
        message: `all configured pools are exhausted; ${need} pending Service(s) not covered`,
      };
      break;
    }
    draft.desired.push(
      allocationObject(draft, growthName(tc, next), "loadbalancer", "growth", choice.pool, increment),
    );
    memory.requested[growthName(tc, next)] = { pool: choice.pool, count: increment };
    next++;
    allocated += increment;
    need -= increment;
  }
  memory.nextGrowthIndex = next;
  const pendingGrowth = keptGrowth.filter((c) => c.value.status?.phase !== "Allocated").length;
  const inFlight = Object.keys(memory.requested).length + pendingGrowth;
  draft.conditions.push(blocked ?? elasticAtRestOrGrowing(draft, inFlight, demand, keptGrowth.length, grace));
}

/** `ElasticIPAM` True: growing while allocations are in flight, else at rest. */
function elasticAtRestOrGrowing(
  { increment }: Draft,
  inFlight: number,
  demand: number,
  kept: number,
  grace: number,
): ConditionInput {
  return inFlight
    ? {
      type: "ElasticIPAM",
      status: "True",
      reason: "Growing",
      message:
        `${inFlight} growth allocation(s) of ${increment} in flight for ${demand} Service(s) pending over ${PENDING_THRESHOLD_SECONDS}s`,
    }
    : {
      type: "ElasticIPAM",
      status: "True",
      reason: "AtRest",
      message: `${kept} growth allocation(s) in use or within the ${
        grace % 60 ? `${grace}-second` : `${grace / 60}-minute`
      } grace; no Service pending over ${PENDING_THRESHOLD_SECONDS}s beyond the supply in flight`,
    };
}
