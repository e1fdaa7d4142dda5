import { z } from "zod";

/** `NetworkPool.spec` as the hook reads it (the CRD enforces the same shape). */
export const NetworkPoolSpec = z.looseObject({
  cidr: z.string(),
  reserved: z.array(z.looseObject({ cidr: z.string(), description: z.string().optional() })).optional(),
  tenantAllocation: z.looseObject({
    start: z.string().optional(),
    end: z.string().optional(),
    ranges: z.array(z.looseObject({ start: z.string(), end: z.string() })).optional(),
    defaults: z.looseObject({
      nodesPerTenant: z.number().int().min(1).optional(),
      lbPoolPerTenant: z.number().int().min(1).optional(),
    }).optional(),
  }).optional(),
});

/** A NetworkPool's spec. */
export type NetworkPoolSpec = z.infer<typeof NetworkPoolSpec>;

/** Seed defaults for allocations that leave `count` unset. */
export const DEFAULT_NODES_PER_TENANT = 5;
/** Seed default LB addresses per tenant. */
export const DEFAULT_LB_POOL_PER_TENANT = 8;

/** The allocation types and their `count` defaults in `tenantAllocation.defaults`. */
export const ALLOCATION_TYPES = ["nodes", "loadbalancer"] as const;

/** `IPAllocation.spec` as both hooks read it. */
export const IPAllocationSpec = z.looseObject({
  poolRef: z.looseObject({ name: z.string().min(1), namespace: z.string().min(1).optional() }),
  tenantClusterRef: z.looseObject({ name: z.string().optional(), namespace: z.string().optional() })
    .optional(),
  type: z.enum(ALLOCATION_TYPES),
  count: z.number().int().min(1).optional(),
  pinnedRange: z.looseObject({ startAddress: z.string().min(1), endAddress: z.string().min(1) }).optional(),
});

/** An IPAllocation's spec. */
export type IPAllocationSpec = z.infer<typeof IPAllocationSpec>;

/** An IPAllocation as the NetworkPool hook needs it: identity, age and spec. */
export const ObservedAllocation = z.looseObject({
  metadata: z.looseObject({
    name: z.string(),
    namespace: z.string(),
    uid: z.string().min(1),
    creationTimestamp: z.string().nullable().optional(),
    deletionTimestamp: z.string().nullable().optional(),
  }),
  spec: IPAllocationSpec,
});

/** An IPAllocation as observed by the pool. */
export type ObservedAllocation = z.infer<typeof ObservedAllocation>;
