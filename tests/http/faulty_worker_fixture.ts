/**
 * A hook worker with every hook route and `/hooks/faulty/sync` (`faulty_routes.ts`). Run by `spawnIsolate` like
 * `worker.ts`, it proves what a hook that cannot finish does to the service.
 */
import { HOOK_ROUTES } from "../../hooks/mod.ts";
import { serveHookWorker } from "../../lib/http/mod.ts";
import { registerFaultyRoutes } from "./faulty_routes.ts";

serveHookWorker([...HOOK_ROUTES, registerFaultyRoutes]);
