import type { Hono } from "hono";
import { type AppEnv, bindCustomize, bindDecorator } from "../../lib/http/mod.ts";
import { customizeNetworkPool, syncNetworkPool } from "./sync.ts";

/** Registers the NetworkPool DecoratorController hooks. Finalize is sync with `finalizing: true`. */
export function registerNetworkPoolRoutes(app: Hono<AppEnv>): void {
  app.post("/hooks/networkpool/customize", bindCustomize(customizeNetworkPool));
  app.post("/hooks/networkpool/sync", bindDecorator(syncNetworkPool));
  app.post("/hooks/networkpool/finalize", bindDecorator(syncNetworkPool));
}
