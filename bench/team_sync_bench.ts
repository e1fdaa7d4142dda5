/**
 * `npx -y deno@2.9.6 bench hooks/team/sync_bench.ts`
 *
 * A Team sync through the HTTP route with 1,000 TenantClusters related: the `payments`-style team (two
 * environments, quotas on every dimension), clusters spread over both environments and 20 owners.
 */
import { HOOK_ROUTES } from "../hooks/mod.ts";
import { createTestApp } from "../lib/testing/mod.ts";
import { teamSyncBody } from "./team_data.ts";
import { count, RUNS, sized } from "./smoke.ts";

const CLUSTERS = sized(1000, 50);
const body = teamSyncBody(CLUSTERS);
const { app } = createTestApp(HOOK_ROUTES);

Deno.bench(
  `Team sync over HTTP: ${count(CLUSTERS)} TenantClusters (${(body.length / 1e6).toFixed(1)} MB request)`,
  RUNS,
  async () => {
    const res = await app.request("/hooks/team/sync", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    if (res.status !== 200) throw new Error(`status ${res.status}: ${await res.text()}`);
    await res.arrayBuffer();
  },
);
