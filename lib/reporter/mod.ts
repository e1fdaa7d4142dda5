/**
 * The LoadBalancer reporter: elastic IPAM's demand, read from the tenant clusters' Services and written as
 * LoadBalancerInventories. The pure parts ({@link ./inventory.ts}, {@link ./tenants.ts}, {@link ./shards.ts})
 * decide; {@link ./tenant.ts} and {@link ./reporter.ts} do the I/O.
 *
 * @module
 */
export * from "./inventory.ts";
export * from "./tenants.ts";
export * from "./shards.ts";
export * from "./tenant.ts";
export * from "./reporter.ts";
