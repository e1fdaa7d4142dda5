import { z } from "zod";
import { GROUP } from "../butler/mod.ts";

/** Cluster API's IPAM group, and the version the controller watches and writes (its storage version). */
export const CAPI_IPAM_GROUP = "ipam.cluster.x-k8s.io";
/** `ipam.cluster.x-k8s.io/v1beta2`: Cluster API >= 1.11 stores it and converts v1beta1 to it. */
export const CAPI_IPAM_API_VERSION = `${CAPI_IPAM_GROUP}/v1beta2`;

/** A Cluster API pool reference (`IPPoolReference`): the pool is in the claim's own namespace. */
export const PoolReference = z.looseObject({
  apiGroup: z.string().optional(),
  kind: z.string(),
  name: z.string().min(1),
});

/** `IPAddressClaim.spec` as the controller reads it. */
export const IPAddressClaimSpec = z.looseObject({
  poolRef: PoolReference,
  clusterName: z.string().optional(),
});

/** An IPAddressClaim's spec. */
export type IPAddressClaimSpec = z.infer<typeof IPAddressClaimSpec>;

/**
 * Whether a claim's pool is a NetworkPool (`apiGroup: butler.butlerlabs.dev`, `kind: NetworkPool`): only those
 * claims are ours; every other IPAM provider's are left alone.
 *
 * @example
 * ```ts
 * claimsNetworkPool({ poolRef: { apiGroup: "butler.butlerlabs.dev", kind: "NetworkPool", name: "nodes" } }); // true
 * claimsNetworkPool({ poolRef: { apiGroup: "ipam.cluster.x-k8s.io", kind: "InClusterIPPool", name: "x" } }); // false
 * ```
 */
export function claimsNetworkPool(spec: unknown): spec is IPAddressClaimSpec {
  const parsed = IPAddressClaimSpec.safeParse(spec);
  return parsed.success && parsed.data.poolRef.apiGroup === GROUP &&
    parsed.data.poolRef.kind === "NetworkPool";
}
