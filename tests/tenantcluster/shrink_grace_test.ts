/**
 * `TEST_SHRINK_GRACE_SECONDS` (tests only) reaches the TenantCluster hook: the same request that keeps an
 * allocation unused for 9 min 59 s under the seed's 10 minutes releases it under a 599 s grace; unset, the seed's
 * grace applies. The real controller tier relies on it to see a release in seconds.
 */
import assert from "node:assert/strict";
import { syncTenantCluster } from "../../hooks/tenantcluster/mod.ts";
import { loadConfig } from "../../lib/config/mod.ts";
import { DEFAULT_HOOK_CONFIG } from "../../lib/hook_context/mod.ts";

const DIR = new URL("../fixtures/tenantcluster/sync/elastic-shrink-9m59s-kept/", import.meta.url).pathname;
const request = JSON.parse(Deno.readTextFileSync(`${DIR}request.json`));
const now = new Date(Deno.readTextFileSync(`${DIR}now`).trim());

function run(config: typeof DEFAULT_HOOK_CONFIG) {
  const out = syncTenantCluster(structuredClone(request), { now, config }) as unknown as {
    children: { metadata: { name: string } }[];
    status: { conditions: { type: string; message: string }[] };
  };
  return {
    names: out.children.map((c) => c.metadata.name),
    elastic: out.status.conditions.find((c) => c.type === "ElasticIPAM")!.message,
  };
}

Deno.test("the shrink grace: the seed's 10 minutes unless a test sets TEST_SHRINK_GRACE_SECONDS", () => {
  const seed = run(DEFAULT_HOOK_CONFIG);
  assert.ok(seed.names.includes("web-lb-2"));
  assert.match(seed.elastic, /within the 10-minute grace/);

  const loaded = loadConfig({ TEST_SHRINK_GRACE_SECONDS: "599" });
  assert.ok(loaded.ok);
  const short = run(loaded.config.hook);
  assert.ok(!short.names.includes("web-lb-2"), short.names.join());
  assert.ok(short.names.includes("web-lb"), "the initial allocation is never shrunk");

  const longer = loadConfig({ TEST_SHRINK_GRACE_SECONDS: "601" });
  assert.ok(longer.ok);
  assert.match(run(longer.config.hook).elastic, /within the 601-second grace/);

  const unset = loadConfig({});
  assert.ok(unset.ok);
  assert.equal(unset.config.hook.shrinkGraceSeconds, undefined);
  const bad = loadConfig({ TEST_SHRINK_GRACE_SECONDS: "10m" });
  assert.ok(
    !bad.ok && bad.message === 'TEST_SHRINK_GRACE_SECONDS must be an integer from 0 to 3600, got "10m"',
  );
});
