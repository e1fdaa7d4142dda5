import type { Hono } from "hono";
import { admitProviderConfig, providerConfigAdmissionReads } from "./admission.ts";
import { type AppEnv, bindAdmission, bindCustomize, bindDecorator } from "../../lib/http/mod.ts";
import { customizeProviderConfig, syncProviderConfig } from "./sync.ts";

/** Registers the ProviderConfig DecoratorController hooks, and its validating webhook. Finalize is sync with `finalizing: true`. */
export function registerProviderConfigRoutes(app: Hono<AppEnv>): void {
  app.post("/hooks/providerconfig/customize", bindCustomize(customizeProviderConfig));
  app.post("/hooks/providerconfig/sync", bindDecorator(syncProviderConfig));
  app.post(
    "/webhooks/validate/providerconfig",
    bindAdmission("providerconfig", admitProviderConfig, providerConfigAdmissionReads),
  );
  app.post("/hooks/providerconfig/finalize", bindDecorator(syncProviderConfig));
}
