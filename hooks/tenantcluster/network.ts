/**
 * A TenantCluster's IPAM plan (`planNetwork`): the IPAllocation children it keeps and requests, its status memory,
 * `NetworkReady` and `ElasticIPAM`, and the addresses MetalLB gets, as named steps over one {@linkcode Draft}.
 *
 * @module
 */
import type { ConditionInput } from "../../lib/conditions/mod.ts";
import type { KubeObject } from "../../lib/contract/mod.ts";
import { GRANT_CONFLICT, type IpamMemory, type PoolView } from "../../lib/api/mod.ts";
import {
  allocationObject,
  choosePool,
  DEFAULTS,
  type Draft,
  draftOf,
  lbName,
  nodesName,
  type ObservedChild,
  type Plan,
  type PlanInput,
  rangeOf,
  roleOf,
  type Roles,
  type WorkingMemory,
} from "./plan_draft.ts";
import { planGrowth } from "./elastic.ts";

/**
 * Plans the cluster's IPAllocations (IPAM mode). Existing children are kept exactly as they are (a child's
 * spec never changes); a Failed one is released so a new one can move to the next pool with room; pools are
 * tried in priority order and the first whose largest free block fits wins. In elastic mode, growth covers the
 * Services pending longer than 30 s minus the supply in flight, within {@linkcode elasticCeiling}, and growth
 * allocations unused for 10 continuous minutes are released; initial and pinned allocations never are.
 */
export function planNetwork(input: PlanInput): Plan {
  const draft = draftOf(input);
  const kept = keepObserved(draft);
  const roles = rolesOf(draft, kept);
  draft.desired.push(...kept.filter((c) => !roles.growth.includes(c)).map((c) => c.keep));
  draft.desired.push(
    ...Object.entries(draft.memory.requested).map(([name, r]) =>
      allocationObject(draft, name, "loadbalancer", "growth", r.pool, r.count)
    ),
  );
  if (!draft.refs.length) {
    draft.conditions.push({
      type: "NetworkReady",
      status: "False",
      reason: "NetworkNotReady",
      message: "network.mode is 'ipam' but no poolRefs configured",
    });
  }
  const exhausted = requestInitial(draft, roles);
  const lbReady = roles.initial?.value.status?.phase === "Allocated";
  const nodesReady = roles.nodes?.value.status?.phase === "Allocated";
  if (draft.refs.length) draft.conditions.push(networkReady(draft, roles, exhausted));
  planGrowth(draft, roles, lbReady);
  const addresses = lbAddresses(input.children, draft.desired);
  return {
    allocations: draft.desired.sort((a, b) => (a.metadata.name < b.metadata.name ? -1 : 1)),
    memory: memoryOut(draft.memory),
    conditions: draft.conditions,
    addresses,
    ...refTo("lbAllocationRef", roles.initial, lbName(draft.tc), draft.desired),
    ...refTo("ipAllocationRef", roles.nodes, nodesName(draft.tc), draft.desired),
    ready: Boolean(lbReady && nodesReady),
    dueAt: draft.dueAt,
  };
}

/** The observed children kept; a Failed one (not pinned) is released, and its pool remembered, so a new one moves on. */
function keepObserved({ input, memory }: Draft): ObservedChild[] {
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
  return kept;
}

/** The initial LoadBalancer and node allocations (by name, else by role, else adopted) and the growth ones. */
function rolesOf({ input, tc, ns }: Draft, kept: readonly ObservedChild[]): Roles {
  const lbChildren = kept.filter((c) => c.value.spec.type === "loadbalancer");
  const adopting = input.adopting ?? [];
  const initial = lbChildren.find((c) => c.name === lbName(tc)) ??
    lbChildren.find((c) => roleOf(c, tc, ns) === "initial") ??
    adopting.find((c) => c.value.spec.type === "loadbalancer" && roleOf(c, tc, ns) === "initial");
  const nodes = kept.find((c) => c.name === nodesName(tc)) ??
    kept.find((c) => c.value.spec.type === "nodes") ??
    adopting.find((c) => c.value.spec.type === "nodes");
  const growth = lbChildren.filter((c) => c !== initial && roleOf(c, tc, ns) === "growth");
  return { lbChildren, initial, nodes, growth };
}

/**
 * Requests the initial LoadBalancer allocation and the node allocation where neither exists (the node count from
 * the spec, else the chosen pool's default); returns whether a pool had no room for one.
 */
