/**
 * Flux (kstatus) and other tools judge a custom resource by two things in its status: `observedGeneration` (has
 * the controller seen the latest spec?) and a `Ready` condition. Every status each hook writes carries both, for
 * the generation it was given, per kind. (LoadBalancerInventory has no status: it is data, not reconciled.)
 */
import assert from "node:assert/strict";
import { discoverGoldenCases } from "../lib/testing/mod.ts";

const root = new URL("..", import.meta.url).pathname;
const KINDS = ["NetworkPool", "IPAllocation", "ProviderConfig", "Team", "TenantCluster"];

Deno.test("every kind's status follows kstatus: observedGeneration and a Ready condition of that generation", async (t) => {
  const seen = new Map<string, number>();
  for (const c of discoverGoldenCases(`${root}tests/fixtures`)) {
    if (c.hook === "customize" || c.hook === "admission") continue;
    const req = JSON.parse(Deno.readTextFileSync(`${c.dir}/request.json`));
    const res = JSON.parse(Deno.readTextFileSync(`${c.dir}/response.json`));
    const parent = req.parent ?? req.object;
    if (!res.status || !KINDS.includes(parent.kind) || parent.metadata.generation === undefined) continue;
    await t.step(c.dir.replace(`${root}tests/fixtures/`, ""), () => {
      const generation = parent.metadata.generation;
      assert.equal(res.status.observedGeneration, generation, "status.observedGeneration");
      const ready = (res.status.conditions ?? []).find((x: { type: string }) => x.type === "Ready");
      assert.ok(ready, "a Ready condition");
      assert.ok(["True", "False", "Unknown"].includes(ready.status));
      assert.equal(ready.observedGeneration, generation, "Ready.observedGeneration");
      assert.ok(ready.reason && ready.message && ready.lastTransitionTime);
    });
    seen.set(parent.kind, (seen.get(parent.kind) ?? 0) + 1);
  }
  for (const kind of KINDS) {
    assert.ok((seen.get(kind) ?? 0) >= 3, `${kind}: ${seen.get(kind) ?? 0} statuses checked`);
  }
});
