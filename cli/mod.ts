/**
 * `kubectl butler`: Butler's kubectl plugin (also installed as `butleradm`). {@link ./main.ts} is the program and
 * {@link ./commands.ts} its commands' I/O; each command's logic is a pure module of its own, its decisions the
 * API server's admission or the controllers' own functions.
 *
 * @module
 */
export * from "./adopt.ts";
export * from "./cluster_create.ts";
export * from "./colour.ts";
export * from "./command.ts";
export * from "./commands.ts";
export * from "./connection.ts";
export * from "./env_edit.ts";
export * from "./env_migrate.ts";
export * from "./help.ts";
export * from "./ledger.ts";
export { runCli, terminalIo } from "./main.ts";
export * from "./pool_show.ts";
export * from "./shim.ts";
export * from "./team_usage.ts";
