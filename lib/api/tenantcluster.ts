import { VERSION_PATTERN } from "../version/mod.ts";
import { z } from "zod";
import { SYSTEM_NAMESPACE } from "../butler/mod.ts";
import { NetworkPoolSpec } from "./networkpool.ts";
import { NetworkConfig, ProviderScope } from "./providerconfig.ts";

const Quantity = z.union([z.string(), z.number()]);

/** `TenantCluster.spec` as the hook reads it. */
export const TenantClusterSpec = z.looseObject({
  teamRef: z.looseObject({ name: z.string().min(1) }).optional(),
  providerConfigRef: z.looseObject({ name: z.string().min(1), namespace: z.string().min(1).optional() })
    .optional(),
  kubernetesVersion: z.string().regex(new RegExp(VERSION_PATTERN), "must look like v1.31.0 or 1.31.0")
    .optional(),
  workers: z.looseObject({
    replicas: z.number().int().min(1).optional(),
    machineTemplate: z.looseObject({
      cpu: Quantity.optional(),
      memory: Quantity.optional(),
      diskSize: Quantity.optional(),
    })
      .optional(),
  }).optional(),
  networking: z.looseObject({
    lbPoolSize: z.number().int().min(1).optional(),
    nodeIPs: z.number().int().min(1).optional(),
  }).optional(),
  addons: z.array(z.looseObject({ name: z.string().min(1) })).optional(),
});
/** A TenantCluster's spec. */
export type TenantClusterSpec = z.infer<typeof TenantClusterSpec>;

/** An IPAllocation child as the TenantCluster reads it. */
export const ChildAllocation = z.looseObject({
  metadata: z.looseObject({
    name: z.string(),
    namespace: z.string().optional(),
    labels: z.record(z.string(), z.string()).nullable().optional(),
    deletionTimestamp: z.string().nullable().optional(),
  }),
  spec: z.looseObject({
    poolRef: z.looseObject({ name: z.string(), namespace: z.string().optional() }),
    type: z.enum(["nodes", "loadbalancer"]),
    count: z.number().int().optional(),
    pinnedRange: z.looseObject({ startAddress: z.string(), endAddress: z.string() }).optional(),
  }),
  status: z.looseObject({
    phase: z.string().optional(),
    cidr: z.string().optional(),
    startAddress: z.string().optional(),
    endAddress: z.string().optional(),
    allocatedCount: z.number().int().optional(),
  }).nullable().optional(),
});
/** An IPAllocation child. */
export type ChildAllocation = z.infer<typeof ChildAllocation>;

/** The ProviderConfig fields the TenantCluster uses (the ProviderConfig hook's own schemas). */
export const ProviderView = z.looseObject({
  metadata: z.looseObject({ name: z.string(), namespace: z.string().optional() }),
  spec: z.looseObject({
    provider: z.string().optional(),
    scope: ProviderScope.optional(),
    network: NetworkConfig.optional(),
  }),
});
/** A ProviderConfig as the TenantCluster sees it. */
export type ProviderView = z.infer<typeof ProviderView>;

/** A NetworkPool as the TenantCluster sees it: its spec (for defaults) and its largest free block. */
export const PoolView = z.looseObject({
  metadata: z.looseObject({ name: z.string(), namespace: z.string().optional() }),
  spec: NetworkPoolSpec,
  status: z.looseObject({ largestFreeBlock: z.number().optional() }).optional(),
});
/** A NetworkPool as the TenantCluster sees it. */
export type PoolView = z.infer<typeof PoolView>;

/** What the TenantCluster keeps in `status.ipam` between syncs. */
export const IpamMemory = z.looseObject({
  nextGrowthIndex: z.number().int().min(1).optional(),
  unusedSince: z.record(z.string(), z.string()).optional(),
  failedPools: z.record(z.string(), z.array(z.string())).optional(),
  /** Growth allocations asked for but not observed yet (the child cache can lag): re-requested, counted in flight. */
  requested: z.record(z.string(), z.looseObject({ pool: z.string(), count: z.number().int().min(1) }))
    .optional(),
  /** Growth allocations released and still observed: kept out until they are gone (the cache can lag). */
  released: z.array(z.string()).optional(),
}).catch({});
/** Status memory of the IPAM decisions. */
export type IpamMemory = z.infer<typeof IpamMemory>;

/** The ProviderConfig a TenantCluster spec names (namespace default butler-system), if it names one. */
export function providerRefOf(spec: unknown): { name: string; namespace: string } | undefined {
  const ref = (spec as { providerConfigRef?: { name?: unknown; namespace?: unknown } } | undefined)
    ?.providerConfigRef;
  if (typeof ref?.name !== "string" || !ref.name) return undefined;
  return {
    name: ref.name,
    namespace: typeof ref.namespace === "string" && ref.namespace ? ref.namespace : SYSTEM_NAMESPACE,
  };
}
