/**
 * The TenantCluster CompositeController: effective shape, provider access, static and elastic IPAM, the MetalLB
 * projection and cleanup.
 *
 * @module
 */
export * from "./network.ts";
export * from "./metallb.ts";
export * from "./resync.ts";
export * from "./sync.ts";
export * from "./routes.ts";
export * from "./admission.ts";
