/**
 * Hook work where running out of memory or time ends only a replaceable isolate: `node:worker_threads` workers
 * with resource limits (`isolate.ts`), the pool that queues, times and replaces them (`pool.ts`), and the parents
 * whose hook keeps failing, answered without running it (`poison.ts`).
 *
 * @module
 */
export * from "./isolate.ts";
export * from "./pool.ts";
export * from "./poison.ts";
