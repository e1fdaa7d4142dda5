/**
 * Custom resources judged offline as the API server judges them: structural schema, pruning and strict unknown
 * fields, defaulting, list invariants and `x-kubernetes-validations` CEL rules, in the API server's words.
 *
 * @module
 */
export * from "./structural.ts";
export * from "./field_error.ts";
export * from "./validate.ts";
export * from "./prune.ts";
export * from "./list_type.ts";
export * from "./cel.ts";
export * from "./object.ts";
export * from "./policy.ts";
export * from "./names.ts";
export * from "./object_meta.ts";
export * from "./meta_decode.ts";
export * from "./formats.ts";
