import type { Hono } from "hono";
import { type AppEnv, bindComposite, bindCustomize } from "../../lib/http/mod.ts";
import { customizeTeam, syncTeam } from "./sync.ts";

/** Registers the Team CompositeController hooks. Finalize is sync with `finalizing: true`. */
export function registerTeamRoutes(app: Hono<AppEnv>): void {
  app.post("/hooks/team/customize", bindCustomize(customizeTeam));
  app.post("/hooks/team/sync", bindComposite(syncTeam));
  app.post("/hooks/team/finalize", bindComposite(syncTeam));
}
