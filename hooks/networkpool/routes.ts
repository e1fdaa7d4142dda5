import type { Hono } from "hono";
import { admitNetworkPool, networkPoolAdmissionReads } from "./admission.ts";
import { type AppEnv, bindAdmission, bindCustomize, bindDecorator } from "../../lib/http/mod.ts";
import { networkPoolSignals } from "./signals.ts";
import { customizeNetworkPool, syncNetworkPool } from "./sync.ts";

/** Registers the NetworkPool DecoratorController hooks, and its validating webhook. Finalize is sync with `finalizing: true`. */
export function registerNetworkPoolRoutes(app: Hono<AppEnv>): void {
  app.post("/hooks/networkpool/customize", bindCustomize(customizeNetworkPool));
  app.post("/hooks/networkpool/sync", bindDecorator(syncNetworkPool, networkPoolSignals));
  app.post(
    "/webhooks/validate/networkpool",
    bindAdmission("networkpool", admitNetworkPool, networkPoolAdmissionReads),
  );
  app.post("/hooks/networkpool/finalize", bindDecorator(syncNetworkPool, networkPoolSignals));
}
