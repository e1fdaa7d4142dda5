import type { Hono } from "hono";
import {
  admitTenantCluster,
  TENANT_CLUSTER_ADMISSION_UNAVAILABLE,
  tenantClusterAdmissionChain,
  tenantClusterAdmissionKey,
  tenantClusterAdmissionReads,
} from "./admission.ts";
import { tenantClusterSignals } from "./signals.ts";
import { type AppEnv, bindAdmission, bindComposite, bindCustomize } from "../../lib/http/mod.ts";
import { customizeTenantCluster, syncTenantCluster } from "./sync.ts";

/** Registers the TenantCluster CompositeController hooks, and its validating webhook. Finalize is sync with `finalizing: true`. */
export function registerTenantClusterRoutes(app: Hono<AppEnv>): void {
  app.post("/hooks/tenantcluster/customize", bindCustomize(customizeTenantCluster));
  app.post("/hooks/tenantcluster/sync", bindComposite(syncTenantCluster, tenantClusterSignals));
  app.post(
    "/webhooks/validate/tenantcluster",
    bindAdmission(
      "tenantcluster",
      admitTenantCluster,
      tenantClusterAdmissionReads,
      {
        key: tenantClusterAdmissionKey,
        chain: tenantClusterAdmissionChain,
        unavailable: TENANT_CLUSTER_ADMISSION_UNAVAILABLE,
      },
    ),
  );
  app.post("/hooks/tenantcluster/finalize", bindComposite(syncTenantCluster, tenantClusterSignals));
}
