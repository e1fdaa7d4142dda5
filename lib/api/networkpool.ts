import { z } from "zod";

/** `NetworkPool.spec` as the hook reads it (the CRD enforces the same shape). */
export const NetworkPoolSpec = z.looseObject({
  cidr: z.string(),
  gateway: z.string().optional(),
  prefix: z.number().int().min(0).max(128).optional(),
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
  releaseCooldownSeconds: z.number().int().min(0).optional(),
  releaseHistoryLimit: z.number().int().min(0).optional(),
});

/** A NetworkPool's spec. */
export type NetworkPoolSpec = z.infer<typeof NetworkPoolSpec>;

/** Seed defaults for allocations that leave `count` unset. */
export const DEFAULT_NODES_PER_TENANT = 5;
/** Seed default LB addresses per tenant. */
export const DEFAULT_LB_POOL_PER_TENANT = 8;
