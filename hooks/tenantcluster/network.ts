import { KINDS, LABELS, SYSTEM_NAMESPACE } from "../../lib/butler/mod.ts";
import type { ConditionInput } from "../../lib/conditions/mod.ts";
import { buildObject, type KubeObject } from "../../lib/contract/mod.ts";
import { type Address, parseAddress } from "../../lib/ipam/mod.ts";
import { formatTime, parseTime } from "../../lib/time/mod.ts";
import {
  type ChildAllocation,
  inventoryMaxAgeSeconds,
  type InventorySpec,
  type IpamMemory,
  type PoolView,
  type ProviderView,
  type TenantClusterSpec,
} from "../../lib/api/mod.ts";

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

/** Seed defaults. */
export const DEFAULTS = { lbPoolSize: 8, initialPoolSize: 2, growthIncrement: 2, nodeIPs: 5 } as const;

/** Allocation roles. */
export type Role = "initial" | "growth";

/** One observed IPAllocation child. */
export interface ObservedChild {
  readonly name: string;
  readonly value: ChildAllocation;
  /** The object as observed, returned unchanged to keep it. */
  readonly keep: KubeObject;
}

/** Everything the plan is made from. */
export interface PlanInput {
  readonly cluster: { name: string; namespace: string; spec: TenantClusterSpec };
  readonly provider: ProviderView;
  readonly pools: readonly PoolView[];
  readonly children: readonly ObservedChild[];
  /**
   * Hand-made allocations naming this cluster that it has not adopted yet: they take the place of the
   * allocation of their role (none is created beside them), and are neither returned nor counted until adopted.
   */
  readonly adopting?: readonly ObservedChild[];
  readonly inventory?: InventorySpec | undefined;
  readonly memory: IpamMemory;
  readonly now: Date;
  /** The unused grace of growth allocations; the seed's {@linkcode SHRINK_GRACE_SECONDS} unless a test sets it. */
  readonly shrinkGraceSeconds?: number;
  /** Whether new allocations may be created (not when an input is missing or invalid). */
  readonly mayCreate: boolean;
}

/** The plan: desired IPAllocation children, status memory, conditions, MetalLB addresses, next due time. */
export interface Plan {
  readonly allocations: KubeObject[];
  readonly memory: IpamMemory;
  readonly conditions: ConditionInput[];
  readonly addresses: string[];
  readonly lbAllocationRef?: string;
  readonly ipAllocationRef?: string;
  readonly ready: boolean;
  readonly dueAt: Date[];
}

const lbName = (tc: string) => `${tc}-lb`;
const nodesName = (tc: string) => `${tc}-nodes`;
const growthName = (tc: string, n: number) => `${tc}-lb-${n}`;

/**
 * An allocation's role: its `allocation-role` label, else inferred from older naming as the seed describes
 * (`{tc}-lb` or `{team}-{tc}-lb` initial, `...-lb-{N}` growth, a pinned range or anything else initial).
 */
export function roleOf(child: ObservedChild, tc: string, namespace: string): Role {
  const label = child.value.metadata.labels?.[LABELS.allocationRole];
  if (label === "initial" || label === "growth") return label;
  if (child.value.spec.pinnedRange) return "initial";
  const growth = new RegExp(`^(${escape(namespace)}-)?${escape(tc)}-lb-\\d+$`);
  return growth.test(child.name) ? "growth" : "initial";
}

function escape(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
}

function growthIndex(name: string, tc: string): number | undefined {
  const m = new RegExp(`${escape(tc)}-lb-(\\d+)$`).exec(name);
  return m ? Number(m[1]) : undefined;
}

function countOf(c: ChildAllocation): number {
  return c.spec.count ?? c.status?.allocatedCount ?? 0;
}

/** The distinct valid addresses among `texts` (a Service may list an IP twice; junk is ignored). */
function distinctAddresses(texts: readonly string[]): Address[] {
  const seen = new Map<string, Address>();
  for (const t of texts) {
    const a = parseAddress(t);
    if (a) seen.set(`${a.family}:${a.value}`, a);
  }
  return [...seen.values()];
}

/** Addresses of an Allocated child, as family-tagged keys, or undefined when it is not Allocated. */
function rangeOf(c: ChildAllocation): { family: number; start: bigint; end: bigint } | undefined {
  if (c.status?.phase !== "Allocated" || !c.status.startAddress || !c.status.endAddress) return undefined;
  const a = parseAddress(c.status.startAddress);
  const b = parseAddress(c.status.endAddress);
  return a && b && a.family === b.family ? { family: a.family, start: a.value, end: b.value } : undefined;
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
 * Plans the cluster's IPAllocations (IPAM mode). Existing children are kept exactly as they are (a child's
 * spec never changes); a Failed one is released so a new one can move to the next pool with room; pools are
 * tried in priority order and the first whose largest free block fits wins. In elastic mode, growth covers the
 * Services pending longer than 30 s minus the supply in flight, within {@linkcode elasticCeiling}, and growth
 * allocations unused for 10 continuous minutes are released; initial and pinned allocations never are.
 */
