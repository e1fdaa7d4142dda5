/**
 * Durable grants (issue #56): whatever status is lost, rolled back or restored, every tenant keeps exactly the
 * addresses it held, none is granted twice, and the invariants hold on the way.
 */
import assert from "node:assert/strict";
import { type DurabilityFault, durabilityRun } from "./simulate.ts";

const FAULTS: DurabilityFault[] = [
  "status-emptied-all",
  "status-emptied-each",
  "status-rolled-back-all",
  "restored-with-status",
  "restored-without-status",
];

Deno.test("durable grants: no range moves, none is granted twice", async (t) => {
  for (const fault of FAULTS) {
    await t.step(fault, async () => {
      const run = await durabilityRun(fault);
      assert.equal(run.violation, undefined, JSON.stringify(run.violation));
      assert.ok(run.before.size >= 8, `only ${run.before.size} ranges were granted before the fault`);
      const moved = [...run.before].filter(([k, v]) => run.after.get(k) !== v).map(([k, v]) =>
        `${k}: ${v} -> ${run.after.get(k) ?? "nothing"}`
      );
      assert.deepEqual(moved, [], `${moved.length} of ${run.before.size} ranges moved`);
    });
  }
});
