/**
 * How long a plan takes: the seeds' examples (goal: under a second) and a folder of 200 TenantClusters, 20 Teams
 * and 5 pools (goal: under 10 s). Figures in docs/performance.md.
 */
import { APPLIED_TOGETHER, examples, plan } from "./helpers.ts";
import { scenario } from "./scenario.ts";
import { RUNS, sized } from "../../bench/smoke.ts";

const seeds = examples(...APPLIED_TOGETHER);
const size = sized({ teams: 20, pools: 5, clusters: 200 }, { teams: 2, pools: 1, clusters: 10 });
const large = scenario(size);

Deno.bench({
  name: `plan: the seeds' examples (${seeds.length} objects)`,
  group: "plan",
  n: 10,
  warmup: 2,
  ...RUNS,
  async fn() {
    const result = await plan(seeds);
    if (!result.converged) throw new Error("the examples do not converge");
  },
});

Deno.bench({
  name: `plan: ${size.clusters} TenantClusters, ${size.teams} Teams, ${size.pools} pools`,
  group: "plan",
  n: 3,
  warmup: 1,
  ...RUNS,
  async fn() {
    const result = await plan(large);
    if (!result.converged || result.failures.length || result.outcomes.some((o) => o.action === "refused")) {
      throw new Error("the large folder does not plan cleanly");
    }
  },
});
