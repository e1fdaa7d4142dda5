import client from "prom-client";
import type { Signal } from "../signals/mod.ts";

/**
 * Seconds a pool, team or inventory series is kept after the last sync that set it. Each replica sees only the
 * syncs sent to it; the controllers resync every minute, so a live object refreshes every replica's series well
 * within this, and one that went away (or moved to the other replica) stops being reported.
 */
export const SERIES_TTL_SECONDS = 300;

/**
 * Series one gauge keeps at most. Its series are objects' (pools, teams, tenant clusters), which the API bounds
 * only by what it stores: past this, a new object's series is not kept (counted in
 * `butler_metric_series_dropped_total`) until others expire, so the registry's memory has a bound of its own.
 */
export const MAX_SERIES_PER_GAUGE = 10_000;

/** Domain metrics fed by signals: pools, team quotas, admission denials, inventory age, Events written. */
export interface DomainMetrics {
  /** Applies the signals of one answered request. */
  record(signals: readonly Signal[]): void;
  /** Counts an Event written (`written`) or given up (`failed`). */
  event(reason: string, result: "written" | "failed" | "unverified"): void;
}

type Labels = Record<string, string>;

/** Gauges whose series expire {@linkcode SERIES_TTL_SECONDS} after they were last set. */
function expiringGauges(
  registry: client.Registry,
  now: () => number,
  specs: Record<string, { help: string; labels: readonly string[] }>,
) {
  const gauges = new Map<string, client.Gauge<string>>();
  const seen = new Map<string, Map<string, { labels: Labels; at: number }>>();
  const dropped = new client.Counter({
    name: "butler_metric_series_dropped_total",
    help:
      `Series not kept because their gauge already had ${MAX_SERIES_PER_GAUGE} (one per pool, team or tenant cluster), by gauge.`,
    labelNames: ["metric"] as const,
    registers: [registry],
  });
  for (const [name, spec] of Object.entries(specs)) {
    const series = new Map<string, { labels: Labels; at: number }>();
    seen.set(name, series);
    gauges.set(
      name,
      new client.Gauge({
        name,
        help: spec.help,
        labelNames: spec.labels,
        registers: [registry],
        collect() {
          const limit = now() - SERIES_TTL_SECONDS * 1000;
          for (const [key, s] of series) {
            if (s.at < limit) {
              this.remove(s.labels);
              series.delete(key);
            }
          }
        },
      }),
    );
  }
  return {
    set(name: string, labels: Labels, value: number) {
      const series = seen.get(name)!;
      const key = JSON.stringify(labels);
      if (!series.has(key) && series.size >= MAX_SERIES_PER_GAUGE) return dropped.inc({ metric: name });
      gauges.get(name)!.set(labels, value);
      series.set(key, { labels, at: now() });
    },
    /** Removes every series (of any gauge) whose labels include all of these. */
    drop(match: Labels) {
      for (const [name, series] of seen) {
        for (const [key, s] of series) {
          if (Object.entries(match).every(([k, v]) => s.labels[k] === v)) {
            gauges.get(name)!.remove(s.labels);
            series.delete(key);
          }
        }
      }
    },
  };
}

const POOL = ["namespace", "pool"] as const;

/** The NetworkPool status figure behind each pool gauge. */
const POOL_FIGURES = {
  butler_networkpool_ips: ["totalIPs", "Addresses the pool can allocate."],
  butler_networkpool_allocated_ips: ["allocatedIPs", "Addresses granted to IPAllocations."],
  butler_networkpool_available_ips: ["availableIPs", "Addresses still free."],
  butler_networkpool_largest_free_block: [
    "largestFreeBlock",
    "The largest contiguous run of free addresses.",
  ],
  butler_networkpool_grants: ["allocationCount", "Grants the pool's ledger holds."],
  butler_networkpool_pending_allocations: [
    "pendingAllocations",
    "IPAllocations of the pool not granted at its last sync (their reasons are in its status.failures).",
  ],
  butler_networkpool_cooling_ips: [
    "coolingIPs",
    "Released addresses kept out of allocation until their cooldown (spec.releaseCooldownSeconds) passes.",
  ],
  butler_networkpool_released_grants: [
    "releasedGrants",
    "Grants the pool has released since it was created (status.releases.total); rate() it for releases per second.",
  ],
} as const;

