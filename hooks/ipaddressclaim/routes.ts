import type { Hono } from "hono";
import { type AppEnv, bindCustomize, bindDecorator } from "../../lib/http/mod.ts";
import { customizeIPAddressClaim, syncIPAddressClaim } from "./sync.ts";

/** Registers the IPAddressClaim DecoratorController hooks (Cluster API IPAM; no finalize: the claim's GC releases). */
export function registerIPAddressClaimRoutes(app: Hono<AppEnv>): void {
  app.post("/hooks/ipaddressclaim/customize", bindCustomize(customizeIPAddressClaim));
  app.post("/hooks/ipaddressclaim/sync", bindDecorator(syncIPAddressClaim));
}
