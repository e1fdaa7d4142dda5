/**
 * Names of Butler's API: group, version, kinds, labels and defaults, shared by every hook.
 *
 * @module
 */
import type { TypeRef } from "../contract/mod.ts";

/** API group of every Butler kind. */
export const GROUP = "butler.butlerlabs.dev";
/** apiVersion of every Butler kind. */
export const API_VERSION = `${GROUP}/v1alpha1`;
/** Namespace of platform objects (NetworkPools, platform ProviderConfigs). */
export const SYSTEM_NAMESPACE = "butler-system";

/** Butler kinds as declared in the controllers' rules (exact apiVersion). */
export const KINDS = {
  NetworkPool: { apiVersion: API_VERSION, kind: "NetworkPool" },
  IPAllocation: { apiVersion: API_VERSION, kind: "IPAllocation" },
  ProviderConfig: { apiVersion: API_VERSION, kind: "ProviderConfig" },
  TenantCluster: { apiVersion: API_VERSION, kind: "TenantCluster" },
  Team: { apiVersion: API_VERSION, kind: "Team" },
  LoadBalancerInventory: { apiVersion: API_VERSION, kind: "LoadBalancerInventory" },
} as const satisfies Record<string, TypeRef>;

/** Label and annotation keys the seeds define. */
export const LABELS = {
  team: `${GROUP}/team`,
  tenant: `${GROUP}/tenant`,
  networkPool: `${GROUP}/network-pool`,
  allocationType: `${GROUP}/allocation-type`,
  allocationRole: `${GROUP}/allocation-role`,
  environment: `${GROUP}/environment`,
  providerConfig: `${GROUP}/provider-config`,
  managedBy: "app.kubernetes.io/managed-by",
} as const;

/** Saturates a count for an integer status field (IPv6 pools can exceed 2^53). */
export function statusNumber(value: bigint): number {
  return value > BigInt(Number.MAX_SAFE_INTEGER) ? Number.MAX_SAFE_INTEGER : Number(value);
}
