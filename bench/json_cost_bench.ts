/**
 * `npx -y deno@2.9.6 bench --allow-read --allow-env bench/json_cost_bench.ts`
 *
 * What charging a body before its parse costs (issue #46): the scan of `lib/http/json_cost.ts` over the largest
 * request the base serves (a 5,000-grant pool sync with its IPAllocations as Metacontroller sends them, 16 MB),
 * against decoding and parsing it, the work it guards; and over a review of the API server's usual size.
 */
import { poolSyncBody } from "./pool_data.ts";
import { jsonParseCost } from "../lib/http/json_cost.ts";
import { RUNS, sized } from "./smoke.ts";

const pool = new TextEncoder().encode(poolSyncBody(sized(5000, 50), 10, "v2", "as-sent"));
const review = new TextEncoder().encode(
  Deno.readTextFileSync(
    new URL(
      "../tests/fixtures/tenantcluster/admission/payments-dry-run-writes-nothing/request.json",
      import.meta.url,
    ),
  ),
);

const poolLabel = sized("a 16 MB pool sync", "a small pool sync");
for (const [label, body] of [[poolLabel, pool], ["a TenantCluster review", review]] as const) {
  const size = `${(body.length / 1e6).toFixed(body.length > 1e6 ? 1 : 4)} MB`;
  Deno.bench({
    name: `${label} (${size}): decode and JSON.parse`,
    group: label,
    baseline: true,
    ...RUNS,
    fn: () => void JSON.parse(new TextDecoder().decode(body)),
  });
  Deno.bench({
    name: `${label} (${size}): the scan that charges it`,
    group: label,
    ...RUNS,
    fn: () => void jsonParseCost(body, Infinity),
  });
}
