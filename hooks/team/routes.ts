import type { Hono } from "hono";
import { admitTeam, teamAdmissionReads } from "./admission.ts";
import { teamSignals } from "./signals.ts";
import { type AppEnv, bindAdmission, bindComposite, bindCustomize } from "../../lib/http/mod.ts";
import { customizeTeam, syncTeam } from "./sync.ts";

/** Registers the Team CompositeController hooks, and its validating webhook. Finalize is sync with `finalizing: true`. */
export function registerTeamRoutes(app: Hono<AppEnv>): void {
  app.post("/hooks/team/customize", bindCustomize(customizeTeam));
  app.post("/hooks/team/sync", bindComposite(syncTeam, teamSignals));
  app.post("/webhooks/validate/team", bindAdmission("team", admitTeam, teamAdmissionReads));
  app.post("/hooks/team/finalize", bindComposite(syncTeam, teamSignals));
}
