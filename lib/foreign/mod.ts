/**
 * The door for foreign bytes: what parsing bytes a team, a tenant or an unauthenticated caller controls can cost
 * the heap, known before the parse (`json_cost.ts`), and the budget each isolate charges it to (`heap_budget.ts`).
 *
 * @module
 */
export * from "./json_cost.ts";
export * from "./heap_budget.ts";
export * from "./project.ts";
export * from "./door.ts";
export * from "./yaml.ts";
