/**
 * A hook worker: every hook route, run on one request at a time that the pool hands over (`lib/http/hook_worker.ts`).
 *
 * @module
 */
import { HOOK_ROUTES } from "./hooks/mod.ts";
import { serveHookWorker } from "./lib/http/mod.ts";

export type { WorkerInit } from "./lib/http/mod.ts";

serveHookWorker(HOOK_ROUTES);
