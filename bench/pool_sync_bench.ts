/**
 * `npx -y deno@2.9.6 bench --allow-read hooks/networkpool/sync_bench.ts`
 *
 * A NetworkPool sync through the HTTP route (JSON parse, envelope validation, hook, strict response check, JSON
 * serialisation): a /12 whose ledger holds 5,000 or 20,000 grants, with as many IPAllocations related and 10 of
 * them new. Beside each, in the same run, the floor: a bare `JSON.parse` of the same request and
 * `JSON.stringify` of the same response. The 5,000-grant pool is also synced once as version 0.1 wrote it
 * (`status.grants`), which is what the first sync after an upgrade costs.
 */
import { HOOK_ROUTES } from "../hooks/mod.ts";
import { createTestApp } from "../lib/testing/mod.ts";
import { poolSyncBody, postPoolSync } from "./pool_data.ts";
import { RUNS, sized } from "./smoke.ts";

const NEW = 10;
const { app } = createTestApp(HOOK_ROUTES);

const sync = (body: string) => postPoolSync(app, body);

for (const grants of sized([5000, 20000], [100])) {
  const body = poolSyncBody(grants, NEW);
  const response = JSON.parse(await sync(body));
  const group = `${grants} grants`;
  const size = `${(body.length / 1e6).toFixed(1)} MB request`;
  Deno.bench(
    `JSON.parse + JSON.stringify only: ${grants} grants (${size})`,
    { group, baseline: true, ...RUNS },
    () => {
      JSON.parse(body);
      JSON.stringify(response);
    },
  );
  Deno.bench(
    `NetworkPool sync over HTTP: /12, ${grants} grants, ${NEW} new (${size})`,
    { group, ...RUNS },
    async () => {
      await sync(body);
    },
  );
}

const V1_GRANTS = sized(5000, 100);
const v1 = poolSyncBody(V1_GRANTS, NEW, "v1");
Deno.bench(
  `NetworkPool sync over HTTP, first format (status.grants) migrated: ${V1_GRANTS} grants`,
  { group: "upgrade", ...RUNS },
  async () => {
    await sync(v1);
  },
);
