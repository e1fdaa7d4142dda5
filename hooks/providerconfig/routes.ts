import type { Hono } from "hono";
import { type AppEnv, bindCustomize, bindDecorator } from "../../lib/http/mod.ts";
import { customizeProviderConfig, syncProviderConfig } from "./sync.ts";

/** Registers the ProviderConfig DecoratorController hooks. Finalize is sync with `finalizing: true`. */
export function registerProviderConfigRoutes(app: Hono<AppEnv>): void {
  app.post("/hooks/providerconfig/customize", bindCustomize(customizeProviderConfig));
  app.post("/hooks/providerconfig/sync", bindDecorator(syncProviderConfig));
  app.post("/hooks/providerconfig/finalize", bindDecorator(syncProviderConfig));
}
