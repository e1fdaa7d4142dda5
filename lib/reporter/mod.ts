/**
 * The LoadBalancer reporter: the bridge to IPAM tenants. It reads elastic IPAM's demand from the tenant clusters'
 * Services into LoadBalancerInventories, and applies each tenant's MetalLB configuration (its allocated
 * addresses) to the tenant. The pure parts ({@link ./inventory.ts}, {@link ./tenants.ts}, {@link ./shards.ts},
 * {@link ./metallb.ts}, {@link ./recheck.ts}) decide; {@link ./coalesce.ts} paces the reconciles;
 * {@link ./tenant.ts} and {@link ./reporter.ts} do the I/O.
 *
 * @module
 */
export * from "./inventory.ts";
export * from "./tenants.ts";
export * from "./shards.ts";
export * from "./metallb.ts";
export * from "./classify.ts";
export * from "./recheck.ts";
export * from "./coalesce.ts";
export * from "./tenant.ts";
export * from "./reporter.ts";