function requestInitial(draft: Draft, roles: Roles): boolean {
  const { input, tc, lb, quota, present, memory } = draft;
  const networking = input.cluster.spec.networking;
  const may = input.mayCreate && draft.refs.length > 0;
  let exhausted = false;
  const request = (name: string, type: "nodes" | "loadbalancer", count: (p: PoolView) => number) => {
    const choice = choosePool(draft, count, memory.failedPools[name] ?? []);
    if (choice) draft.desired.push(allocationObject(draft, name, type, "initial", choice.pool, choice.count));
    else exhausted = true;
  };
  const lbCount = Math.min(
    networking?.lbPoolSize ??
      (draft.elastic
        ? lb.initialPoolSize ?? DEFAULTS.initialPoolSize
        : lb.defaultPoolSize ?? DEFAULTS.lbPoolSize),
    quota.maxLoadBalancerIPs ?? Number.MAX_SAFE_INTEGER,
  );
  if (!roles.initial && !present.has(lbName(tc)) && may) request(lbName(tc), "loadbalancer", () => lbCount);
  if (!roles.nodes && !present.has(nodesName(tc)) && may) {
    request(nodesName(tc), "nodes", (p) =>
      Math.min(
        networking?.nodeIPs ?? p.spec?.tenantAllocation?.defaults?.nodesPerTenant ?? DEFAULTS.nodeIPs,
        quota.maxNodeIPs ?? Number.MAX_SAFE_INTEGER,
      ));
  }
  return exhausted;
}

/** `NetworkReady`: both initial allocations Allocated, else why not yet. */
function networkReady({ input }: Draft, { initial, nodes }: Roles, exhausted: boolean): ConditionInput {
  const lbReady = initial?.value.status?.phase === "Allocated";
  if (lbReady && nodes?.value.status?.phase === "Allocated") {
    return {
      type: "NetworkReady",
      status: "True",
      reason: "Allocated",
      message: `LB IPs allocated: ${initial!.value.status!.cidr ?? ""}`,
    };
  }
  const refused = [initial, nodes].find((c) => c?.refused);
  if (refused) {
    return {
      type: "NetworkReady",
      status: "False",
      reason: GRANT_CONFLICT,
      message: `IPAllocation ${refused.name}: ${refused.refused}`,
    };
  }
  if (exhausted) {
    return {
      type: "NetworkReady",
      status: "False",
      reason: "PoolExhausted",
      message: "all configured pools are exhausted",
    };
  }
  if (!input.mayCreate && (!initial || !nodes)) {
    return {
      type: "NetworkReady",
      status: "False",
      reason: "Blocked",
      message:
        "no IP allocation is requested while the cluster's inputs are missing, invalid or refused (see Ready)",
    };
  }
  return {
    type: "NetworkReady",
    status: "False",
    reason: "Reconciling",
    message: lbReady ? "waiting for node IP allocation" : "waiting for LB IP allocation",
  };
}

/** The MetalLB addresses: the Allocated LoadBalancer children kept, as `start-end` ranges, IPv4 first, in order. */
function lbAddresses(children: readonly ObservedChild[], desired: readonly KubeObject[]): string[] {
  return desired
    .flatMap((o) => {
      const c = children.find((k) => k.keep === o);
      const r = c && c.value.spec.type === "loadbalancer" ? rangeOf(c.value) : undefined;
      return r ? [{ r, text: `${c!.value.status!.startAddress}-${c!.value.status!.endAddress}` }] : [];
    })
    .sort((a, b) => a.r.family - b.r.family || (a.r.start < b.r.start ? -1 : a.r.start > b.r.start ? 1 : 0))
    .map((a) => a.text);
}

/** The memory as status records it: empty parts left out, keys sorted. */
function memoryOut(memory: WorkingMemory): IpamMemory {
  return {
    ...(memory.nextGrowthIndex !== undefined ? { nextGrowthIndex: memory.nextGrowthIndex } : {}),
    ...(Object.keys(memory.unusedSince).length ? { unusedSince: sortKeys(memory.unusedSince) } : {}),
    ...(Object.keys(memory.failedPools).length ? { failedPools: sortKeys(memory.failedPools) } : {}),
    ...(Object.keys(memory.requested).length ? { requested: sortKeys(memory.requested) } : {}),
    ...(memory.released.length ? { released: [...memory.released].sort() } : {}),
  };
}

/** A status reference to the allocation of a role: the one observed, else the one this plan creates. */
function refTo<K extends "lbAllocationRef" | "ipAllocationRef">(
  key: K,
  observed: ObservedChild | undefined,
  name: string,
  desired: readonly KubeObject[],
): { [P in K]?: string } {
  if (observed) return { [key]: observed.name } as { [P in K]?: string };
  return (desired.some((d) => d.metadata.name === name) ? { [key]: name } : {}) as { [P in K]?: string };
}

function sortKeys<T>(o: Record<string, T>): Record<string, T> {
  return Object.fromEntries(Object.keys(o).sort().map((k) => [k, o[k]!]));
}
