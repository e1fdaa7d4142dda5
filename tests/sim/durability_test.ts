/**
 * Durable grants (issue #56): whatever status is lost, rolled back or restored, every tenant keeps exactly the
 * addresses it held, none is granted twice, and the invariants hold on the way.
 */
import assert from "node:assert/strict";
import { type DurabilityFault, durabilityRun, partialRestoreRun } from "./simulate.ts";

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

Deno.test("a record restored beside a grant made since is kept but never served", async () => {
  const run = await partialRestoreRun();
  assert.equal(run.violation, undefined, JSON.stringify(run.violation));
  // The new tenant keeps what it was granted; the restored allocations record the same addresses and wait.
  const newcomer = run.held.get("team-t0/c9-lb");
  assert.ok(newcomer, "the new tenant holds its LoadBalancer range");
  const restored = [...run.held].filter(([k, v]) => k.startsWith("team-t1/") && v === newcomer);
  assert.ok(restored.length >= 1, `no restored record shares ${newcomer}: ${JSON.stringify([...run.held])}`);
  for (const [k] of restored) assert.equal(run.phases.get(k), "Pending", `${k} is ${run.phases.get(k)}`);
  assert.equal(run.phases.get("team-t0/c9-lb"), "Allocated");
});
