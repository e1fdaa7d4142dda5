import { z } from "zod";

/**
 * `LoadBalancerInventory.spec`: the tenant's LoadBalancer Services, reported by whatever watches the tenant (our
 * reporter, or anything else). `observedAt` is when the list was last known to be true: the TenantCluster hook
 * treats an inventory older than five minutes as "demand unknown".
 */
export const InventorySpec = z.looseObject({
  observedAt: z.string(),
  services: z.array(z.looseObject({
    namespace: z.string(),
    name: z.string(),
    createdAt: z.string(),
    ingressIPs: z.array(z.string()).optional(),
  })).optional(),
});
/** An inventory's spec. */
export type InventorySpec = z.infer<typeof InventorySpec>;

/** One Service of an inventory. */
export type InventoryService = NonNullable<InventorySpec["services"]>[number];

/**
 * `LoadBalancerInventory.status` as the reporter writes it: how the tenant was read (`Reporting`), whether every
 * Service fitted (`Complete`), and the counts the printer columns show. The hook never reads it.
 */
export const InventoryStatus = z.looseObject({
  services: z.number().int().optional(),
  pending: z.number().int().optional(),
  conditions: z.array(z.unknown()).optional(),
});
/** An inventory's status. */
export type InventoryStatus = z.infer<typeof InventoryStatus>;
