import type { Hono } from "hono";
import { type AppEnv, bindComposite, bindCustomize } from "../../lib/http/mod.ts";
import { customizeTenantCluster, syncTenantCluster } from "./sync.ts";

/** Registers the TenantCluster CompositeController hooks. Finalize is sync with `finalizing: true`. */
export function registerTenantClusterRoutes(app: Hono<AppEnv>): void {
  app.post("/hooks/tenantcluster/customize", bindCustomize(customizeTenantCluster));
  app.post("/hooks/tenantcluster/sync", bindComposite(syncTenantCluster));
  app.post("/hooks/tenantcluster/finalize", bindComposite(syncTenantCluster));
}
