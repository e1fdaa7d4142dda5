/**
 * The ProviderConfig DecoratorController: admission rules (shared with the CRD's CEL), credentials check,
 * readiness, pool capacity, and the delete guard.
 *
 * @module
 */
export * from "./rules.ts";
export * from "./credentials.ts";
export * from "./sync.ts";
export * from "./routes.ts";
export * from "./admission.ts";