/** The domain's gauges: each series expires when its object is gone or no longer reported. */
const GAUGES: Record<string, { help: string; labels: readonly string[] }> = {
  ...Object.fromEntries(
    Object.entries(POOL_FIGURES).map(([name, [, help]]) => [name, { help, labels: POOL }]),
  ),
  butler_networkpool_utilization_ratio: {
    help: "Allocated addresses over allocatable addresses (0 to 1), as the capacity conditions compute it.",
    labels: POOL,
  },
  butler_networkpool_fragmentation_ratio: {
    help: "1 - largest free block / free addresses (0 to 1): how scattered the free addresses are.",
    labels: POOL,
  },
  butler_team_environment_utilization_ratio: {
    help:
      "A team environment's clusters over its cluster limit (1 is at the limit), for limited environments.",
    labels: ["team", "environment"],
  },
  butler_team_quota_utilization_ratio: {
    help: "A team's usage over its limit (1 is at the limit), per limited resource.",
    labels: ["team", "resource"],
  },
  butler_team_quota_exceeded: {
    help: "1 when the team's quotaStatus is Exceeded, else 0.",
    labels: ["team"],
  },
  butler_loadbalancer_inventory_age_seconds: {
    help: "Age of an elastic TenantCluster's LoadBalancerInventory (now - observedAt) at its last sync.",
    labels: ["namespace", "tenantcluster"],
  },
  butler_loadbalancer_inventory_max_age_seconds: {
    help:
      "The inventory age past which the TenantCluster reports DemandUnknown: 300 while a decision is due (a Service pending, a release whose grace has run out), else 1800.",
    labels: ["namespace", "tenantcluster"],
  },
};

type Gauges = ReturnType<typeof expiringGauges>;

/** A pool's figures, utilisation and fragmentation; its series dropped once it is gone. */
function recordPool(gauges: Gauges, s: Extract<Signal, { signal: "pool" }>): void {
  const labels = { namespace: s.namespace, pool: s.name };
  if (s.gone) return gauges.drop(labels);
  for (const [name, [key]] of Object.entries(POOL_FIGURES)) {
    const v = s[key];
    if (v !== undefined) gauges.set(name, labels, v);
  }
  if (s.fragmentationPercent !== undefined) {
    gauges.set("butler_networkpool_fragmentation_ratio", labels, s.fragmentationPercent / 100);
  }
  if (s.totalIPs !== undefined && s.allocatedIPs !== undefined) {
    gauges.set(
      "butler_networkpool_utilization_ratio",
      labels,
      s.totalIPs === 0 ? 1 : s.allocatedIPs / s.totalIPs,
    );
  }
}

/** A team's quota and environment utilisation and whether it is over quota; dropped once it is gone. */
function recordTeam(gauges: Gauges, s: Extract<Signal, { signal: "team" }>): void {
  if (s.gone) return gauges.drop({ team: s.name });
  for (const [resource, percent] of Object.entries(s.utilization ?? {})) {
    gauges.set("butler_team_quota_utilization_ratio", { team: s.name, resource }, percent / 100);
  }
  for (const [environment, percent] of Object.entries(s.environments ?? {})) {
    gauges.set("butler_team_environment_utilization_ratio", { team: s.name, environment }, percent / 100);
  }
  if (s.quotaStatus !== undefined) {
    gauges.set("butler_team_quota_exceeded", { team: s.name }, s.quotaStatus === "Exceeded" ? 1 : 0);
  }
}

/** An elastic TenantCluster's inventory age and the age past which its demand is unknown. */
function recordInventory(gauges: Gauges, s: Extract<Signal, { signal: "inventory" }>): void {
  const labels = { namespace: s.namespace, tenantcluster: s.name };
  if (s.gone) return gauges.drop(labels);
  if (s.ageSeconds !== undefined) {
    gauges.set("butler_loadbalancer_inventory_age_seconds", labels, s.ageSeconds);
  }
  if (s.maxAgeSeconds !== undefined) {
    gauges.set("butler_loadbalancer_inventory_max_age_seconds", labels, s.maxAgeSeconds);
  }
}

/**
 * Creates the domain metrics in `registry`. `now` gives milliseconds (series expiry).
 *
 * @example
 * ```ts
 * const metrics = createDomainMetrics(registry);
 * metrics.record([{ signal: "denial", webhook: "tenantcluster", rules: ["maxClusters"] }]);
 * ```
 */
export function createDomainMetrics(registry: client.Registry, now: () => number = Date.now): DomainMetrics {
  const gauges = expiringGauges(registry, now, GAUGES);
  const denials = new client.Counter({
    name: "butler_admission_denials_total",
    help: "Admission requests refused by the webhooks, by webhook and failing rule.",
    labelNames: ["webhook", "rule"] as const,
    registers: [registry],
  });
  const events = new client.Counter({
    name: "butler_events_total",
    help:
      "Kubernetes Events the service wrote (written), gave up on (failed), or did not write because their object does not exist with the UID a hook answer named (unverified), by reason.",
    labelNames: ["reason", "result"] as const,
    registers: [registry],
  });

  const handlers: { [K in Signal["signal"]]: (s: Extract<Signal, { signal: K }>) => void } = {
    pool: (s) => recordPool(gauges, s),
    team: (s) => recordTeam(gauges, s),
    denial(s) {
      for (const rule of s.rules) denials.inc({ webhook: s.webhook, rule });
    },
    inventory: (s) => recordInventory(gauges, s),
    event() {},
  };

  return {
    record(signals) {
      for (const s of signals) (handlers[s.signal] as (s: Signal) => void)(s);
    },
    event(reason, result) {
      events.inc({ reason, result });
    },
  };
}