export function planNetwork(input: PlanInput): Plan {
  const { cluster, provider, now } = input;
  const tc = cluster.name;
  const ns = cluster.namespace;
  const net = provider.spec.network ?? {};
  const lb = net.loadBalancer ?? {};
  const quota = net.quotaPerTenant ?? {};
  const elastic = lb.allocationMode === "elastic";
  const increment = lb.growthIncrement ?? DEFAULTS.growthIncrement;
  const pcNamespace = provider.metadata.namespace ?? SYSTEM_NAMESPACE;
  const refs = (net.poolRefs ?? []).map((r, i) => ({ ...r, i }))
    .sort((a, b) => (a.priority ?? 0) - (b.priority ?? 0) || a.i - b.i);
  const pools = new Map(input.pools.map((p) => [p.metadata.name, p]));
  const present = new Set(input.children.map((c) => c.name));
  const memory: {
    nextGrowthIndex?: number;
    unusedSince: Record<string, string>;
    failedPools: Record<string, string[]>;
    requested: Record<string, { pool: string; count: number }>;
    released: string[];
  } = {
    ...(input.memory.nextGrowthIndex ? { nextGrowthIndex: input.memory.nextGrowthIndex } : {}),
    unusedSince: Object.fromEntries(
      Object.entries(input.memory.unusedSince ?? {}).filter(([k]) => present.has(k)),
    ),
    failedPools: Object.fromEntries(
      Object.entries(input.memory.failedPools ?? {}).map(([k, v]) => [k, [...v]]),
    ),
    requested: Object.fromEntries(
      Object.entries(input.memory.requested ?? {})
        .filter(([k]) => !present.has(k))
        .map(([k, v]) => [k, { pool: v.pool, count: v.count }]),
    ),
    released: (input.memory.released ?? []).filter((n) => present.has(n)),
  };
  const conditions: ConditionInput[] = [];
  const dueAt: Date[] = [];
  const desired: KubeObject[] = [];

  /**
   * The first pool (priority order) whose largest free block fits `count(pool)`, preferring pools where this
   * allocation has not failed before; a pool it failed in is used again only when nothing else fits.
   */
  const choosePool = (count: (p: PoolView) => number, failedIn: readonly string[]) => {
    const fits = refs.flatMap((ref) => {
      const pool = pools.get(ref.name);
      const n = pool ? count(pool) : 0;
      return pool && (pool.status?.largestFreeBlock ?? 0) >= n ? [{ pool: ref.name, count: n }] : [];
    });
    return fits.find((f) => !failedIn.includes(f.pool)) ?? fits[0];
  };
  const allocation = (
    name: string,
    type: "nodes" | "loadbalancer",
    role: Role,
    pool: string,
    count: number,
  ) =>
    buildObject(KINDS.IPAllocation, {
      name,
      namespace: ns,
      labels: {
        [LABELS.team]: ns,
        [LABELS.tenant]: tc,
        [LABELS.networkPool]: pool,
        [LABELS.allocationType]: type,
        [LABELS.allocationRole]: role,
      },
    }, {
      spec: {
        poolRef: { name: pool, namespace: pcNamespace },
        tenantClusterRef: { name: tc, namespace: ns },
        type,
        count,
      },
    });

  // Observed children: keep, or release when Failed (not pinned) so a new one can move on.
  const kept: ObservedChild[] = [];
  for (const c of input.children) {
    if (c.value.metadata.deletionTimestamp || memory.released.includes(c.name)) continue;
    if (c.value.status?.phase === "Failed" && !c.value.spec.pinnedRange) {
      const failed = memory.failedPools[c.name] ?? [];
      if (!failed.includes(c.value.spec.poolRef.name)) failed.push(c.value.spec.poolRef.name);
      memory.failedPools[c.name] = failed;
      continue;
    }
    if (c.value.status?.phase === "Allocated") delete memory.failedPools[c.name];
    kept.push(c);
  }

  const lbChildren = kept.filter((c) => c.value.spec.type === "loadbalancer");
  const adopting = input.adopting ?? [];
  const initial = lbChildren.find((c) => c.name === lbName(tc)) ??
    lbChildren.find((c) => roleOf(c, tc, ns) === "initial") ??
    adopting.find((c) => c.value.spec.type === "loadbalancer" && roleOf(c, tc, ns) === "initial");
  const nodes = kept.find((c) => c.name === nodesName(tc)) ??
    kept.find((c) => c.value.spec.type === "nodes") ??
    adopting.find((c) => c.value.spec.type === "nodes");
  const growth = lbChildren.filter((c) => c !== initial && roleOf(c, tc, ns) === "growth");
  desired.push(...kept.filter((c) => !growth.includes(c)).map((c) => c.keep));
  desired.push(
    ...Object.entries(memory.requested).map(([name, r]) =>
      allocation(name, "loadbalancer", "growth", r.pool, r.count)
    ),
  );
  const inFlightCount = Object.values(memory.requested).reduce((n, r) => n + r.count, 0);

  let exhausted = false;
  if (!refs.length) {
    conditions.push({
      type: "NetworkReady",
      status: "False",
      reason: "NetworkNotReady",
      message: "network.mode is 'ipam' but no poolRefs configured",
    });
  }
  // Initial LB allocation.
  const lbCount = Math.min(
    cluster.spec.networking?.lbPoolSize ??
      (elastic ? lb.initialPoolSize ?? DEFAULTS.initialPoolSize : lb.defaultPoolSize ?? DEFAULTS.lbPoolSize),
    quota.maxLoadBalancerIPs ?? Number.MAX_SAFE_INTEGER,
  );
  if (!initial && !present.has(lbName(tc)) && input.mayCreate && refs.length) {
    const choice = choosePool(() => lbCount, memory.failedPools[lbName(tc)] ?? []);
    if (choice) desired.push(allocation(lbName(tc), "loadbalancer", "initial", choice.pool, choice.count));
    else exhausted = true;
  }
  // Node allocation: count from the spec, else the chosen pool's default.
  if (!nodes && !present.has(nodesName(tc)) && input.mayCreate && refs.length) {
    const nodeCount = (p: PoolView) =>
      Math.min(
        cluster.spec.networking?.nodeIPs ?? p.spec?.tenantAllocation?.defaults?.nodesPerTenant ??
          DEFAULTS.nodeIPs,
        quota.maxNodeIPs ?? Number.MAX_SAFE_INTEGER,
      );
    const choice = choosePool(nodeCount, memory.failedPools[nodesName(tc)] ?? []);
    if (choice) desired.push(allocation(nodesName(tc), "nodes", "initial", choice.pool, choice.count));
    else exhausted = true;
  }

  const lbReady = initial?.value.status?.phase === "Allocated";
  const nodesReady = nodes?.value.status?.phase === "Allocated";
  if (refs.length) {
    conditions.push(
      lbReady && nodesReady
        ? {
          type: "NetworkReady",
          status: "True",
          reason: "Allocated",
          message: `LB IPs allocated: ${initial!.value.status!.cidr ?? ""}`,
        }
        : exhausted
        ? {
          type: "NetworkReady",
          status: "False",
          reason: "PoolExhausted",
          message: "all configured pools are exhausted",
        }
        : !input.mayCreate && (!initial || !nodes)
        ? {
          type: "NetworkReady",
          status: "False",
          reason: "Blocked",
          message:
            "no IP allocation is requested while the cluster's inputs are missing, invalid or refused (see Ready)",
        }
        : {
          type: "NetworkReady",
          status: "False",
          reason: "Reconciling",
          message: lbReady ? "waiting for node IP allocation" : "waiting for LB IP allocation",
        },
    );
  }

  // Elastic growth and shrink.
  const grace = input.shrinkGraceSeconds ?? SHRINK_GRACE_SECONDS;
  const maxSeen = Math.max(
    0,
    ...lbChildren.map((c) => growthIndex(c.name, tc) ?? 0),
    ...input.children.map((c) => growthIndex(c.name, tc) ?? 0),
  );
  let next = Math.max(memory.nextGrowthIndex ?? 1, maxSeen + 1);
  if (elastic && lbReady && input.mayCreate) {
    const observedAt = input.inventory ? parseTime(input.inventory.observedAt) : undefined;
    const age = observedAt ? (now.getTime() - observedAt.getTime()) / 1000 : Infinity;
    const maxAge = inventoryAgeLimit(input.inventory?.services, memory.unusedSince, now, grace);
    if (!input.inventory || !observedAt || age > maxAge) {
      desired.push(...growth.map((c) => c.keep));
      conditions.push({
        type: "ElasticIPAM",
        status: "False",
        reason: "DemandUnknown",
        message: !input.inventory
          ? `LoadBalancerInventory ${ns}/${tc} not found: demand is unknown, no elastic decisions`
          : `LoadBalancerInventory ${ns}/${tc} was last observed at ${input.inventory.observedAt}, more than ${maxAge}s ago: demand is unknown, no elastic decisions`,
      });
    } else {
      const services = input.inventory.services ?? [];
      const used = distinctAddresses(services.flatMap((s) => s.ingressIPs ?? []));
      /** How many Service IPs fall in a range. */
      const usedIn = (r: { family: number; start: bigint; end: bigint }) =>
        used.filter((a) => a.family === r.family && a.value >= r.start && a.value <= r.end).length;
      let demand = 0;
      for (const s of services) {
        if ((s.ingressIPs ?? []).length) continue;
        const created = parseTime(s.createdAt);
        if (!created) continue;
        const pendingFor = (now.getTime() - created.getTime()) / 1000;
        if (pendingFor > PENDING_THRESHOLD_SECONDS) demand++;
        else dueAt.push(new Date(created.getTime() + (PENDING_THRESHOLD_SECONDS + 1) * 1000));
      }
      // Shrink first: what is released is not supply.
      const keptGrowth: ObservedChild[] = [];
      for (const c of growth) {
        const r = rangeOf(c.value);
        if (!r || c.value.spec.pinnedRange) {
          keptGrowth.push(c);
          continue;
        }
        if (usedIn(r) > 0) {
          delete memory.unusedSince[c.name];
          keptGrowth.push(c);
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
        keptGrowth.push(c);
      }
      desired.push(...keptGrowth.map((c) => c.keep));
      const supply = inFlightCount + keptGrowth.reduce((n, c) => {
        const r = rangeOf(c.value);
        return n + (r ? Number(r.end - r.start + 1n) - usedIn(r) : countOf(c.value));
      }, 0);
      let allocated = inFlightCount +
        [initial, ...keptGrowth].reduce((n, c) => n + (c ? countOf(c.value) : 0), 0);
      let need = demand - supply;
      let created = 0;
      let blocked: ConditionInput | undefined;
      const ceiling = elasticCeiling(lb.defaultPoolSize, quota.maxLoadBalancerIPs);
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
        const choice = choosePool(() => increment, []);
        if (!choice) {
          blocked = {
            type: "ElasticIPAM",
            status: "False",
            reason: "PoolExhausted",
            message: `all configured pools are exhausted; ${need} pending Service(s) not covered`,
          };
          break;
        }
        desired.push(allocation(growthName(tc, next), "loadbalancer", "growth", choice.pool, increment));
        memory.requested[growthName(tc, next)] = { pool: choice.pool, count: increment };
        next++;
        created++;
        allocated += increment;
        need -= increment;
      }
      memory.nextGrowthIndex = next;
      const pendingGrowth = keptGrowth.filter((c) => c.value.status?.phase !== "Allocated").length;
      const inFlight = Object.keys(memory.requested).length + pendingGrowth;
      conditions.push(
        blocked ??
          (inFlight
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
              message: `${keptGrowth.length} growth allocation(s) in use or within the ${
                grace % 60 ? `${grace}-second` : `${grace / 60}-minute`
              } grace; no Service pending over ${PENDING_THRESHOLD_SECONDS}s beyond the supply in flight`,
            }),
      );
    }
  } else {
    desired.push(...growth.map((c) => c.keep));
    if (memory.nextGrowthIndex !== undefined || maxSeen) memory.nextGrowthIndex = next;
  }

  const addresses = desired
    .flatMap((o) => {
      const c = input.children.find((k) => k.keep === o);
      const r = c && c.value.spec.type === "loadbalancer" ? rangeOf(c.value) : undefined;
      return r ? [{ r, text: `${c!.value.status!.startAddress}-${c!.value.status!.endAddress}` }] : [];
    })
    .sort((a, b) => a.r.family - b.r.family || (a.r.start < b.r.start ? -1 : a.r.start > b.r.start ? 1 : 0))
    .map((a) => a.text);

  const out: IpamMemory = {
    ...(memory.nextGrowthIndex !== undefined ? { nextGrowthIndex: memory.nextGrowthIndex } : {}),
    ...(Object.keys(memory.unusedSince).length ? { unusedSince: sortKeys(memory.unusedSince) } : {}),
    ...(Object.keys(memory.failedPools).length ? { failedPools: sortKeys(memory.failedPools) } : {}),
    ...(Object.keys(memory.requested).length ? { requested: sortKeys(memory.requested) } : {}),
    ...(memory.released.length ? { released: [...memory.released].sort() } : {}),
  };
  return {
    allocations: desired.sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1)),
    memory: out,
    conditions,
    addresses,
    ...(initial
      ? { lbAllocationRef: initial.name }
      : desired.some((d) => d.metadata.name === lbName(tc))
      ? { lbAllocationRef: lbName(tc) }
      : {}),
    ...(nodes
      ? { ipAllocationRef: nodes.name }
      : desired.some((d) => d.metadata.name === nodesName(tc))
      ? { ipAllocationRef: nodesName(tc) }
      : {}),
    ready: Boolean(lbReady && nodesReady),
    dueAt,
  };
}

function sortKeys<T>(o: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.keys(o).sort().map((k) => [k, o[k]!]));
}
