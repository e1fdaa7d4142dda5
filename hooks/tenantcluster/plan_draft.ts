/**
 * What a TenantCluster's IPAM plan is made of: its input and output, the allocations' names and roles as the
 * seed describes them, and the working state the plan's steps share ({@linkcode Draft}): the provider's settings
 * read once, the status memory being changed, and the desired children, conditions and due times being added.
 * `planNetwork` (network.ts) runs the steps; elastic.ts holds growth and shrink.
 *
 * @module
 */
import { KINDS, LABELS, SYSTEM_NAMESPACE } from "../../lib/butler/mod.ts";
import type { ConditionInput } from "../../lib/conditions/mod.ts";
import { buildObject, type KubeObject } from "../../lib/contract/mod.ts";
import { type Address, parseAddress } from "../../lib/ipam/mod.ts";
import type {
  ChildAllocation,
  InventorySpec,
  IpamMemory,
  PoolView,
  ProviderView,
  TenantClusterSpec,
} from "../../lib/api/mod.ts";

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
  /** Why its recorded grant is not used: its pool's ledger grants those addresses to another holder. */
  readonly refused?: string;
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
  /** The unused grace of growth allocations; the seed's 600 s (`SHRINK_GRACE_SECONDS`) unless a test sets it. */
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

/** The initial LoadBalancer allocation's name. */
export function lbName(tc: string): string {
  return `${tc}-lb`;
}

/** The node allocation's name. */
export function nodesName(tc: string): string {
  return `${tc}-nodes`;
}

/** The name of the `n`th growth allocation (never reused: the status remembers the next index). */
export function growthName(tc: string, n: number): string {
  return `${tc}-lb-${n}`;
}

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

/** The index of a growth allocation's name (`{tc}-lb-{N}`), when it is one. */
export function growthIndex(name: string, tc: string): number | undefined {
  const m = new RegExp(`${escape(tc)}-lb-(\\d+)$`).exec(name);
  return m ? Number(m[1]) : undefined;
}

/** How many addresses an allocation asks for (else holds). */
export function countOf(c: ChildAllocation): number {
  return c.spec.count ?? c.status?.allocatedCount ?? 0;
}

/** The distinct valid addresses among `texts` (a Service may list an IP twice; junk is ignored). */
export function distinctAddresses(texts: readonly string[]): Address[] {
  const seen = new Map<string, Address>();
  for (const t of texts) {
    const a = parseAddress(t);
    if (a) seen.set(`${a.family}:${a.value}`, a);
  }
  return [...seen.values()];
}

/** A range of addresses of one family. */
export type Range = { readonly family: number; readonly start: bigint; readonly end: bigint };

/** Addresses of an Allocated child, as family-tagged keys, or undefined when it is not Allocated. */
export function rangeOf(c: ChildAllocation): Range | undefined {
  if (c.status?.phase !== "Allocated" || !c.status.startAddress || !c.status.endAddress) return undefined;
  const a = parseAddress(c.status.startAddress);
  const b = parseAddress(c.status.endAddress);
  return a && b && a.family === b.family ? { family: a.family, start: a.value, end: b.value } : undefined;
}

/** The status memory while a plan is made: a copy of what was read, changed by the steps. */
export interface WorkingMemory {
  nextGrowthIndex?: number;
  unusedSince: Record<string, string>;
  failedPools: Record<string, string[]>;
  requested: Record<string, { pool: string; count: number }>;
  released: string[];
}

/** What every step of a plan reads, and what the steps add to (desired children, conditions, due times). */
export interface Draft {
  readonly input: PlanInput;
  readonly tc: string;
  readonly ns: string;
  readonly lb: NonNullable<NonNullable<ProviderView["spec"]["network"]>["loadBalancer"]>;
  readonly quota: NonNullable<NonNullable<ProviderView["spec"]["network"]>["quotaPerTenant"]>;
  readonly elastic: boolean;
  readonly increment: number;
  readonly pcNamespace: string;
  /** The provider's pools in priority order (declaration order among equals). */
  readonly refs: readonly { readonly name: string }[];
  readonly pools: ReadonlyMap<string, PoolView>;
  /** Names of the children observed. */
  readonly present: ReadonlySet<string>;
  readonly memory: WorkingMemory;
  readonly conditions: ConditionInput[];
  readonly dueAt: Date[];
  readonly desired: KubeObject[];
}

