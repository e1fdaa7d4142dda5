import type { Hono } from "hono";
import { type AppEnv, bindCustomize, bindDecorator } from "../../lib/http/mod.ts";
import { customizeIPAllocation, finalizeIPAllocation, syncIPAllocation } from "./sync.ts";

/** Registers the IPAllocation DecoratorController hooks. */
export function registerIPAllocationRoutes(app: Hono<AppEnv>): void {
  app.post("/hooks/ipallocation/customize", bindCustomize(customizeIPAllocation));
  app.post("/hooks/ipallocation/sync", bindDecorator(syncIPAllocation));
  app.post("/hooks/ipallocation/finalize", bindDecorator(finalizeIPAllocation));
}
