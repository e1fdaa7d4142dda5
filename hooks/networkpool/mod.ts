/**
 * The NetworkPool DecoratorController: the single allocator. The pool's status is the ledger of grants.
 *
 * @module
 */
export * from "./sync.ts";
export * from "./grant.ts";
export * from "./figures.ts";
export * from "./routes.ts";
export * from "./admission.ts";
export * from "./capacity_events.ts";
export * from "./signals.ts";
export * from "./overlap.ts";
export * from "./registry.ts";
export * from "./releases.ts";