/** The cluster's allocations by role, as observed (and adopted). */
export interface Roles {
  /** Every LoadBalancer child kept. */
  readonly lbChildren: readonly ObservedChild[];
  readonly initial?: ObservedChild | undefined;
  readonly nodes?: ObservedChild | undefined;
  readonly growth: readonly ObservedChild[];
}

/** The plan's starting point: the provider's settings read once, and the memory of what is still observed. */
export function draftOf(input: PlanInput): Draft {
  const net = input.provider.spec.network ?? {};
  const lb = net.loadBalancer ?? {};
  const present = new Set(input.children.map((c) => c.name));
  const m = input.memory;
  return {
    input,
    tc: input.cluster.name,
    ns: input.cluster.namespace,
    lb,
    quota: net.quotaPerTenant ?? {},
    elastic: lb.allocationMode === "elastic",
    increment: lb.growthIncrement ?? DEFAULTS.growthIncrement,
    pcNamespace: input.provider.metadata.namespace ?? SYSTEM_NAMESPACE,
    refs: (net.poolRefs ?? []).map((r, i) => ({ ...r, i }))
      .sort((a, b) => (a.priority ?? 0) - (b.priority ?? 0) || a.i - b.i),
    pools: new Map(input.pools.map((p) => [p.metadata.name, p])),
    present,
    memory: {
      ...(m.nextGrowthIndex ? { nextGrowthIndex: m.nextGrowthIndex } : {}),
      unusedSince: Object.fromEntries(Object.entries(m.unusedSince ?? {}).filter(([k]) => present.has(k))),
      failedPools: Object.fromEntries(Object.entries(m.failedPools ?? {}).map(([k, v]) => [k, [...v]])),
      requested: Object.fromEntries(
        Object.entries(m.requested ?? {})
          .filter(([k]) => !present.has(k))
          .map(([k, v]) => [k, { pool: v.pool, count: v.count }]),
      ),
      released: (m.released ?? []).filter((n) => present.has(n)),
    },
    conditions: [],
    dueAt: [],
    desired: [],
  };
}

/**
 * The first pool (priority order) whose largest free block fits `count(pool)`, preferring pools where this
 * allocation has not failed before; a pool it failed in is used again only when nothing else fits.
 */
export function choosePool(
  draft: Draft,
  count: (p: PoolView) => number,
  failedIn: readonly string[],
): { pool: string; count: number } | undefined {
  const fits = draft.refs.flatMap((ref) => {
    const pool = draft.pools.get(ref.name);
    // A pool being deleted fails every new request; choosing it would create, fail and drop an allocation at
    // every sync (found by the simulation tier).
    if (!pool || pool.metadata.deletionTimestamp) return [];
    const n = count(pool);
    return (pool.status?.largestFreeBlock ?? 0) >= n ? [{ pool: ref.name, count: n }] : [];
  });
  return fits.find((f) => !failedIn.includes(f.pool)) ?? fits[0];
}

/** A new IPAllocation child of the cluster. */
export function allocationObject(
  draft: Draft,
  name: string,
  type: "nodes" | "loadbalancer",
  role: Role,
  pool: string,
  count: number,
): KubeObject {
  return buildObject(KINDS.IPAllocation, {
    name,
    namespace: draft.ns,
    labels: {
      [LABELS.team]: draft.ns,
      [LABELS.tenant]: draft.tc,
      [LABELS.networkPool]: pool,
      [LABELS.allocationType]: type,
      [LABELS.allocationRole]: role,
    },
  }, {
    spec: {
      poolRef: { name: pool, namespace: draft.pcNamespace },
      tenantClusterRef: { name: draft.tc, namespace: draft.ns },
      type,
      count,
    },
  });
}
