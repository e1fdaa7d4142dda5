/**
 * The Team CompositeController: namespace, least-privilege RBAC, usage and quota, environments, and
 * Capsule-style namespace quotas.
 *
 * @module
 */
export * from "./groups.ts";
export * from "./access.ts";
export * from "./rbac.ts";
export * from "./usage.ts";
export * from "./sync.ts";
export * from "./routes.ts";
export * from "./admission.ts";
export * from "./signals.ts";
