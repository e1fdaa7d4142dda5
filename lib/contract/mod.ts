/**
 * The Metacontroller hook `v2` wire contract and the Kubernetes admission contract as zod schemas, with
 * helpers to read typed groups from object maps and to build children with the declared apiVersion.
 *
 * @module
 */
export * from "./object.ts";
export * from "./object_map.ts";
export * from "./hooks.ts";
export * from "./admission.ts";
