/**
 * `kubectl butler`: Butler's kubectl plugin (also installed as `butleradm`). {@link ./main.ts} is the program;
 * each command's logic is in its own module, its decisions left to the API server's admission.
 *
 * @module
 */
export * from "./connection.ts";
export * from "./env_migrate.ts";
export * from "./main.ts";
export * from "./shim.ts";
