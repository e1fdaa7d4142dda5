import assert from "node:assert/strict";
import { parseRange } from "../../lib/ipam/mod.ts";
import { GROWN_PREFIX, poolCidr, STATIC_IPS_PER_CLUSTER, workload } from "./workload.ts";

Deno.test("scale workload", async (t) => {
  const size = { clusters: 300, teams: 15, pools: 2 };
  const plan = workload(size);

  await t.step("the same size gives the same objects", () => {
    assert.equal(JSON.stringify(workload(size)), JSON.stringify(plan));
  });

  await t.step("every cluster names an environment of its Team, and most rely on the Team's provider", () => {
    assert.equal(plan.clusters.length, 300);
    for (const c of plan.clusters) {
      const team = plan.teams[c.team]!;
      const env = c.object.metadata.labels["butler.butlerlabs.dev/environment"];
      assert.ok(team.spec.environments.some((e: { name: string }) => e.name === env), c.object.metadata.name);
      assert.equal(c.object.metadata.namespace, `team-${team.metadata.name}`);
    }
    assert.equal(plan.clusters.filter((c) => c.object.spec.providerConfigRef).length, 100);
  });

  await t.step("refusals on purpose: two per capped team, one per other team's prod environment", () => {
    const refused = plan.clusters.filter((c) => c.refused);
    assert.equal(refused.filter((c) => c.refused === "team").length, 3 * 2);
    assert.equal(refused.filter((c) => c.refused === "environment").length, 12);
    for (const team of plan.teams.filter((t) => t.spec.resourceLimits)) {
      const mine = plan.clusters.filter((c) => c.object.metadata.namespace === `team-${team.metadata.name}`);
      assert.equal(mine.filter((c) => !c.refused).length, team.spec.resourceLimits.maxClusters);
    }
  });

  await t.step(
    "pool 0 holds about half of its clusters' addresses, and its grown CIDR holds them all",
    () => {
      const onPool0 = plan.clusters.filter((c) => c.pool === 0 && !c.refused).length;
      const size0 = (cidr: string) => {
        const r = parseRange(cidr);
        assert.ok(r.ok);
        return Number(r.value.end - r.value.start + 1n);
      };
      const initial = size0(poolCidr(0, size));
      const need = onPool0 * STATIC_IPS_PER_CLUSTER;
      assert.ok(initial < need * 0.75 && initial > need * 0.25, `${initial} of ${need}`);
      assert.ok(size0(`10.100.0.0/${GROWN_PREFIX}`) > need);
    },
  );

  await t.step("pools never overlap one another", () => {
    const big = workload({ clusters: 1000, teams: 50, pools: 4 });
    const cidrs = big.pools.map((p) => p.spec.cidr as string);
    assert.deepEqual(cidrs.slice(1), ["10.101.0.0/16", "10.102.0.0/16", "10.103.0.0/16"]);
    assert.match(cidrs[0]!, /^10\.100\.0\.0\/\d+$/);
  });
});
