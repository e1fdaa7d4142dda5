/**
 * Address management as pure interval arithmetic: parsing and formatting of IPv4 and IPv6 addresses, CIDRs
 * and ranges; pool specification checks; and a best-fit allocator whose cost follows the number of
 * allocations and reserved ranges, never the pool size. Knows nothing about Kubernetes.
 *
 * @example
 * ```ts
 * import { Allocator, readPoolSpec } from "./mod.ts";
 * const spec = readPoolSpec({ cidr: "10.40.0.0/21", reserved: [{ cidr: "10.40.0.0/28" }] });
 * if (spec.ok) {
 *   const pool = Allocator.create({ ...spec.pool, allocations: [] });
 *   pool.allocate(8);
 * }
 * ```
 *
 * @module
 */
export * from "./address.ts";
export * from "./range.ts";
export * from "./errors.ts";
export * from "./allocator.ts";
export * from "./pool_spec.ts";
