import { z } from "zod";

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

/**
 * The grant an IPAllocation's status records (written by its own hook from the pool's ledger). Read by a pool only
 * for allocations its ledger does not hold, so that one whose ledger was lost gives each its grant back; a status
 * that does not read is no record.
 */
export const RecordedGrant = z.object({
  phase: z.literal("Allocated"),
  startAddress: z.string().max(64),
  endAddress: z.string().max(64),
  allocatedBy: z.string().max(512),
});

/**
 * An IPAllocation as the NetworkPool hook needs it: identity, age, spec and the grant its status records, and
 * nothing else. A pool sync reads thousands; the rest of each object (labels, managed fields) is neither checked
 * nor copied.
 */
export const ObservedAllocation = z.object({
  metadata: z.object({
    name: z.string(),
    namespace: z.string(),
    uid: z.string().min(1),
    creationTimestamp: z.string().nullable().optional(),
    deletionTimestamp: z.string().nullable().optional(),
    annotations: z.record(z.string(), z.string()).nullable().optional().catch(undefined),
  }),
  spec: IPAllocationSpec,
  status: RecordedGrant.optional().catch(undefined),
});

/** An IPAllocation as observed by the pool. */
export type ObservedAllocation = z.infer<typeof ObservedAllocation>;

/**
 * The TenantCluster a hand-made IPAllocation names (`spec.tenantClusterRef`, namespace defaulting to the
 * allocation's), if it names one.
 *
 * @example
 * ```ts
 * tenantClusterRefOf({ tenantClusterRef: { name: "api-prod" } }, "team-platform");
 * // { name: "api-prod", namespace: "team-platform" }
 * ```
 */
export function tenantClusterRefOf(
  spec: unknown,
  namespace: string,
): { name: string; namespace: string } | undefined {
  const ref = (spec as { tenantClusterRef?: { name?: unknown; namespace?: unknown } } | undefined)
    ?.tenantClusterRef;
  if (typeof ref?.name !== "string" || !ref.name) return undefined;
  return {
    name: ref.name,
    namespace: typeof ref.namespace === "string" && ref.namespace ? ref.namespace : namespace,
  };
}
