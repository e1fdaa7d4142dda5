import assert from "node:assert/strict";
import { renderText } from "../../lib/plan/mod.ts";
import { examples, outcomeOf, plan } from "./helpers.ts";

Deno.test("plan shows the API server's warnings: a pool's deprecated start/end form", async () => {
  const result = await plan(examples("networkpools/lab-pool.yaml"));
  const pool = outcomeOf(result, "NetworkPool butler-system/lab-pool");
  assert.equal(pool.action, "create");
  assert.deepEqual(pool.warnings, [
    'spec.tenantAllocation.start/end are deprecated: use spec.tenantAllocation.ranges: [{start: "10.40.1.0", end: "10.40.7.254"}]',
  ]);
  assert.match(
    renderText(result),
    /^ {2}\+ NetworkPool butler-system\/lab-pool {2}\(examples\/networkpools\/lab-pool\.yaml#1\)\n {6}Warning: spec\.tenantAllocation\.start\/end are deprecated: use spec\.tenantAllocation\.ranges: \[\{start: "10\.40\.1\.0", end: "10\.40\.7\.254"\}\]$/m,
  );
});
