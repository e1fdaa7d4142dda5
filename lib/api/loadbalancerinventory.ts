import { z } from "zod";

/**
 * `LoadBalancerInventory.spec`: the tenant's LoadBalancer Services, reported by whatever watches the tenant (our
 * reporter, or anything else). `observedAt` is when the list was last known to be true: the TenantCluster hook
 * treats an inventory older than {@linkcode inventoryMaxAgeSeconds} as "demand unknown".
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

/**
 * How old an inventory may be while an elastic decision waits on it before the TenantCluster reports
 * `DemandUnknown` and decides nothing (seconds).
 */
export const INVENTORY_MAX_AGE_SECONDS = 300;

/**
 * How old an inventory may be while no decision waits on it (seconds): nothing is decided from it then, so only
 * a reporter that stopped is to be noticed, and this is how long that may take.
 */
export const INVENTORY_IDLE_MAX_AGE_SECONDS = 1800;

/**
 * Whether an elastic decision waits on the tenant's next observation: a Service is pending (growth is measured),
 * or a growth allocation of the cluster is counting down to its release (`status.ipam.unusedSince`; it is released
 * only on a fresh observation that it is still unused). The TenantCluster and whoever writes the inventory read
 * the same facts, so the writer knows when `observedAt` must be kept fresh: only then does a heartbeat have to
 * wake the TenantCluster often. `countdowns` are the ones that matter to the caller: the writer passes every
 * running one, so that the observation is fresh when one runs out; the TenantCluster those that have run out.
 *
 * @example
 * ```ts
 * demandAwaited([{ namespace: "a", name: "web", createdAt: "2026-01-01T00:00:00Z" }], undefined); // true
 * demandAwaited([], { "c-lb-2": "2026-01-01T00:00:00Z" }); // true
 * demandAwaited([], {}); // false
 * ```
 */
export function demandAwaited(
  services: readonly InventoryService[] | undefined,
  countdowns: Readonly<Record<string, unknown>> | undefined,
): boolean {
  return (services ?? []).some((s) => !s.ingressIPs?.length) || Object.keys(countdowns ?? {}).length > 0;
}

/**
 * The age past which the TenantCluster treats an inventory as unknown demand:
 * {@linkcode INVENTORY_MAX_AGE_SECONDS} while {@linkcode demandAwaited}, else
 * {@linkcode INVENTORY_IDLE_MAX_AGE_SECONDS}.
 *
 * @example
 * ```ts
 * inventoryMaxAgeSeconds([], {}); // 1800
 * ```
 */
export function inventoryMaxAgeSeconds(
  services: readonly InventoryService[] | undefined,
  countdowns: Readonly<Record<string, unknown>> | undefined,
): number {
  return demandAwaited(services, countdowns) ? INVENTORY_MAX_AGE_SECONDS : INVENTORY_IDLE_MAX_AGE_SECONDS;
}
