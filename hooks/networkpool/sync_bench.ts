/**
 * `npx -y deno@2.9.6 bench hooks/networkpool/sync_bench.ts`
 *
 * A NetworkPool sync through the HTTP route (JSON parse, envelope validation, hook, strict response check,
 * JSON serialisation): a /12 whose ledger holds 5,000 grants, with 5,000 IPAllocations related, 10 of them new.
 */
import { HOOK_ROUTES } from "../mod.ts";
import { createTestApp } from "../../lib/testing/mod.ts";
import { poolSyncBody } from "./bench_data.ts";

const GRANTS = 5000;
const NEW = 10;
const body = poolSyncBody(GRANTS, NEW);
const { app } = createTestApp(HOOK_ROUTES);

Deno.bench(
  `NetworkPool sync over HTTP: /12, ${GRANTS} grants, ${NEW} new (${
    (body.length / 1e6).toFixed(1)
  } MB request)`,
  async () => {
    const res = await app.request("/hooks/networkpool/sync", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body,
    });
    if (res.status !== 200) throw new Error(`status ${res.status}`);
    await res.arrayBuffer();
  },
);
