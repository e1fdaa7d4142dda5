/**
 * The scenario the real controller tier replays (tests/e2e/sim_replay.e2e.ts), in the simulator: the writes it
 * marks refused are refused, by the quota webhook, and the end state is the one the scenario builds to.
 */
import assert from "node:assert/strict";
import { SCENARIO, snapshot } from "./scenario.ts";
import { replayScenario } from "./simulate.ts";

Deno.test("scenario: refused where it says, and the end state it builds to", async () => {
  const run = await replayScenario(SCENARIO);
  const refused = SCENARIO.flatMap((a, i) => ("apply" in a && a.refused ? [i] : []));
  assert.deepEqual(run.refusals.flatMap((r, i) => (r ? [i] : [])), refused);
  for (const i of refused) {
    assert.match(run.refusals[i]!, /tenantclusters\.admission\.butler\.butlerlabs\.dev/);
  }
  assert.deepEqual(snapshot(run.after.at(-1)!), [
    "IPAllocation team-sim-a/c1-lb Allocated 2 addresses",
    "IPAllocation team-sim-a/c1-nodes Allocated 5 addresses",
    "IPAllocation team-sim-a/c2-lb Allocated 2 addresses",
    "IPAllocation team-sim-a/c2-nodes Allocated 5 addresses",
    "Namespace team-sim-a",
    "NetworkPool butler-system/sim-pool 14/59 in 4",
    "Team sim-a Ready",
    "TenantCluster team-sim-a/c1 Ready prod holds 10.78.8.11-10.78.8.17",
    // c0's addresses, released when it was deleted, went to c2 (the pool has no cooldown).
    "TenantCluster team-sim-a/c2 Ready dev holds 10.78.8.4-10.78.8.10",
  ]);
});
