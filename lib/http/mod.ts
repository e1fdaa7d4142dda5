/**
 * The HTTP layer of the hook service: the app builder, the generic hook binders, JSON errors and metrics. The
 * only part of the project, with each hook's `routes.ts`, that knows Hono.
 *
 * @module
 */
export * from "./app.ts";
export * from "./caller_auth.ts";
export * from "./bind.ts";
export * from "./bind_admission.ts";
export * from "./decision.ts";
export * from "./group_commit.ts";
export * from "./env.ts";
export * from "./errors.ts";
export * from "./metrics.ts";
export * from "./inflight.ts";
export * from "./domain_metrics.ts";
export * from "./body.ts";
export * from "./doors.ts";
export * from "./hook_worker.ts";
