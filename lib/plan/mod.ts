/**
 * `plan`: what the controllers and admission will do with a folder of manifests, offline. An in-memory API
 * server ({@linkcode Store}) and Metacontroller's way of applying hook answers ({@linkcode reconcile}) drive the
 * real hooks and webhooks until a fixed point ({@linkcode runPlan}); {@linkcode renderText} prints it.
 *
 * @module
 */
export * from "./admission.ts";
export * from "./api.ts";
export * from "./input.ts";
export * from "./metacontroller.ts";
export * from "./plan.ts";
export * from "./resources.ts";
export * from "./store.ts";
export * from "./report.ts";
export * from "./files.ts";
export * from "./verdict.ts";
export * from "./apply.ts";
export * from "./kinds.ts";
export * from "./mask.ts";
