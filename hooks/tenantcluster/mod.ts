/**
 * The TenantCluster CompositeController: effective shape, provider access, static and elastic IPAM, the MetalLB
 * projection and cleanup; and its admission webhook: provider scope, quotas, environments and feature
 * restrictions, with the per-team quota ledger.
 *
 * @module
 */
export * from "./network.ts";
export { DEFAULTS, type ObservedChild, type Plan, type PlanInput, type Role, roleOf } from "./plan_draft.ts";
export * from "./elastic.ts";
export * from "./metallb.ts";
export * from "./resync.ts";
export * from "./sync.ts";
export * from "./routes.ts";
export * from "./admission.ts";
export * from "./quota.ts";
export * from "./restrictions.ts";
export * from "./footprint.ts";
export * from "./usage.ts";
export * from "./reservations.ts";
export * from "./signals.ts";
export * from "./holds.ts";
export * from "./gate.ts";
export * from "./record.ts";
