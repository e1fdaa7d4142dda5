/**
 * The IPAllocation DecoratorController: labels from spec, status projected from the pool's ledger, and the
 * `Released` finalizer.
 *
 * @module
 */
export * from "./sync.ts";
export * from "./routes.ts";
