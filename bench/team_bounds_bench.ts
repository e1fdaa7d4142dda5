/**
 * `npx -y deno@2.9.6 bench --allow-read --allow-env bench/team_bounds_bench.ts`
 *
 * What a Team at the CRD's bounds costs its sync (issue #46): the resync Metacontroller sends with every child
 * observed, through the HTTP route, against a 10-member Team with the same 20 TenantClusters. The work is linear
 * in what the Team writes, so the ratio stays small; docs/performance.md records the figures.
 */
import { HOOK_ROUTES } from "../hooks/mod.ts";
import { TEAM_BOUNDS } from "../lib/api/mod.ts";
import { createTestApp } from "../lib/testing/mod.ts";
import { type TeamShape, teamShapeSyncBody } from "./team_data.ts";
import { RUNS } from "./smoke.ts";

const CLUSTERS = 20;
const SMALL: TeamShape = { users: 10, groups: 0, environments: 2, environmentUsers: 2, environmentGroups: 0 };
const BOUNDS: TeamShape = {
  users: TEAM_BOUNDS.users,
  groups: TEAM_BOUNDS.groups,
  environments: TEAM_BOUNDS.environments,
  environmentUsers: TEAM_BOUNDS.environmentUsers,
  environmentGroups: TEAM_BOUNDS.environmentGroups,
};
const { app } = createTestApp(HOOK_ROUTES);

const LONG_NAMES: TeamShape = { ...BOUNDS, nameLength: TEAM_BOUNDS.subjectName };

for (
  const [label, shape] of [
    ["a 10-member Team", SMALL],
    ["a Team at the bounds", BOUNDS],
    ["a Team at the bounds, every name at its bound", LONG_NAMES],
  ] as const
) {
  // Bytes with their length, as Metacontroller sends them (the body limit then reads the header, not the body).
  const body = new TextEncoder().encode(teamShapeSyncBody(shape, CLUSTERS));
  const headers = { "content-type": "application/json", "content-length": String(body.length) };
  Deno.bench({
    name: `Team resync over HTTP: ${label} (${(body.length / 1e3).toFixed(0)} KB request)`,
    group: "team-bounds",
    baseline: shape === SMALL,
    ...RUNS,
    async fn() {
      const res = await app.request("/hooks/team/sync", {
        method: "POST",
        headers,
        body,
      });
      if (res.status !== 200) throw new Error(`status ${res.status}: ${await res.text()}`);
      await res.arrayBuffer();
    },
  });
}
